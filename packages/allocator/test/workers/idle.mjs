// Workers for the suspend-and-drain tests. Each job attaches, does its part, and reports.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const { handle, job } = workerData;
const heap = attachHeap(handle);

function touch(p, size) {
  const u8 = heap.u8;
  for (let o = 0; o < size; o += 4096) u8[p + o] = 1;
}

if (job === 'hold-free-idle') {
  // Allocate `bytes` in blocks of `block`, touch them, free them all, then go idle on the event loop.
  const { bytes, block } = workerData;
  parentPort.postMessage({ kind: 'attached', agentId: heap.agentId });
  parentPort.once('message', () => {
    const ps = [];
    for (let n = 0; n < bytes; n += block) {
      const p = heap.malloc(block);
      touch(p, block);
      ps.push(p);
    }
    parentPort.postMessage({ kind: 'held', committed: heap.stats().committedBytes });
    for (const p of ps) heap.free(p);
    heap.startIdle();
    parentPort.postMessage({ kind: 'idle' });
    parentPort.once('message', () => {
      parentPort.postMessage({ kind: 'stats', stats: heap.stats() });
      heap.detach();
      parentPort.close();
    });
  });
} else if (job === 'alloc-and-detach') {
  // Allocate blocks, give them to the parent, then detach and exit: the parent frees them later.
  const ps = [];
  for (let i = 0; i < workerData.count; i++) {
    const p = heap.malloc(workerData.size);
    heap.u32[p >>> 2] = i;
    ps.push(p);
  }
  heap.detach();
  parentPort.postMessage({ kind: 'detached', blocks: ps, agentId: heap.agentId });
} else if (job === 'churn-forever') {
  // Churn until terminated: mallocs, frees of own and of the parent's blocks, some large; never detaches.
  parentPort.postMessage({ kind: 'attached', agentId: heap.agentId });
  const live = [];
  let seed = 12345;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  for (let i = 0; ; i++) {
    if (live.length > 2000 || (live.length > 0 && rand() < 0.45)) {
      const k = Math.floor(rand() * live.length);
      heap.free(live[k]);
      live[k] = live[live.length - 1];
      live.pop();
    } else {
      const r = rand();
      const size = r < 0.9 ? 16 + Math.floor(rand() * 4000) : r < 0.99 ? 64 * 1024 : 3 * 1024 * 1024;
      live.push(heap.malloc(size));
    }
    if (i === 20000) parentPort.postMessage({ kind: 'churning' });
  }
}
