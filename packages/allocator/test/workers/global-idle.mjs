// A worker's idle return on a pool_global heap: it gives back its scopes' spare chunk but never takes a class's
// free list to return slabs (a worker may be terminated half way). Reports the pool's returned-slab count.
import { parentPort, workerData } from 'node:worker_threads';

const { attachHeap } = await import(new URL('../../dist/pool-global.js', import.meta.url).href);
const heap = attachHeap(workerData.handle);
heap.returnIdle();
heap.tick();
heap.tick();
parentPort.postMessage({ returnedSlabs: heap.pool.returnedSlabs });
heap.close();
