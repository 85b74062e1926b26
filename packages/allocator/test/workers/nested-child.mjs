// The child of nested-parent.mjs: attaches, holds 64 blocks, says so, and waits to be terminated.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const heap = attachHeap(workerData.handle);
for (let i = 0; i < 64; i++) heap.malloc(256);
parentPort.postMessage({ agentId: heap.agentId });
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
