// Opens the channel (taking an agent record and arming its presence), says so, then blocks until terminated: the
// recovery test forges in its record the state a step killed at a chosen instruction would have left.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';
import { openChannel } from '@paddock/channel';

const heap = attachHeap(workerData.heap);
openChannel(heap, workerData.channel);
parentPort.postMessage('open');
setTimeout(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0), 10); // after its presence wait is armed
