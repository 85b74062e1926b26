// The in-page source: a heap created in this page and the scenario on module Web Workers, each watched by the
// page (`heap.watch`: a terminated one is reaped through its agent lock, its owner slot taken over by the
// page's agent, which ticks). Snapshots are taken on the page's agent. Nothing but the page runs: any static
// server with the isolation headers serves it.
import { createHeap, type Heap } from '@paddock/allocator';
import type { Report } from '../scenario/agent.js';
import { Scenario } from '../scenario/scenario.js';

export function pageScenario(maxBytes = 512 << 20): { heap: Heap; scenario: Scenario<MessagePort> } {
  const heap = createHeap({ maxBytes });
  heap.startIdle();
  const scenario = new Scenario<MessagePort>({
    channel() {
      const c = new MessageChannel();
      return [c.port1, c.port2];
    },
    spawn(setup, transfer) {
      const worker = new Worker(new URL('./scenario-worker.ts', import.meta.url), { type: 'module', name: setup.role });
      worker.postMessage({ ...setup, handle: heap.handle }, transfer);
      heap.watch(worker);
      return {
        post: (m, t = []) => worker.postMessage(m, t as Transferable[]),
        onReport: (on) => worker.addEventListener('message', (e: MessageEvent<Report>) => on(e.data)),
        terminate: () => worker.terminate(),
      };
    },
  });
  return { heap, scenario };
}
