// The Web Worker of the browser wait test: allocates blocks for the page to free, frees the page's blocks and
// rings its bell, then blocks in `heap.wait` (a worker may) and lets its idle tick return its cache.
import { attachHeap } from '../../dist/index.js';

let heap;
let bell;
self.onmessage = async (e) => {
  const m = e.data;
  if (m.handle) {
    heap = attachHeap(m.handle);
    bell = new Int32Array(m.bell);
    const blocks = Array.from({ length: 4010 }, () => heap.malloc(256));
    self.postMessage({ blocks });
  } else if (m.free) {
    for (const p of m.free) heap.free(p);
    heap.flushCache();
    heap.flush();
    Atomics.store(bell, 0, 1);
    Atomics.notify(bell, 0);
  } else if (m.idle) {
    const waited = heap.wait(bell, 1, 0, 20); // blocks 20 ms: allowed in a worker
    for (let i = 0; i < 200; i++) heap.free(heap.malloc(64));
    const cachedBeforeIdle = heap.stats().cacheBytes;
    heap.startIdle();
    const deadline = performance.now() + 5000;
    while (heap.stats().cacheBytes !== 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    self.postMessage({ waited, cachedBeforeIdle, cachedAfterIdle: heap.stats().cacheBytes, liveBytes: heap.stats().liveBytes });
  }
};
