/**
 * `paddock-global`: Paddock's global pool (pool_global, `dist/pool-global.js`: lock-free, no agent-local
 * state, every block through a tagged Treiber list or a carve): the pair and the churn beside the arena and
 * native mimalloc, and the programs. The `scopes` group prices it under every allocation of its lanes.
 */
import { poolPeer } from './paddock-heap.js';
import type { PeerDescriptor } from './peer.js';

export const paddockGlobal: PeerDescriptor = poolPeer('paddock-global', 'pool_global');
