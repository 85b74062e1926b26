// A worker thread of the demo workload: the scenario agent (a producer or the consumer) over the heap and the
// channel in `workerData`, its commands on the parent port.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';
import { startAgent, type Link, type Setup } from '../scenario/agent.js';

const control: Link = { post: (m) => parentPort!.postMessage(m), listen: (on) => parentPort!.on('message', on) };

startAgent(workerData as Setup, control, attachHeap);
