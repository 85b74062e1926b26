// A worker thread of the demo workload: the scenario agent (a producer or the consumer) over the heap in
// `workerData`, its messages on the parent port and on MessagePorts.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';
import { startAgent, type Link, type Setup } from '../scenario/agent.js';

const portLink = (port: MessagePort): Link => ({ post: (m) => port.postMessage(m), listen: (on) => port.on('message', on) });

startAgent(workerData as Setup<MessagePort>, portLink(parentPort!), portLink, attachHeap);
