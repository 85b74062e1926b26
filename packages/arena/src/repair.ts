/**
 * Making a dead agent's arena trustworthy before another agent adopts it. The agent may have been stopped in
 * the middle of any update, so nothing of its arena is taken on trust: the unit bitmap says which units are in
 * use; a used unit whose record is free was a reservation cut short and is freed; a slab whose record breaks the
 * rules `check()` enforces ({@link slabProblem}) is quarantined unit by unit: flagged, kept out of every list,
 * never allocated from or released. The header's counts, hint, run bound and partial lists are then rebuilt.
 */
import type { ArenaHeap } from './arena-heap.js';
import { slabProblem } from './check.js';
import {
  A_DIRTY_BITS,
  A_DIRTY_UNITS,
  A_FREE_UNITS,
  A_HINT,
  A_PARTIAL,
  A_RETAINED_BITS,
  A_RETAINED_UNITS,
  A_RUN_BOUND,
  A_UNIT_BITS,
  CLASS_MASK,
  CLASS_SHIFT,
  FLAG_CURRENT,
  FLAG_PARTIAL,
  FLAG_QUARANTINE,
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
  STATE_FREE,
  STATE_HEAD,
  STATE_MASK,
  UNIT,
  UNIT_SHIFT,
  headerIndex,
  recordIndex,
} from './layout.js';
import { CLASS_COUNT, LARGE_ROUND, MAX_CLASS_SIZE, spanOf } from './size-class.js';
import { pushPartial } from './slab.js';

/** What {@link repairArena} found in one arena. */
export interface ArenaRepair {
  /** Bytes it quarantined: the units of the slabs it could not trust, plus the arena's metadata pages once if any. */
  quarantinedBytes: number;
  /** Addresses of the consistent slabs with nothing live: to release once the arena is adopted. */
  emptySlabs: number[];
}

/**
 * Repairs the arena at `base` of an agent that died (see the top of this file): every slab is checked as
 * `check()` would; one that fails (or a used unit with no head) is quarantined. Then the header's counts, hint
 * and run bound are recomputed, current flags cleared and partial lists rebuilt. The arena's metadata
 * pages stay committed for as long as anything in it is quarantined, so they are counted in the bytes quarantined.
 */
export function repairArena(h: ArenaHeap, base: number): ArenaRepair {
  const i32 = h.i32;
  const u32 = h.u32;
  const hb = headerIndex(base, h.arenaBytes);
  for (let cls = 0; cls < CLASS_COUNT; cls++) u32[hb + A_PARTIAL + cls] = 0;
  const found: ArenaRepair = { quarantinedBytes: 0, emptySlabs: [] };
  for (let u = 0; u < h.units; ) {
    const used = (i32[hb + A_UNIT_BITS + (u >>> 5)]! & (1 << (u & 31))) !== 0;
    const ri = recordIndex(base, u, h.arenaBytes);
    if (!used || (i32[ri + R_INFO]! & STATE_MASK) === STATE_FREE) {
      // A used bit with a free record: a slab reservation cut short before it handed anything out. The
      // unit may already be committed, so it is freed as dirty (the next sweep decommits it).
      if (used) {
        i32[hb + A_UNIT_BITS + (u >>> 5)] &= ~(1 << (u & 31));
        i32[hb + A_DIRTY_BITS + (u >>> 5)] |= 1 << (u & 31);
      }
      i32[ri + R_INFO] = STATE_FREE;
      u++;
      continue;
    }
    const span = trustedSpan(h, base, u);
    if (span === 0) {
      // A used unit that does not start a consistent slab: quarantine it alone.
      i32[ri + R_INFO] = STATE_HEAD | FLAG_QUARANTINE;
      i32[ri + R_SPAN] = 1;
      u32[ri + R_PNEXT] = 0;
      u32[ri + R_PPREV] = 0;
      if (found.quarantinedBytes === 0) found.quarantinedBytes = h.metaBytes;
      found.quarantinedBytes += UNIT;
      u++;
      continue;
    }
    const info = (i32[ri + R_INFO]! & ~(FLAG_CURRENT | FLAG_PARTIAL)) >>> 0;
    i32[ri + R_INFO] = info;
    const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
    const live = i32[ri + R_LIVE]!;
    if ((info & FLAG_QUARANTINE) === 0 && live === 0) found.emptySlabs.push(base + (u << UNIT_SHIFT));
    else if (cls < CLASS_COUNT && (info & FLAG_QUARANTINE) === 0) {
      const s = base + (u << UNIT_SHIFT);
      const capacity = (span << UNIT_SHIFT) / (32 << cls);
      if (live < capacity && (u32[ri + R_FREE] !== 0 || u32[ri + R_BUMP]! < s + (span << UNIT_SHIFT))) pushPartial(h, base, s, cls);
    }
    u += span;
  }
  recountHeader(h, base);
  return found;
}

