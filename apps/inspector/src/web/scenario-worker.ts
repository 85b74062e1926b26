// A module Web Worker of the in-page scenario: the scenario agent (a producer or the consumer) over the page's
// heap, its messages on the worker's own port and on MessagePorts.
import { attachHeap } from '@paddock/allocator';
import { startAgent, type Link, type Setup } from '../scenario/agent.js';

const scope = self as unknown as { postMessage(m: unknown): void; addEventListener(t: 'message', on: (e: MessageEvent) => void): void; onmessage: ((e: MessageEvent) => void) | null };

function portLink(port: MessagePort): Link {
  return {
    post: (m) => port.postMessage(m),
    listen: (on) => {
      port.addEventListener('message', (e) => on(e.data));
      port.start();
    },
  };
}

const control: Link = { post: (m) => scope.postMessage(m), listen: (on) => scope.addEventListener('message', (e) => on(e.data)) };

scope.onmessage = (e) => {
  scope.onmessage = null;
  startAgent(e.data as Setup<MessagePort>, control, portLink, attachHeap);
};
