/**
 * The owner's side of cross-agent frees: it takes its inbox with one exchange and splices every run back onto
 * its slab's free list, after checking it (see docs/design/arena.md, "Drain and its checks"). The drain in
 * progress is named in the agent area, so that a reaper finishes it if the agent is stopped half way.
 */
import { HeapError, formatAddress } from '@paddock/platform';
import { CACHE_STACKS_OFFSET, CACHE_STRIDE, DRAIN_OFFSET, D_CUR, D_RUN, G_CACHE_COUNT, G_CACHE_DEPTH } from './agent-layout.js';
import type { ArenaHeap } from './arena-heap.js';
import { isLiveObject } from './free-check.js';
import {
  A_KIND_OWNER,
  A_MAGIC,
  ARENA_MAGIC,
  CLASS_MASK,
  CLASS_SHIFT,
  FLAG_CURRENT,
  FLAG_QUARANTINE,
  FREED_MARK,
  HEADER_UNITS,
  KIND_ARENA,
  LARGE_CLASS,
  R_BUMP,
  R_FREE,
  R_INFO,
  R_LIVE,
  R_SPAN,
  STATE_HEAD,
  STATE_MASK,
  UNIT_SHIFT,
  recordIndex,
} from './layout.js';
import { objectSize, slabFreed } from './slab.js';

/**
 * Takes the agent's inbox, and those of the slots it took over, and reclaims every run in them. With `cacheClass`
 * (the allocation that found its slab full), the runs of that class go onto its thread-cache stack while it has
 * room, for the allocations that follow; every other run goes back to its slab.
 * Returns the objects reclaimed.
 * @throws HeapError CORRUPTION for a run that fails a check; runs before it are already reclaimed.
 */
export function drain(h: ArenaHeap, cacheClass = -1): number {
  if (h.slot === 0) return 0;
  let reclaimed = drainSlot(h, h.slot, cacheClass);
  for (let i = 0; i < h.adopted.length; i++) reclaimed += drainSlot(h, h.adopted[i]!, cacheClass);
  return reclaimed;
}

/** Takes the inbox of owner slot `slot` with one exchange and reclaims its runs. Returns the objects reclaimed. */
function drainSlot(h: ArenaHeap, slot: number, cacheClass: number): number {
  let run = h.registry.takeInbox(slot) >>> 0;
  // The list is named in the agent area as it goes, so that a reaper finishes it if this agent is stopped half
  // way (see resumeDrain): the first run not begun, and the run being spliced. The exchange and this store
  // follow each other with no point between where an agent can be stopped.
  const dw = (h.agentArea + DRAIN_OFFSET) >>> 2;
  Atomics.store(h.i32, dw + D_RUN, run);
  let reclaimed = 0;
  while (run !== 0) {
    // The run may lie past this agent's views (another agent grew the buffer): reach it before reading it.
    if (!h.cover(run + 12)) badRun(run, 'the tail lies outside the heap');
    const next = h.u32[run >>> 2]!;
    // Plain stores: only a reaper reads them, once this agent's thread has stopped.
    h.i32[dw + D_CUR] = run;
    h.i32[dw + D_RUN] = next;
    reclaimed += reclaimRun(h, run, cacheClass), run = next;
  }
  h.i32[dw + D_CUR] = 0;
  return reclaimed;
}

/**
 * Finishes the drain a dead agent was in (its area at `area`); the runs' arenas are this agent's by now.
 * The run it was splicing is reclaimed if it still looks untouched: its tail a live object that does not carry
 * the freed mark (a run's tail holds its first member there until the splice, which marks it; a splice that
 * emptied the slab released it, so it is no longer a live object). A splice cut short after it marked the tail
 * loses that run (its slab is consistent; at most 32 blocks stay live) or left the slab inconsistent, and the
 * repair before this quarantined it. Then every run from the first not begun.
 * Returns the objects reclaimed.
 */
export function resumeDrain(h: ArenaHeap, area: number): number {
  const dw = (area + DRAIN_OFFSET) >>> 2;
  const cur = Atomics.load(h.i32, dw + D_CUR) >>> 0;
  let run = Atomics.load(h.i32, dw + D_RUN) >>> 0;
  let drained = 0;
  if (cur !== 0 && cur !== run && isLiveObject(h, cur) && h.i32[(cur >>> 2) + 1] !== (FREED_MARK ^ cur)) drained += reclaimRun(h, cur);
  while (run !== 0) {
    if (!h.cover(run + 12)) badRun(run, 'the tail lies outside the heap');
    const next = h.u32[run >>> 2]!;
    drained += reclaimRun(h, run);
    run = next;
  }
  Atomics.store(h.i32, dw + D_RUN, 0);
  Atomics.store(h.i32, dw + D_CUR, 0);
  return drained;
}

