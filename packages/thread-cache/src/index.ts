/**
 * @packageDocumentation
 * `@paddock/thread-cache`: one agent's cache of freed small blocks. Each size class has a stack whose
 * depth the profile sets (`min(512, max(budget >> (5 + class), floor))`). A freed small block goes onto
 * its class's stack whatever agent owns it, and the next allocation of that class takes it back, so a
 * block freed on an agent that did not allocate it is re-served there without crossing agents at all.
 * The cache never evicts to make room: a free that finds the stack full hands the stack's top 32 blocks to the
 * heap's exchange (arena layer), where an agent short of the class takes them, or, when the exchange has no
 * room, goes home (to its slab, or its owner's chain). Blocks leave the cache
 * that way, on the idle return, on `flushCache`, or on detach.
 *
 * Blocks in the cache still count as live in their slabs and carry the freed mark, so a second free of a
 * cached block is caught. See docs/design/thread-cache.md.
 */
export { ThreadCache, type CacheStats } from './thread-cache.js';
// The stacks' push and pop live with the agent area's layout in the arena layer (whose drain fills them too).
export { popCached, pushCached } from '@paddock/arena';
