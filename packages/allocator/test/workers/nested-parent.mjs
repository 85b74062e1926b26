// A worker that creates a worker of its own: it attaches (its heap object watches the workers its thread creates),
// starts a child that attaches and holds 64 blocks, reports the child's agent and thread, and on 'kill' terminates
// the child and reports what its own heap object then finds of the child's agent.
import { Worker, parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const heap = attachHeap(workerData.handle);
const child = new Worker(new URL('./nested-child.mjs', import.meta.url), { workerData: { handle: workerData.handle } });
const thread = child.threadId + 1;
child.once('message', ({ agentId }) => parentPort.postMessage({ kind: 'child', agentId, thread }));
parentPort.on('message', async (m) => {
  if (m !== 'kill') return;
  const before = heap.engine.agentsOnThread(thread).length;
  await child.terminate();
  parentPort.postMessage({ kind: 'killed', before, after: heap.engine.agentsOnThread(thread).length });
});
