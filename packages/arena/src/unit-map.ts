/**
 * Searches of an arena's unit bitmap (a set bit is a unit in use): where a new slab goes, and how long the
 * free run around released units is. A one-unit slab takes the lowest free unit at or above the arena's hint
 * (first-fit upward); a multi-unit block takes the highest run of free units, so long runs near the bottom
 * stay whole. Each arena keeps a longest-run bound: a failed run search lowers it to the longest run it saw,
 * and a release raises it (see release.ts), so an arena that cannot hold a span is skipped without a scan.
 */
import type { ArenaHeap } from './arena-heap.js';
import { A_HINT, A_RUN_BOUND, A_UNIT_BITS, headerIndex } from './layout.js';

/** First free unit at or above the arena's hint (first-fit upward); -1 when none. */
export function findUnit(h: ArenaHeap, base: number): number {
  const i32 = h.i32;
  const hb = headerIndex(base, h.arenaBytes);
  const units = h.units;
  for (let u = i32[hb + A_HINT]!; u < units; ) {
    const word = i32[hb + A_UNIT_BITS + (u >>> 5)]! | ((1 << (u & 31)) - 1);
    if (word === -1) {
      u = (u | 31) + 1;
      continue;
    }
    const free = ~word & (word + 1); // lowest clear bit
    const found = (u & ~31) + (31 - Math.clz32(free));
    i32[hb + A_HINT] = found + 1;
    return found;
  }
  i32[hb + A_HINT] = units;
  return -1;
}

/** Highest run of `span` free units, scanning down from the top; lowers the run bound when none. */
export function findRun(h: ArenaHeap, base: number, span: number): number {
  const i32 = h.i32;
  const hb = headerIndex(base, h.arenaBytes);
  let run = 0; // free units directly above u
  let longest = 0;
  let u = h.units - 1;
  while (u >= 0) {
    if ((u & 31) === 31 && u - 31 >= 0) {
      // A whole bitmap word at once when it is all free or all used.
      const w = i32[hb + A_UNIT_BITS + (u >>> 5)]!;
      if (w === 0) {
        if (run + 32 >= span) return u + run - span + 1;
        run += 32;
        if (run > longest) longest = run;
        u -= 32;
        continue;
      }
      if (w === -1) {
        run = 0;
        u -= 32;
        continue;
      }
    }
    if ((i32[hb + A_UNIT_BITS + (u >>> 5)]! & (1 << (u & 31))) === 0) {
      if (++run === span) return u;
      if (run > longest) longest = run;
    } else {
      run = 0;
    }
    u--;
  }
  i32[hb + A_RUN_BOUND] = longest;
  return -1;
}

/** Length of the free run that holds units [u, u + span). */
export function runAround(h: ArenaHeap, base: number, u: number, span: number): number {
  const i32 = h.i32;
  const bits = headerIndex(base, h.arenaBytes) + A_UNIT_BITS;
  let lo = u;
  while (lo > 0) {
    if ((lo & 31) === 0 && lo - 32 >= 0 && i32[bits + ((lo - 1) >>> 5)] === 0) lo -= 32;
    else if ((i32[bits + ((lo - 1) >>> 5)]! & (1 << ((lo - 1) & 31))) === 0) lo--;
    else break;
  }
  let hi = u + span;
  while (hi < h.units) {
    if ((hi & 31) === 0 && hi + 32 <= h.units && i32[bits + (hi >>> 5)] === 0) hi += 32;
    else if ((i32[bits + (hi >>> 5)]! & (1 << (hi & 31))) === 0) hi++;
    else break;
  }
  return hi - lo;
}
