/**
 * @packageDocumentation
 * `@paddock/arena`: the arena layer. An agent carves arenas (8 MiB, or 2 MiB for small heaps) from the
 * shared regions and cuts them into 16 KiB units; a slab of one size class (32 B to 1 MiB) takes one
 * unit, or 2-64 units for the block classes, and a large object (up to the whole arena) a run of
 * units of its own. The owner allocates from its current slab (free list, then
 * bump), refills from its inbox, its partial slabs, a new slab, a new arena. Another agent never touches
 * an owner's lists: it batches its frees per owner and pushes each batch onto the owner's inbox with one
 * CAS; the owner checks every object of a batch before it takes it back. A consumer whose thread cache is full
 * hands batches of checked blocks to the heap's exchange instead, where an agent short of the class takes
 * them without a trip home. Nothing sits in front of an
 * object: `p & ~(arenaBytes - 1)` finds its arena, and the arena's header and records
 * (in its region's slot 0, at an address computed from the arena's) find the rest.
 *
 * Whatever another agent must reach of this one (its cache, its pending chains, its stash, what it is in the
 * middle of) lives in its agent area in the buffer, so a detached agent's arenas are adopted and a dead
 * one's reaped, with half-updated slabs quarantined rather than trusted.
 *
 * See docs/design/arena.md.
 */
export * from './agent-area.js';
export { ArenaHeap } from './arena-heap.js';
export { popCached, pushCached } from './cache-stack.js';
export type { ArenaStats, ClassStats } from './check.js';
export { EXCHANGE_BATCH, EXCHANGE_CLASSES, EXCHANGE_SLOTS, EXCHANGE_WORD, XA_BASE, XA_SLOT, X_COUNT, X_EMPTY, X_ENTRIES, X_FULL, X_GIVING, X_TAKING, createExchange, exchangeHeld, exchangeSlot } from './exchange.js';
export { freeableClass } from './free-check.js';
export { SLOT_ADOPTED, SLOT_DETACHED, SLOT_LIVE, SLOT_ORPHANED } from './ownership.js';
export type { ReapReport } from './reap.js';
export * from './snapshot.js';
export { SWEEP_DELAY_MS, type SpanRetention, unparkRun } from './release.js';
export { CHAIN_FLUSH, CHAIN_MAP_INITIAL } from './remote-chains.js';
export { CLASS_COUNT, LARGE_ROUND, MAX_CLASS_SIZE, MIN_OBJECT, classIndex, classSize, largeBytes, spanOf } from './size-class.js';
export {
  ARENA_MAGIC,
  B_LENGTH,
  B_NEXT,
  FLAG_QUARANTINE,
  FREED_MARK,
  IN_MAPPING,
  NOT_FREEABLE,
  KIND_ARENA,
  KIND_MAPPING,
  LARGE_CLASS,
  MAPPING_MAGIC,
  META_CHUNKS,
  META_HEADER_BYTES,
  META_OFFSET,
  RECORD_BYTES,
  UNIT,
  UNIT_SHIFT,
  arenaMeta,
  headerIndex,
  metaCommitBytes,
  recordIndex,
} from './layout.js';
