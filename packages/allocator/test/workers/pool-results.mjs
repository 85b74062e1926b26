// The task the pool tests run, whichever pool runs it: allocates `count` blocks of `size` bytes in the heap, writes
// `tag + i` into block i, touches its last byte, and returns the pointers. With no heap (the plain run of
// scripts/pool-memory.mjs), the same with ArrayBuffers, returned as they are. With `scratch`, first that many
// blocks of 32 B to 16 KiB, allocated and freed by the task itself (what a task's own temporary memory leaves in
// its thread's cache).
export function makeResults(heap, { count, size, tag, scratch = 0 }) {
  for (let i = 0; i < scratch; i++) {
    const bytes = 32 << (i % 10);
    if (heap === null) new Uint8Array(bytes)[bytes - 1] = 1;
    else heap.free(heap.malloc(bytes));
  }
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    if (heap === null) {
      const b = new ArrayBuffer(size);
      new Uint32Array(b)[0] = tag + i;
      new Uint8Array(b)[size - 1] = 1;
      out[i] = b;
      continue;
    }
    const p = heap.malloc(size);
    heap.u32[p >>> 2] = tag + i;
    heap.u8[p + size - 1] = 1;
    out[i] = p;
  }
  return out;
}
