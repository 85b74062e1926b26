/**
 * `pnpm inspect` with no script: the demo workload on one arena heap, streamed to the inspector. Producers in
 * worker threads allocate messages and a consumer frees them; the run pauses, a producer is terminated without
 * warning (the heap's watch reaps it and its owner slot is taken over), a new one joins, every agent goes idle
 * (the memory goes back), and it starts over, until Ctrl-C. Each step is marked on the page's timeline.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { createHeap } from '@paddock/allocator';
import type { Report } from '../scenario/agent.js';
import { Scenario } from '../scenario/scenario.js';
import { serveInspector } from './index.js';

const heap = createHeap({ maxBytes: 1 << 30 });
heap.startIdle();
const inspector = await serveInspector(heap);
const agentUrl = new URL('./workload-agent.js', import.meta.url);
const scenario = new Scenario<MessagePort>({
  channel() {
    const c = new MessageChannel();
    return [c.port1, c.port2];
  },
  spawn(setup, transfer) {
    const worker = new Worker(agentUrl, { workerData: { ...setup, handle: heap.handle }, transferList: transfer });
    heap.watch(worker);
    return {
      post: (m, t = []) => worker.postMessage(m, t as MessagePort[]),
      onReport: (on) => worker.on('message', (r: Report) => on(r)),
      terminate: () => void worker.terminate(),
    };
  },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const act = (label: string | null) => label && inspector.mark(label);
const PLAN: [() => string | null, number][] = [
  [() => scenario.start(), 6000],
  [() => scenario.pause(), 1500],
  [() => scenario.start(), 3000],
  [() => scenario.kill(), 3000],
  [() => scenario.addProducer(), 4000],
  [() => scenario.idle(), 6000],
];
process.once('SIGINT', () => {
  scenario.stop();
  void inspector.close().then(() => process.exit(0));
});
for (;;) {
  for (const [step, ms] of PLAN) {
    act(step());
    await sleep(ms);
  }
}
