/**
 * The owner's side of cross-agent frees: it takes its inbox with one exchange into its queue of batches and
 * reclaims them object by object, after checking each (see docs/design/arena.md, "Drain and its checks"). The
 * allocation's drain reclaims only as many batches as its class needs, onto the class's cache stack; every other
 * drain reclaims them all. The queue and the batch in progress are named in the agent area, so that a reaper
 * finishes the drain if the agent is stopped half way.
 */
import { HeapError, formatAddress } from '@paddock/platform';
import { CACHE_STACKS_OFFSET, CACHE_STRIDE, DRAIN_OFFSET, D_CUR, D_LEFT, D_RUN, G_CACHE_COUNT, G_CACHE_DEPTH } from './agent-layout.js';
import type { ArenaHeap } from './arena-heap.js';
import {
  ARENA_MAGIC,
  A_KIND_OWNER,
  A_MAGIC,
  B_LENGTH,
  B_NEXT,
  CLASS_MASK,
  CLASS_SHIFT,
  FLAG_CURRENT,
  FLAG_QUARANTINE,
  FREED_MARK,
  KIND_ARENA,
  LARGE_CLASS,
  R_BUMP,
  R_FREE,
  R_INFO,
  R_LIVE,
  R_SIZE,
  STATE_HEAD,
  STATE_MASK,
  UNIT_SHIFT,
  headerIndex,
  recordIndex,
} from './layout.js';
import { CHAIN_FLUSH } from './remote-chains.js';
import { slabFreed } from './slab.js';
import { CLASS_COUNT } from './size-class.js';

/** {@link drain}'s `cacheClass` for a drain that fills the cache stacks of every class and reclaims every batch. */
export const TO_CACHE = CLASS_COUNT;

/**
 * Reclaims the batches waiting for this agent: those left in its queue, then its inbox's, then those of the slots
 * it took over. With `cacheClass` -1, every object goes back to its slab. Otherwise objects go onto their class's
 * thread-cache stack while it has room (the rest onto their slabs): with a class (the allocation that found its
 * slab full), the drain stops once that class's stack holds a block, and the batches not begun wait in the queue
 * for the next; with {@link TO_CACHE}, every batch is reclaimed. Returns the objects reclaimed.
 * @throws HeapError CORRUPTION for an object that fails a check; the objects before it are reclaimed.
 */
export function drain(h: ArenaHeap, cacheClass = -1): number {
  if (h.slot === 0) return 0;
  const dw = (h.agentArea + DRAIN_OFFSET) >>> 2;
  let reclaimed = reclaimQueue(h, dw, cacheClass);
  for (let k = 0; k <= h.adopted.length; k++) {
    if (classServed(h, cacheClass)) break;
    // The exchange and this store follow each other with no point between where an agent can be stopped.
    Atomics.store(h.i32, dw + D_RUN, h.registry.takeInbox(k === 0 ? h.slot : h.adopted[k - 1]!));
    reclaimed += reclaimQueue(h, dw, cacheClass);
  }
  return reclaimed;
}

/** Whether the drain for `cacheClass` may stop: that class's cache stack holds a block. */
function classServed(h: ArenaHeap, cacheClass: number): boolean {
  return cacheClass >= 0 && cacheClass < CLASS_COUNT && h.u32[(h.agentArea >>> 2) + G_CACHE_COUNT + cacheClass] !== 0;
}

/**
 * Reclaims the batches of the queue at drain word `dw` (an agent area's) in order, each named there as it goes:
 * all of them, or with `cacheClass` until that class's cache stack holds a block. Returns the objects reclaimed.
 */
function reclaimQueue(h: ArenaHeap, dw: number, cacheClass: number): number {
  let reclaimed = 0;
  for (;;) {
    const b = h.u32[dw + D_RUN]!;
    if (b === 0) return reclaimed;
    if ((b & 31) !== 0 || !h.cover(b + 16)) {
      h.u32[dw + D_RUN] = 0; // its link cannot be read: the batches behind it are lost with it
      throw new HeapError('CORRUPTION', `inbox batch at ${formatAddress(b)}: ${(b & 31) !== 0 ? 'it is not aligned to 32 bytes' : 'it lies outside the heap'}`, b);
    }
    // Plain stores: only this agent and, once its thread has stopped, a reaper read them.
    const bw = b >>> 2;
    h.u32[dw + D_CUR] = b;
    h.i32[dw + D_LEFT] = h.i32[bw + B_LENGTH]!;
    h.u32[dw + D_RUN] = h.u32[bw + B_NEXT]!;
    reclaimed += reclaimBatch(h, dw, cacheClass >= 0);
    if (classServed(h, cacheClass)) return reclaimed;
  }
}

/**
 * Reclaims the batch in progress at drain word `dw`: its objects from `D_CUR`, `D_LEFT` of them. Each is checked
 * (inside the heap, in an arena of this agent, in a slab's head unit, below its bump, aligned to its class, the
 * slab holding a live object, the freed mark in place; the last one's link 0) before anything of it changes;
 * then, with `toCache`, it goes onto its class's cache stack if that has room, else back onto its slab's free
 * list, and the progress words move past it in the same stretch of plain stores. Objects of a quarantined slab
 * are dropped.
 * Returns the objects reclaimed.
 * @throws HeapError CORRUPTION naming the first check an object fails; the rest of the batch is dropped.
 */
