// The tinypool task module: as pool-task.mjs (piscina), but tinypool hands the pool's `workerData` option to its
// workers as the second element of an array.
import { workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';
import { makeResults } from './pool-results.mjs';

const heap = workerData[1].handle === null ? null : attachHeap(workerData[1].handle); // null: the plain run of scripts/pool-memory.mjs
heap?.startIdle();

export default (task) => makeResults(heap, task);
