/**
 * The departures program's piscina task module: it attaches once per pool worker (when the module loads)
 * and starts the idle tick (it runs when the pool lets the thread come back to its event loop); each task allocates result blocks in the shared heap, writes
 * `tag + i` into block i and touches its last byte, and returns the pointers. It never detaches: the pool
 * terminates its idle workers, and the main thread's heap object, which watches every worker its thread creates,
 * reaps them.
 */
import { workerData } from 'node:worker_threads';
import { attachHeap, type HeapHandle } from '@paddock/allocator';

const heap = attachHeap((workerData as { handle: HeapHandle }).handle);
heap.startIdle();

export default function makeResults({ count, size, tag }: { count: number; size: number; tag: number }): number[] {
  const ptrs = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    const p = heap.malloc(size);
    heap.u32[p >>> 2] = tag + i;
    heap.u8[p + size - 1] = 1;
    ptrs[i] = p;
  }
  return ptrs;
}
