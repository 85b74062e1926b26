// The tinypool task module: as pool-task.mjs (piscina), but tinypool hands the pool's `workerData` option to its
// workers as the second element of an array.
import { workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';
import { makeResults } from './pool-results.mjs';

const heap = attachHeap(workerData[1].handle);
heap.startIdle();

export default (task) => makeResults(heap, task);
