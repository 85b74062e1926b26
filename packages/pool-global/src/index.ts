/**
 * @packageDocumentation
 * `@paddock/pool-global`: the global pool backend (layer 4, built on `@paddock/platform` and
 * `@paddock/profile`). Power-of-two size classes from 32 B to 1 MiB carve blocks from 1 MiB slabs; freed
 * blocks go back through one lock-free free list per class whose head carries a generation tag against
 * ABA; requests above 1 MiB are mapped and unmapped on their own. No locks and no agent-local state: an
 * agent terminated at any instruction strands nothing but the blocks it held.
 *
 * ```ts
 * const space = createAddressSpace({ maxBytes: 1 << 30 });
 * const pool = GlobalPool.create(space);            // first agent; others: GlobalPool.open(space)
 * const p = pool.malloc(100);                       // a 128-byte class block
 * pool.free(p);
 * pool.malloc(100) === p;                           // LIFO reuse, from any agent
 * ```
 *
 * Design: `docs/design/pool-global.md`.
 */
export { GlobalPool } from './pool.js';
export { FreeLists } from './free-lists.js';
export type { GlobalPoolCounts } from './check.js';
export { LARGE_HEADER } from './large.js';
export { CLASS_COUNT, HEAD_BYTES, MAX_CLASS_SIZE, MIN_BLOCK, POOL_ROOT, SLAB_BYTES, classIndex, classSize } from './layout.js';
