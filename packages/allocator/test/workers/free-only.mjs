// An agent that only frees: it takes blocks from the main thread, frees them, flushes and reports.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const { handle, blocks } = workerData;
const heap = attachHeap(handle);
for (const p of blocks) heap.free(p);
const cached = heap.stats().cacheBytes > 0 ? heap.stats().cacheBlocks.reduce((a, b) => a + b, 0) : 0;
heap.flushCache();
const pendingBeforeFlush = heap.stats().pendingChainObjects;
heap.flush();
parentPort.postMessage({ slot: heap.stats().ownerSlot, cached, pendingBeforeFlush, pendingAfter: heap.stats().pendingChainObjects });
