// A contract-suite agent: loads @paddock/allocator under whatever export condition its worker was started
// with (so it exercises dist/pool-arena.js or dist/pool-classic.js), then frees what it is sent and
// allocates blocks for the parent to free.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap, BACKEND } from '@paddock/allocator';

const heap = attachHeap(workerData.handle);
parentPort.on('message', (m) => {
  if (m.kind === 'free') {
    let bad = 0;
    for (const [p, tag] of m.blocks) {
      if (heap.u32[p >>> 2] !== tag) bad++;
      heap.free(p);
    }
    heap.flushCache();
    heap.flush();
    parentPort.postMessage({ kind: 'freed', bad, backend: BACKEND });
  } else if (m.kind === 'alloc') {
    const blocks = [];
    for (let i = 0; i < m.count; i++) {
      const p = heap.malloc(m.size);
      heap.u32[p >>> 2] = 0xc0de0000 + i;
      blocks.push([p, 0xc0de0000 + i]);
    }
    parentPort.postMessage({ kind: 'allocated', blocks });
  } else if (m.kind === 'stop') {
    heap.detach();
    parentPort.postMessage({ kind: 'stopped' });
    parentPort.close();
  }
});
parentPort.postMessage({ kind: 'ready', backend: BACKEND });
