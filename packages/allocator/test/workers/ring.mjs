// One agent of the ring test: allocates blocks, fills them with a pattern derived from their id, and sends
// them to the next agent, which checks the pattern and frees them (a cross-agent free).
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const { handle, index, rounds, size, next, prev } = workerData;
const heap = attachHeap(handle);
const words = size >>> 2;
const seen = [];
let bad = 0;

function fill(p, id) {
  const u32 = heap.u32;
  for (let k = 0; k < words; k++) u32[(p >>> 2) + k] = (Math.imul(id, 0x9e3779b1) + k) >>> 0;
}
function intact(p, id) {
  const u32 = heap.u32;
  for (let k = 0; k < words; k++) if (u32[(p >>> 2) + k] !== (Math.imul(id, 0x9e3779b1) + k) >>> 0) return false;
  return true;
}

prev.on('message', ({ p, id }) => {
  if (!intact(p, id)) bad++;
  heap.free(p);
  seen.push(id);
  if (seen.length === rounds) {
    heap.flushCache(); // foreign blocks wait in this agent's cache until sent home
    heap.flush();
    parentPort.postMessage({ kind: 'received', ids: seen, bad, slot: heap.stats().ownerSlot });
  }
});

parentPort.on('message', (m) => {
  if (m === 'drain') {
    heap.drain();
    heap.check();
    const s = heap.stats();
    parentPort.postMessage({ kind: 'drained', liveBytes: s.liveBytes, pending: s.pendingChainObjects });
    prev.close();
    next.close();
  }
});

for (let r = 0; r < rounds; r++) {
  const id = index * rounds + r + 1;
  const p = heap.malloc(size);
  fill(p, id);
  next.postMessage({ p, id });
  if (r % 16 === 15) await new Promise((resolve) => setImmediate(resolve));
}
