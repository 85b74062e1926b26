/**
 * @packageDocumentation
 * `@paddock/pool-classic`: the classic pool backend (layer 4, built on `@paddock/platform` and `@paddock/profile`). It is
 * the allocator the Pony runtime used before its arena allocator, kept faithfully as a baseline that
 * users can choose (`use=pool_classic`) and benchmarks compare against: per-agent free lists per size
 * class bump-allocated from 1 MiB blocks, a global per-class stack of whole 1 MiB lists (ABA-safe), large
 * blocks first-fit from per-agent and global lists sorted by size that never merge neighbours, and
 * nothing returned to the OS except the discarded pages of freed large blocks (none with `retain`).
 *
 * ```ts
 * const space = createAddressSpace({ maxBytes: 1 << 30 });
 * const pool = ClassicPool.create(space);                 // first agent; others: ClassicPool.open(space)
 * const p = pool.malloc(100);                             // a 128-byte class object
 * space.u8[p] = 1;
 * pool.free(p);
 * pool.malloc(100) === p;                                 // LIFO reuse
 * ```
 *
 * Design and buffer layouts: `docs/design/pool-classic.md`.
 */
export { ClassicPool, TICK_MAX_MS, TICK_MIN_MS } from './pool.js';
export type { ClassicClassStats, ClassicPoolOptions, ClassicPoolStats } from './types.js';
export { CHUNK_MIBS, CLASS_COUNT, LOCAL_LARGE_MAX, MAX_CLASS_SIZE, MIN_OBJECT, PAGE, POOL_ROOT, classIndex, classSize, listCapacity } from './layout.js';
