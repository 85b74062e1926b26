// An agent that dies in the middle of opening a region: just before the CAS that would put the new
// region on the list, the worker exits (as a terminate or a crash would stop it there).
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const heap = attachHeap(workerData.handle);
const regions = heap.engine.regions;
const listHead = (regions.headerAddress >>> 2) + 7; // the heap header's region-list head word
const cas = Atomics.compareExchange;
Atomics.compareExchange = function (ta, index, expected, value) {
  if (index === listHead && ta.buffer === heap.space.buffer) {
    parentPort.postMessage({ kind: 'dying', agentId: heap.agentId, region: value >>> 0 });
    process.exit(0);
  }
  return cas.call(Atomics, ta, index, expected, value);
};
parentPort.postMessage({ kind: 'ready', agentId: heap.agentId });
heap.malloc(64); // needs an arena; every slot of the only region is taken: opens a region, dies
