/**
 * `paddock-classic`: Paddock's classic pool (pool_classic, `dist/pool-classic.js`, the old design kept as a
 * baseline): the pair and the churn beside the arena, and the programs.
 */
import { poolPeer } from './paddock-heap.js';
import type { PeerDescriptor } from './peer.js';

export const paddockClassic: PeerDescriptor = poolPeer('paddock-classic', 'pool_classic');
