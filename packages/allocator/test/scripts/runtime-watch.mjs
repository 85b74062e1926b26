// Checks, in whatever runtime runs it (Node, Bun, Deno), that a heap object reaps a worker its thread created and
// terminated with no watch call, and that the thread keeps one `worker` listener. Prints one line of JSON; exit 1
// on a failure. From packages/allocator: `node test/scripts/runtime-watch.mjs`, `bun test/scripts/runtime-watch.mjs`,
// `deno run -A test/scripts/runtime-watch.mjs`.
import { Worker } from 'node:worker_threads';
import { createHeap } from '@paddock/allocator';

const heap = createHeap({ maxBytes: 1 << 28 });
const second = createHeap({ maxBytes: 1 << 28 });
const listeners = process.listenerCount('worker');
const w = new Worker(new URL('../workers/nested-child.mjs', import.meta.url), { workerData: { handle: heap.handle } });
const thread = w.threadId + 1;
const { agentId } = await new Promise((r) => w.once('message', r));
let refused = null;
try {
  heap.reap(agentId);
} catch (err) {
  refused = err.code ?? err.name;
}
const before = heap.engine.agentsOnThread(thread).length;
const exited = new Promise((r) => w.once('exit', r));
await w.terminate();
await exited;
const after = heap.engine.agentsOnThread(thread).length;
heap.check();
second.close();
heap.close();
const out = { runtime: typeof Bun !== 'undefined' ? `bun ${Bun.version}` : typeof Deno !== 'undefined' ? `deno ${Deno.version.deno}` : `node ${process.versions.node}`, listeners, refusedWhileAlive: refused, agentsBefore: before, agentsAfterExit: after, listenersAfterClose: process.listenerCount('worker') };
console.log(JSON.stringify(out));
process.exit(listeners === 1 && refused === 'AGENT_ALIVE' && before === 1 && after === 0 && out.listenersAfterClose === 0 ? 0 : 1);
