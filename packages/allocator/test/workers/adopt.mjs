// Agents for the concurrent adoption test. A leaver allocates blocks, hands them to the parent, detaches
// and exits. An adopter waits at a gate with the others, then ticks until the parent says stop.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const { handle, role, gate } = workerData;
const heap = attachHeap(handle);

if (role === 'leaver') {
  const blocks = [];
  for (let i = 0; i < workerData.count; i++) {
    const p = heap.malloc(64);
    heap.u32[p >>> 2] = workerData.tag + i;
    blocks.push(p);
  }
  const slot = heap.stats().ownerSlot;
  heap.detach();
  parentPort.postMessage({ kind: 'left', slot, blocks });
} else {
  const g = new Int32Array(gate);
  Atomics.add(g, 1, 1);
  while (Atomics.load(g, 0) === 0) Atomics.wait(g, 0, 0, 5);
  // Tick as fast as possible while the others do the same, until told to stop.
  while (Atomics.load(g, 2) === 0) heap.tick();
  heap.tick();
  heap.check();
  const s = heap.stats();
  // No detach here: an adopter that detached first would (rightly) be adopted by a slower one. So it stays
  // until terminated (ending by itself would detach it too).
  parentPort.postMessage({ kind: 'adopted', slots: s.adoptedSlots, liveBytes: s.liveBytes, arenas: s.arenas });
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}
