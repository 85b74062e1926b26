// The task the pool tests run, whichever pool runs it: allocates `count` blocks of `size` bytes, writes `tag + i`
// into block i, touches its last byte, and returns the pointers.
export function makeResults(heap, { count, size, tag }) {
  const ptrs = new Array(count);
  for (let i = 0; i < count; i++) {
    const p = heap.malloc(size);
    heap.u32[p >>> 2] = tag + i;
    heap.u8[p + size - 1] = 1;
    ptrs[i] = p;
  }
  return ptrs;
}
