// An agent for the snapshot tests: allocates the blocks it is told to hold and reports them with its owner slot;
// on 'churn' it allocates and frees blocks of the same sizes in a loop (keeping what it holds) until told to stop.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const heap = attachHeap(workerData.handle);
const flag = new Int32Array(workerData.flag);
const held = [];
for (const [size, count] of workerData.hold) for (let i = 0; i < count; i++) held.push(heap.malloc(size));
parentPort.postMessage({ kind: 'holding', slot: heap.stats().ownerSlot, agentId: heap.agentId, blocks: held.length });
parentPort.on('message', (m) => {
  if (m === 'churn') {
    let rounds = 0;
    const window = [];
    while (Atomics.load(flag, 0) === 0) {
      for (const [size] of workerData.hold) window.push(heap.malloc(size));
      if (window.length > 64) for (const p of window.splice(0, 32)) heap.free(p);
      rounds++;
    }
    for (const p of window) heap.free(p);
    heap.flushCache();
    parentPort.postMessage({ kind: 'churned', rounds });
  }
});
