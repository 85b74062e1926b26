// A Web Worker agent for the browser lifecycle test: attaches, holds blocks, reports them once its agent lock
// is held, and then either waits to be terminated or closes itself when told (never closing its heap).
import { attachHeap } from '../../dist/index.js';

const G_LOCK = 47; // the agent-area word that says the agent holds its lock

self.onmessage = (e) => {
  const { handle, count } = e.data;
  const heap = attachHeap(handle);
  const blocks = [];
  for (let i = 0; i < count; i++) {
    const p = heap.malloc(256);
    heap.u32[p >>> 2] = i;
    blocks.push(p);
  }
  const lockWord = (heap.engine.agentArea >>> 2) + G_LOCK;
  const report = () => {
    if (Atomics.load(heap.space.i32, lockWord) !== 1) return setTimeout(report, 5);
    self.onmessage = (m) => {
      if (m.data === 'close') self.close();
    };
    self.postMessage({ agentId: heap.agentId, slot: heap.stats().ownerSlot, blocks });
  };
  report();
};
