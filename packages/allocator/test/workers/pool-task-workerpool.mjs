// The workerpool worker script (thread workers): as pool-task.mjs (piscina), but workerpool passes
// `workerThreadOpts.workerData` and takes the task functions from `workerpool.worker`.
import { workerData } from 'node:worker_threads';
import workerpool from 'workerpool';
import { attachHeap } from '@paddock/allocator';
import { makeResults } from './pool-results.mjs';

const heap = workerData.handle === null ? null : attachHeap(workerData.handle); // null: the plain run of scripts/pool-memory.mjs
heap?.startIdle();

workerpool.worker({ makeResults: (task) => makeResults(heap, task) });
