/**
 * Setting and clearing a range of bits, a word at a time, in one of an arena header's bitmaps (units in use,
 * dirty, retained). Kept here, small, until the platform layer's bitmap module can serve the arena too; then
 * these two go and their callers use that module.
 */
import { bitMask, popcount32 } from '@paddock/platform';

/** Sets bits [start, start + n) of the bitmap whose first word is `at`. */
export function setBitRange(i32: Int32Array, at: number, start: number, n: number): void {
  for (let i = start, end = start + n; i < end; ) {
    const lo = i & 31;
    const hi = Math.min(32, lo + end - i);
    i32[at + (i >>> 5)] |= bitMask(lo, hi);
    i += hi - lo;
  }
}

/** Clears bits [start, start + n) of the bitmap at `at`; returns how many were set. */
export function clearBitRange(i32: Int32Array, at: number, start: number, n: number): number {
  let cleared = 0;
  for (let i = start, end = start + n; i < end; ) {
    const lo = i & 31;
    const hi = Math.min(32, lo + end - i);
    const m = bitMask(lo, hi);
    const w = at + (i >>> 5);
    const old = i32[w]!;
    if ((old & m) !== 0) {
      cleared += popcount32(old & m);
      i32[w] = old & ~m;
    }
    i += hi - lo;
  }
  return cleared;
}
