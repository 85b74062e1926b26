/**
 * An agent of the `snapshot-load` workload, in a worker: attaches to the heap (the built
 * `packages/allocator/dist`, loaded from the URL the main thread passes) and churns until told to stop: frees a
 * random block of its window of live blocks and mallocs a random 16..4096 B into its slot, adding 256 to its
 * counter every 256 operations, so the main thread reads the agents' throughput while it takes snapshots.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { between, mulberry32 } from '../draws.js';
import type { AttachHeap } from '../peers/paddock-heap.js';
import { L_COUNTERS, L_STOP, type SnapshotLoadWorkerData } from './snapshot-protocol.js';

const data = workerData as SnapshotLoadWorkerData;
const { attachHeap } = (await import(data.paddockUrl)) as { attachHeap: AttachHeap };
const heap = attachHeap(data.handle);
const ctl = new Int32Array(data.control);
const next = mulberry32(data.seed);
const live = new Int32Array(data.window);
for (let i = 0; i < live.length; i++) live[i] = heap.malloc(between(next, 16, 4096));
parentPort!.postMessage('ready');
while (Atomics.load(ctl, L_STOP) === 0) {
  for (let k = 0; k < 256; k++) {
    const i = next() % live.length;
    heap.free(live[i]);
    live[i] = heap.malloc(between(next, 16, 4096));
  }
  Atomics.add(ctl, L_COUNTERS + data.index, 256);
}
for (let i = 0; i < live.length; i++) heap.free(live[i]);
heap.detach();
parentPort!.postMessage('done');
