/**
 * `paddock`: Paddock's arena backend (pool_arena, `dist/pool-arena.js`), in every workload. The name stays
 * `paddock` (not `paddock-arena`) so the targets and older JSON keep their keys.
 */
import { makePeer } from '../runner.js';
import { loadPaddock, PADDOCK_BIG_BYTES, PADDOCK_BYTES, PaddockAdapter, PaddockMem } from './paddock-heap.js';
import type { PeerDescriptor, Ready } from './peer.js';

export const paddock: PeerDescriptor = {
  name: 'paddock',
  offers: ['pair-churn', 'sweep', 'memory', 'cross', 'one-agent', 'agents'],
  async load(name) {
    const load = await loadPaddock('pool_arena');
    if (!load.ok) return { skip: load.reason };
    return {
      timed: makePeer(new PaddockAdapter(load.createHeap, name), PADDOCK_BYTES),
      sweepMaxBytes: PADDOCK_BIG_BYTES,
      adapter: () => new PaddockAdapter(load.createHeap, name),
      memory: (rungs) => rungs.map((rung) => new PaddockMem(load.createHeap, rung)),
      heap: load,
    };
  },
};

/** The arena's largeMax in its 2 GiB heap (the size sweep's and the realloc chain's tiers); null when it does not run. */
export function arenaLargeMax(ready: Ready | null): number | null {
  if (ready?.heap === undefined) return null;
  try {
    return ready.heap.createHeap({ maxBytes: PADDOCK_BIG_BYTES }).largeMax;
  } catch {
    return null;
  }
}
