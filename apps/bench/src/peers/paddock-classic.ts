/**
 * `paddock-classic`: Paddock's classic pool (pool_classic, `dist/pool-classic.js`, the old design kept as a
 * baseline): the pair and the churn beside the arena, and the programs.
 */
import { makePeer } from '../runner.js';
import { loadPaddock, PADDOCK_BYTES, PaddockAdapter } from './paddock-heap.js';
import type { PeerDescriptor } from './peer.js';

export const paddockClassic: PeerDescriptor = {
  name: 'paddock-classic',
  offers: ['pair-churn', 'one-agent', 'agents'],
  async load(name) {
    const load = await loadPaddock('pool_classic');
    if (!load.ok) return { skip: load.reason };
    return {
      timed: makePeer(new PaddockAdapter(load.createHeap, name), PADDOCK_BYTES),
      adapter: () => new PaddockAdapter(load.createHeap, name),
      heap: load,
    };
  },
};
