/**
 * Slab records: laying out a new slab's record (and its continuation records), the partial-slab lists, the
 * record flags, and what a slab's state becomes when frees lower its live count. A slab is a head unit's
 * record plus the units its span covers; see layout.ts for the record's words.
 */
import type { ArenaHeap } from './arena-heap.js';
import { clearBitRange, setBitRange } from '@paddock/platform';
import {
  A_DIRTY_BITS,
  A_DIRTY_UNITS,
  A_FREE_UNITS,
  A_PARTIAL,
  A_RETAINED_BITS,
  A_RETAINED_UNITS,
  A_UNIT_BITS,
  CLASS_MASK,
  CLASS_SHIFT,
  FLAG_CURRENT,
  FLAG_PARTIAL,
  LARGE_CLASS,
  R_BUMP,
  R_FREE,
  R_INFO,
  R_LIVE,
  R_PNEXT,
  R_PPREV,
  R_SIZE,
  R_SPAN,
  STATE_CONT,
  STATE_HEAD,
  UNIT_SHIFT,
  headerIndex,
  recordIndex,
} from './layout.js';
import { releaseSlab } from './release.js';

/**
 * Makes units [u, u + span) of the arena at `base` a new, empty slab of class `cls` and returns its address:
 * the units are marked used (dirty ones need no commit, retained ones leave the large tier's ledger, the rest
 * are committed), the head record is laid out and every other unit's record points back to it.
 */
export function initSlab(h: ArenaHeap, base: number, u: number, span: number, cls: number): number {
  const hb = headerIndex(base, h.arenaBytes);
  if (h.inherited.size !== 0) h.inherited.delete(base); // allocated from: a working arena again
  let i32 = h.i32;
  let clean = 0;
  let taken = 0;
  // Word at a time: mark the units used; dirty ones need no commit, retained ones leave the ledger.
  setBitRange(i32, hb + A_UNIT_BITS, u, span);
  const dirtyHit = clearBitRange(i32, hb + A_DIRTY_BITS, u, span);
  taken = clearBitRange(i32, hb + A_RETAINED_BITS, u, span);
  clean = span - dirtyHit - taken;
  if (dirtyHit !== 0) i32[hb + A_DIRTY_UNITS] -= dirtyHit;
  i32[hb + A_FREE_UNITS] -= span;
  if (taken !== 0) {
    i32[hb + A_RETAINED_UNITS] -= taken;
    if (h.retention) h.retention.unitsTaken(taken);
  }
  const s = base + (u << UNIT_SHIFT);
  if (clean !== 0) {
    h.space.commit(s, span << UNIT_SHIFT);
    h.sync();
    i32 = h.i32;
  }
  const u32 = h.u32;
  const ri = recordIndex(base, u, h.arenaBytes);
  u32[ri + R_FREE] = 0;
  u32[ri + R_BUMP] = s;
  i32[ri + R_LIVE] = 0;
  i32[ri + R_INFO] = STATE_HEAD | (cls << CLASS_SHIFT);
  i32[ri + R_SPAN] = span;
  u32[ri + R_PNEXT] = 0;
  u32[ri + R_PPREV] = 0;
  u32[ri + R_SIZE] = 0;
  for (let k = 1; k < span; k++) {
    const rk = recordIndex(base, u + k, h.arenaBytes);
    i32[rk + R_INFO] = STATE_CONT;
    i32[rk + R_SPAN] = k;
  }
  return s;
}

/** Bytes of one object of the slab whose record is at `ri`. */
export function objectSize(h: ArenaHeap, ri: number): number {
  const cls = (h.i32[ri + R_INFO]! >>> CLASS_SHIFT) & CLASS_MASK;
  return cls === LARGE_CLASS ? h.u32[ri + R_SIZE]! : 32 << cls;
}

/**
 * State changes after frees lowered the live count of the slab whose record is at `ri` (holding `p`) to
 * `live`, in every case but the plain one of a current slab that still has live objects: an empty current slab
 * is reset in place, another empty slab is released, and a full one that gained room goes onto its partial list.
 */
export function slabFreed(h: ArenaHeap, p: number, ri: number, info: number, live: number): void {
  const base = (p & h.arenaMask) >>> 0;
  const u = (p - base) >>> UNIT_SHIFT;
  const s = base + (u << UNIT_SHIFT);
  const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
  if (live === 0) {
    if ((info & FLAG_CURRENT) !== 0) {
      // Reset in place: every object is free, so forget the list and bump from the start again.
      h.u32[ri + R_FREE] = 0;
      h.u32[ri + R_BUMP] = s;
      return;
    }
    if ((info & FLAG_PARTIAL) !== 0) unlinkPartial(h, base, s, cls);
    if (cls !== LARGE_CLASS && h.emptySlabs.keep(h, s, ri, cls)) return;
    releaseSlab(h, base, u, h.i32[ri + R_SPAN]!, cls === LARGE_CLASS);
  } else if ((info & (FLAG_CURRENT | FLAG_PARTIAL)) === 0) {
    pushPartial(h, base, s, cls);
  }
}

/** Puts slab `s` of class `cls` at the head of its arena's partial list. */
export function pushPartial(h: ArenaHeap, base: number, s: number, cls: number): void {
  const u32 = h.u32;
  const hi = headerIndex(base, h.arenaBytes) + A_PARTIAL + cls;
  const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT, h.arenaBytes);
  const head = u32[hi]!;
  u32[ri + R_PNEXT] = head;
  u32[ri + R_PPREV] = 0;
  if (head !== 0) u32[recordIndex(base, (head - base) >>> UNIT_SHIFT, h.arenaBytes) + R_PPREV] = s;
  u32[hi] = s;
  h.i32[ri + R_INFO] |= FLAG_PARTIAL;
}

/** Takes slab `s` of class `cls` off its arena's partial list. */
export function unlinkPartial(h: ArenaHeap, base: number, s: number, cls: number): void {
  const u32 = h.u32;
  const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT, h.arenaBytes);
  const next = u32[ri + R_PNEXT]!;
  const prev = u32[ri + R_PPREV]!;
  if (prev !== 0) u32[recordIndex(base, (prev - base) >>> UNIT_SHIFT, h.arenaBytes) + R_PNEXT] = next;
  else u32[headerIndex(base, h.arenaBytes) + A_PARTIAL + cls] = next;
  if (next !== 0) u32[recordIndex(base, (next - base) >>> UNIT_SHIFT, h.arenaBytes) + R_PPREV] = prev;
  u32[ri + R_PNEXT] = 0;
  u32[ri + R_PPREV] = 0;
  h.i32[ri + R_INFO] &= ~FLAG_PARTIAL;
}

/** Sets the flags `set` and clears the flags `clear` in the record of slab `s`. */
export function setFlags(h: ArenaHeap, s: number, set: number, clear: number): void {
  const base = (s & h.arenaMask) >>> 0;
  const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT, h.arenaBytes);
  const i32 = h.i32;
  i32[ri + R_INFO] = (i32[ri + R_INFO]! & ~clear) | set;
}
