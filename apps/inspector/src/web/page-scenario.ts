// The in-page source: a heap created in this page, one channel in it, and the scenario on module Web Workers
// (the heap's and the channel's handles posted once to each; the messages go through the channel), each watched by the
// page (`heap.watch`: a terminated one is reaped through its agent lock, its owner slot taken over by the
// page's agent, which ticks). Snapshots are taken on the page's agent. Nothing but the page runs: any static
// server with the isolation headers serves it.
import { createHeap, type Heap } from '@paddock/allocator';
import { createChannel } from '@paddock/channel';
import { SCENARIO_CAPACITY, type Report } from '../scenario/agent.js';
import { Scenario } from '../scenario/scenario.js';

export function pageScenario(maxBytes = 512 << 20): { heap: Heap; scenario: Scenario } {
  const heap = createHeap({ maxBytes });
  heap.startIdle();
  const channel = createChannel(heap, { capacity: SCENARIO_CAPACITY });
  const scenario = new Scenario({
    spawn(setup) {
      const worker = new Worker(new URL('./scenario-worker.ts', import.meta.url), { type: 'module', name: setup.role });
      worker.postMessage({ ...setup, handle: heap.handle, channel: channel.handle });
      heap.watch(worker);
      return {
        post: (m) => worker.postMessage(m),
        onReport: (on) => worker.addEventListener('message', (e: MessageEvent<Report>) => on(e.data)),
        terminate: () => worker.terminate(),
      };
    },
  });
  return { heap, scenario };
}