/**
 * Checks the run whose tail is `tail` (its arena is this agent's, its tail in a head unit, its length and
 * members fit the slab, its chain ends at the tail) and splices it onto its slab's free list in one step; or,
 * when its class is `cacheClass` and that class's cache stack has room for the whole run, puts its members on the
 * stack instead (they stay live in the slab, as cached blocks do, and the slab is not touched).
 * Returns the run's length.
 * @throws HeapError CORRUPTION naming the first check it fails; nothing of the run is spliced or cached then.
 */
export function reclaimRun(h: ArenaHeap, tail: number, cacheClass = -1): number {
  if ((tail & 31) !== 0) badRun(tail, 'the tail is not aligned to 32 bytes');
  if (!h.cover(tail + 12)) badRun(tail, 'the tail lies outside the heap');
  const base = (tail & h.arenaMask) >>> 0;
  const i32 = h.i32;
  const u32 = h.u32;
  const hb = base >>> 2;
  if (i32[hb + A_MAGIC] !== ARENA_MAGIC || (i32[hb + A_KIND_OWNER]! & 255) !== KIND_ARENA) badRun(tail, 'it is not in an arena');
  if (i32[hb + A_KIND_OWNER]! >>> 8 !== h.slot) badRun(tail, `its arena belongs to owner ${i32[hb + A_KIND_OWNER]! >>> 8}, not ${h.slot}`);
  const u = (tail - base) >>> UNIT_SHIFT;
  if (u < HEADER_UNITS) badRun(tail, 'the tail lies in the arena header');
  const ri = recordIndex(base, u);
  const info = i32[ri + R_INFO]!;
  if ((info & STATE_MASK) !== STATE_HEAD) badRun(tail, 'the tail does not sit in a head unit');
  const size = objectSize(h, ri);
  const s = base + (u << UNIT_SHIFT);
  const bump = u32[ri + R_BUMP]!;
  const capacity = ((info >>> CLASS_SHIFT) & CLASS_MASK) === LARGE_CLASS ? 1 : (i32[ri + R_SPAN]! << UNIT_SHIFT) / size;
  const first = u32[(tail >>> 2) + 1]!;
  const length = i32[(tail >>> 2) + 2]!;
  if (capacity === 1 && (length !== 1 || first !== s)) badRun(tail, 'a block run must have length 1 and start at the block');
  if (length < 1 || length > capacity) badRun(tail, `its length ${length} is not 1..${capacity}`);
  if (i32[ri + R_LIVE]! < length) badRun(tail, `its length ${length} is above the slab's live count ${i32[ri + R_LIVE]}`);
  // The cache stack of the class being allocated takes the whole run if it has room: the members are written
  // past its count as the walk checks them, and counted only once every check has passed.
  const cw = (h.agentArea >>> 2) + G_CACHE_COUNT + cacheClass;
  const held = ((info >>> CLASS_SHIFT) & CLASS_MASK) === cacheClass && (info & FLAG_QUARANTINE) === 0 ? u32[cw]! : CACHE_STRIDE;
  const toCache = held + length <= CACHE_STRIDE && held + length <= u32[cw + (G_CACHE_DEPTH - G_CACHE_COUNT)]!;
  let at = ((h.agentArea + CACHE_STACKS_OFFSET) >>> 2) + cacheClass * CACHE_STRIDE + held;
  let m = first;
  for (let k = 1; ; k++) {
    if ((m - s) >>> 0 >= (bump - s) >>> 0 || (capacity === 1 ? m !== s : ((m - s) & (size - 1)) !== 0)) {
      badRun(tail, `member ${formatAddress(m)} is outside its slab or misaligned for the ${size}-byte class`);
    }
    if (toCache) u32[at++] = m;
    if (k === length) break;
    m = u32[m >>> 2]!;
  }
  if (m !== tail) badRun(tail, 'its chain does not end at the tail');
  if ((info & FLAG_QUARANTINE) !== 0) return length; // delivered to a quarantined slab: dropped
  if (toCache) {
    // The tail carries the freed mark like every cached block (and a reaper then sees the run as reclaimed),
    // then the stack's count takes the run in. Members carry the mark since their free.
    i32[(tail >>> 2) + 1] = FREED_MARK ^ tail;
    u32[cw] = held + length;
    return length;
  }
  // Checked: splice [first .. tail] onto the free list.
  u32[tail >>> 2] = u32[ri + R_FREE]!;
  i32[(tail >>> 2) + 1] = FREED_MARK ^ tail;
  u32[ri + R_FREE] = first;
  const live = i32[ri + R_LIVE]! - length;
  i32[ri + R_LIVE] = live;
  if ((info & FLAG_CURRENT) === 0 || live === 0) slabFreed(h, tail, ri, info, live);
  return length;
}

function badRun(tail: number, why: string): never {
  throw new HeapError('CORRUPTION', `inbox run at ${formatAddress(tail)}: ${why}`, tail);
}
