// A piscina task module, written the way the worker-pools guide says: it attaches once per worker thread (when the
// module loads) and starts the idle tick, and its tasks return pointers to blocks allocated in the shared heap.
// It never detaches: the pool terminates its workers, and the heap object of the thread that created them (the
// main thread's, which watches every worker its thread creates) reaps them.
import { workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';
import { makeResults } from './pool-results.mjs';

const heap = workerData.handle === null ? null : attachHeap(workerData.handle); // null: the plain run of scripts/pool-memory.mjs
heap?.startIdle();

export default (task) => makeResults(heap, task);
