/**
 * `js`: plain JavaScript, the baseline of the workloads where blocks are handed between agents or a
 * program has a plain-JS form: objects, typed arrays and ArrayBuffers (sent with `postMessage` and a
 * transfer list); the garbage collector is the free.
 */
import type { PeerDescriptor } from './peer.js';

export const js: PeerDescriptor = {
  name: 'js',
  offers: ['cross', 'one-agent', 'agents'],
  load: () => ({ plainJs: true }),
};
