/**
 * `pnpm inspect` with no script: the demo workload on one arena heap, streamed to the inspector. Producers in
 * worker threads allocate messages and hand them through one channel to a consumer, which frees them; the run pauses, a producer is terminated without
 * warning (the heap's watch reaps it and its owner slot is taken over), a new one joins, every agent goes idle
 * (the memory goes back), and it starts over, until Ctrl-C. Each step is marked on the page's timeline.
 */
import { Worker } from 'node:worker_threads';
import { createHeap } from '@paddock/allocator';
import { createChannel } from '@paddock/channel';
import { SCENARIO_CAPACITY, type Report } from '../scenario/agent.js';
import { Scenario } from '../scenario/scenario.js';
import { serveInspector } from './index.js';

const heap = createHeap({ maxBytes: 1 << 30 });
heap.startIdle();
const inspector = await serveInspector(heap);
const agentUrl = new URL('./workload-agent.js', import.meta.url);
// The messages go through one channel in the heap; each worker gets its handle once, with the heap's.
const channel = createChannel(heap, { capacity: SCENARIO_CAPACITY });
const scenario = new Scenario({
  spawn(setup) {
    const worker = new Worker(agentUrl, { workerData: { ...setup, handle: heap.handle, channel: channel.handle } });
    heap.watch(worker);
    return {
      post: (m) => worker.postMessage(m),
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
