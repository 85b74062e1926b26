// A piscina task module, written the way the worker-pools guide says: it attaches once per worker thread
// (when the module loads), lets the idle tick run between tasks (the pool is made with `atomics: 'disabled'`,
// so an idle worker waits on its event loop, where the tick runs), and its tasks return pointers to blocks
// allocated in the shared heap. It never detaches: the pool terminates idle workers, and the parent's
// `watch` reaps them.
import { workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const heap = attachHeap(workerData.handle);
heap.startIdle();

/** Allocates `count` blocks of `size` bytes, writes `tag + i` into block i, and returns their pointers. */
export default function makeResults({ count, size, tag }) {
  const ptrs = new Array(count);
  for (let i = 0; i < count; i++) {
    const p = heap.malloc(size);
    heap.u32[p >>> 2] = tag + i;
    ptrs[i] = p;
  }
  return ptrs;
}