function reclaimBatch(h: ArenaHeap, dw: number, toCache: boolean): number {
  const batch = h.u32[dw + D_CUR]!;
  const length = h.i32[dw + D_LEFT]!;
  if (length < 1 || length > CHAIN_FLUSH) badBatch(h, dw, batch, batch, `its length ${length} is not 1..${CHAIN_FLUSH}`);
  let i32 = h.i32;
  let u32 = h.u32;
  const slot = h.slot;
  const mask = h.arenaMask;
  // The cache stacks (the thread cache's own push: a class's count moves with every block its stack takes).
  const aw = h.agentArea >>> 2;
  const stacks = (h.agentArea + CACHE_STACKS_OFFSET) >>> 2;
  let m = batch;
  for (let left = length; left > 0; ) {
    if ((m & 31) !== 0) badBatch(h, dw, batch, m, 'it is not aligned to 32 bytes');
    if (!h.cover(m + 16)) badBatch(h, dw, batch, m, 'it lies outside the heap');
    i32 = h.i32; // the views again: the object may lie past them (another agent grew the buffer)
    u32 = h.u32;
    const base = (m & mask) >>> 0;
    const hb = headerIndex(base, h.arenaBytes);
    const kindOwner = i32[hb + A_KIND_OWNER]!;
    if (i32[hb + A_MAGIC] !== ARENA_MAGIC || (kindOwner & 255) !== KIND_ARENA) badBatch(h, dw, batch, m, 'it is not in an arena');
    if (kindOwner >>> 8 !== slot) badBatch(h, dw, batch, m, `its arena belongs to owner ${kindOwner >>> 8}, not ${slot}`);
    const u = (m - base) >>> UNIT_SHIFT;
    const ri = recordIndex(base, u, h.arenaBytes);
    const info = i32[ri + R_INFO]!;
    if ((info & STATE_MASK) !== STATE_HEAD) badBatch(h, dw, batch, m, 'it does not sit in the head unit of a slab');
    const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
    const s = base + (u << UNIT_SHIFT);
    const bump = u32[ri + R_BUMP]!;
    if ((m - s) >>> 0 >= (bump - s) >>> 0 || (cls >= LARGE_CLASS ? m !== s : ((m - s) & ((32 << cls) - 1)) !== 0)) {
      badBatch(h, dw, batch, m, `it is outside its slab or misaligned for the ${cls >= LARGE_CLASS ? u32[ri + R_SIZE]! : 32 << cls}-byte class`);
    }
    if (i32[ri + R_LIVE]! < 1) badBatch(h, dw, batch, m, 'its slab holds no live object');
    if (i32[(m >>> 2) + 1] !== (FREED_MARK ^ m)) badBatch(h, dw, batch, m, 'it does not carry the freed mark');
    const next = u32[m >>> 2]!;
    left--;
    if (left === 0 ? next !== 0 : next === 0) badBatch(h, dw, batch, m, left === 0 ? 'the batch does not end after its length' : 'the batch ends before its length');
    // The object's reclaim and the progress words past it are plain stores with no call between them: an agent
    // is stopped only at a call or a loop's back edge, so a stop leaves the object either untouched and still
    // named (the reaper reclaims it) or reclaimed and passed, never lost or reclaimed twice. It carries the freed
    // mark already (checked above). Onto its class's stack while that has room (live in its slab, like every
    // cached block: the thread cache's push, written out), else onto its slab's free list (the owner's free,
    // written out); what a slab free sets off after that (a partial-list move, a release) may be cut short, and
    // then the repair settles the slab. Objects of a quarantined slab are dropped.
    let slabLive = -1;
    if ((info & FLAG_QUARANTINE) === 0) {
      const n = toCache && cls < CLASS_COUNT ? u32[aw + G_CACHE_COUNT + cls]! : -1;
      if (n >= 0 && n < u32[aw + G_CACHE_DEPTH + cls]!) {
        u32[stacks + cls * CACHE_STRIDE + n] = m;
        u32[aw + G_CACHE_COUNT + cls] = n + 1;
      } else {
        u32[m >>> 2] = u32[ri + R_FREE]!;
        u32[ri + R_FREE] = m;
        slabLive = i32[ri + R_LIVE]! - 1;
        i32[ri + R_LIVE] = slabLive;
      }
    }
    u32[dw + D_CUR] = next;
    i32[dw + D_LEFT] = left;
    if (slabLive === 0 || (slabLive > 0 && (info & FLAG_CURRENT) === 0)) slabFreed(h, m, ri, info, slabLive);
    m = next;
  }
  return length;
}

/**
 * Finishes the drain a dead agent was in (its area at `area`); the batches' arenas are this agent's by now.
 * The batch it was reclaiming goes on from the object its progress words name (the dead agent moved them past
 * each object before it reclaimed it), then every batch of its queue. Returns the objects reclaimed.
 */
export function resumeDrain(h: ArenaHeap, area: number): number {
  const dw = (area + DRAIN_OFFSET) >>> 2;
  let drained = 0;
  if (Atomics.load(h.i32, dw + D_LEFT) > 0) drained += reclaimBatch(h, dw, false);
  drained += reclaimQueue(h, dw, -1);
  Atomics.store(h.i32, dw + D_RUN, 0);
  Atomics.store(h.i32, dw + D_CUR, 0);
  Atomics.store(h.i32, dw + D_LEFT, 0);
  return drained;
}

/** Drops the rest of the batch in progress (nothing of `m` changed) and throws. */
function badBatch(h: ArenaHeap, dw: number, batch: number, m: number, why: string): never {
  h.i32[dw + D_LEFT] = 0;
  h.u32[dw + D_CUR] = 0;
  throw new HeapError('CORRUPTION', `inbox batch at ${formatAddress(batch)}: object ${formatAddress(m)}: ${why}`, m);
}