/**
 * The span of the slab whose head is unit `u` when it can be trusted, else 0: a slab quarantined before keeps
 * its one unit; a head whose record never handed anything out is simply empty (its units are marked used and
 * its continuations rewritten, whatever they said); any other head must pass {@link slabProblem}.
 */
function trustedSpan(h: ArenaHeap, base: number, u: number): number {
  const i32 = h.i32;
  const u32 = h.u32;
  const hb = headerIndex(base, h.arenaBytes);
  const ri = recordIndex(base, u, h.arenaBytes);
  const info = i32[ri + R_INFO]!;
  if ((info & STATE_MASK) !== STATE_HEAD || (info & FLAG_QUARANTINE) !== 0) return (info & FLAG_QUARANTINE) !== 0 ? i32[ri + R_SPAN]! : 0;
  const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
  const span = i32[ri + R_SPAN]!;
  if (span < 1 || u + span > h.units) return 0;
  const s = base + (u << UNIT_SHIFT);
  if (i32[ri + R_LIVE] === 0 && u32[ri + R_FREE] === 0 && u32[ri + R_BUMP] === s && (cls === LARGE_CLASS || (cls < CLASS_COUNT && span === spanOf(cls)))) {
    // Never handed anything out (a reservation cut short): whatever its continuations say, it is empty.
    for (let k = 0; k < span; k++) {
      i32[hb + A_UNIT_BITS + ((u + k) >>> 5)] |= 1 << ((u + k) & 31);
      if (k > 0) {
        const rk = recordIndex(base, u + k, h.arenaBytes);
        i32[rk + R_INFO] = STATE_CONT;
        i32[rk + R_SPAN] = k;
      }
    }
    if (cls === LARGE_CLASS) u32[ri + R_SIZE] = Math.max(u32[ri + R_SIZE]!, MAX_CLASS_SIZE + LARGE_ROUND);
    return span;
  }
  return slabProblem(h, base, u) === null ? span : 0;
}

/**
 * Rebuilds the arena header's unit counts from its bitmaps: free units, dirty units (every free unit not
 * retained is marked dirty, since a release cut short may have left it committed), the run bound, the hint,
 * and retained units. A used unit is neither dirty nor retained.
 */
function recountHeader(h: ArenaHeap, base: number): void {
  const i32 = h.i32;
  const hb = headerIndex(base, h.arenaBytes);
  let free = 0;
  let dirty = 0;
  let longest = 0;
  let run = 0;
  for (let u = 0; u < h.units; u++) {
    const bit = 1 << (u & 31);
    const w = u >>> 5;
    if ((i32[hb + A_UNIT_BITS + w]! & bit) !== 0) {
      i32[hb + A_DIRTY_BITS + w] &= ~bit;
      i32[hb + A_RETAINED_BITS + w] &= ~bit;
      run = 0;
      continue;
    }
    free++;
    if (++run > longest) longest = run;
    // A free unit may still be committed (a release cut short): mark it dirty so the sweep makes sure.
    if ((i32[hb + A_RETAINED_BITS + w]! & bit) === 0) i32[hb + A_DIRTY_BITS + w] |= bit;
    if ((i32[hb + A_DIRTY_BITS + w]! & bit) !== 0) dirty++;
  }
  i32[hb + A_FREE_UNITS] = free;
  i32[hb + A_DIRTY_UNITS] = dirty;
  i32[hb + A_RUN_BOUND] = longest;
  i32[hb + A_HINT] = 0;
  let retained = 0;
  for (let u = 0; u < h.units; u++) if ((i32[hb + A_RETAINED_BITS + (u >>> 5)]! & (1 << (u & 31))) !== 0) retained++;
  i32[hb + A_RETAINED_UNITS] = retained;
}
