// An agent that dies in the middle of giving an arena back: its arena's magic is cleared, and just before the
// region takes the arena back, the worker blocks until its parent terminates it (it stops right there, running no
// more code). It fills one arena with blocks, frees them, and leaves the heap, which releases its empty arenas.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const heap = attachHeap(workerData.handle);
const regions = heap.engine.regions;
const release = regions.releaseArena;
regions.releaseArena = function (arena) {
  parentPort.postMessage({ kind: 'dying', agentId: heap.agentId, arena });
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // until terminated
  return release.call(this, arena);
};
const blocks = [];
for (let i = 0; i < 2000; i++) blocks.push(heap.malloc(256));
for (const p of blocks) heap.free(p);
heap.close();
