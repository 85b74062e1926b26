// An agent that dies in the middle of opening a region: just before the CAS that would put the new
// region on the list, the worker blocks until its parent terminates it (it stops right there, running no
// more code: a normal exit would detach).
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const heap = attachHeap(workerData.handle);
const regions = heap.engine.regions;
const listHead = (regions.headerAddress >>> 2) + 7; // the heap header's region-list head word
const cas = Atomics.compareExchange;
Atomics.compareExchange = function (ta, index, expected, value) {
  if (index === listHead && ta.buffer === heap.space.buffer) {
    parentPort.postMessage({ kind: 'dying', agentId: heap.agentId, region: value >>> 0 });
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // until terminated
  }
  return cas.call(Atomics, ta, index, expected, value);
};
parentPort.postMessage({ kind: 'ready', agentId: heap.agentId });
heap.malloc(64); // needs an arena; every slot of the only region is taken: opens a region, dies
