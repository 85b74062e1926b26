/** Bit helpers shared by every bitmap in Paddock (plain integer code). */

/** Mask of bits [lo, hi) of one 32-bit word, 0 <= lo < hi <= 32. */
export function bitMask(lo: number, hi: number): number {
  const width = hi - lo;
  return width === 32 ? -1 : (((1 << width) - 1) << lo) | 0;
}

/** Number of set bits in a 32-bit word. */
export function popcount32(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
