// A module Web Worker of the in-page scenario: the scenario agent (a producer or the consumer) over the page's
// heap and channel, its commands on the worker's own port.
import { attachHeap } from '@paddock/allocator';
import { startAgent, type Link, type Setup } from '../scenario/agent.js';

const scope = self as unknown as { postMessage(m: unknown): void; addEventListener(t: 'message', on: (e: MessageEvent) => void): void; onmessage: ((e: MessageEvent) => void) | null };

const control: Link = { post: (m) => scope.postMessage(m), listen: (on) => scope.addEventListener('message', (e) => on(e.data)) };

scope.onmessage = (e) => {
  scope.onmessage = null;
  startAgent(e.data as Setup, control, attachHeap);
};
