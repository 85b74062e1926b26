/**
 * Bitmaps: the operations on runs of bits that Paddock's bitmaps share. A bitmap is a run of Int32 words in
 * a typed array (usually the shared buffer's `i32` view); `at` is the index of the word that holds bit 0, and
 * bit `b` is bit `b & 31` of word `at + (b >>> 5)`. Every range is bits [start, start + n); n = 0 touches
 * nothing.
 *
 * Each range operation walks the range a word at a time with one mask per word (a run inside one word, the
 * tail of a word, whole words, the head of a word), so a range costs one read or read-modify-write per word
 * it touches. Integer arithmetic only: no allocation, no callbacks, no checks. Callers keep their ranges
 * inside the array (past its end a plain read gives `undefined` and an `Atomics` call throws).
 *
 * Plain and atomic flavours:
 * - {@link setBitRange}, {@link clearBitRange} and {@link countSetBits} use plain reads and writes, for a
 *   bitmap only one agent writes (an arena's unit bitmaps) or a count that is a snapshot anyway.
 * - {@link setBitRangeAtomic} and {@link clearBitRangeAtomic} use `Atomics.or` / `Atomics.and`, so agents
 *   setting and clearing different bits of one word never lose each other's bits; {@link firstSetBit} and
 *   {@link allBitsSet} read with `Atomics.load`.
 * - {@link claimBitRange} and {@link claimFirstClearBit} take bits with `Atomics.compareExchange`: of agents
 *   racing for one bit, exactly one gets it. Nothing waits: a failed CAS only re-reads its word.
 */

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

/** Mask of the bits of bit `i`'s word from `i` up to bit `end` (exclusive) or the word's top bit. */
function wordMask(i: number, end: number): number {
  const lo = i & 31;
  return bitMask(lo, Math.min(32, lo + end - i));
}

// Every range walk below: `i` is the first bit of the range in the current word, `(i | 31) + 1` the first
// bit of the next word, and `wordMask(i, end)` the range's bits in the current word.

/** Sets bits [start, start + n) of the bitmap at word `at` with plain writes (one writer only). */
export function setBitRange(bits: Int32Array, at: number, start: number, n: number): void {
  for (let i = start, end = start + n; i < end; i = (i | 31) + 1) bits[at + (i >>> 5)] |= wordMask(i, end);
}

/**
 * Clears bits [start, start + n) of the bitmap at word `at` with plain writes (one writer only); a word
 * that has none of the range's bits set is not written. Returns how many bits were set.
 */
export function clearBitRange(bits: Int32Array, at: number, start: number, n: number): number {
  let cleared = 0;
  for (let i = start, end = start + n; i < end; i = (i | 31) + 1) {
    const w = at + (i >>> 5);
    const old = bits[w]!;
    const hit = old & wordMask(i, end);
    if (hit !== 0) {
      cleared += popcount32(hit);
      bits[w] = old & ~hit;
    }
  }
  return cleared;
}

/** How many of bits [start, start + n) of the bitmap at word `at` are set (plain reads). */
export function countSetBits(bits: Int32Array, at: number, start: number, n: number): number {
  let count = 0;
  for (let i = start, end = start + n; i < end; i = (i | 31) + 1) {
    const hit = bits[at + (i >>> 5)]! & wordMask(i, end);
    if (hit !== 0) count += popcount32(hit);
  }
  return count;
}

/**
 * Sets bits [start, start + n) of the bitmap at word `at` with one `Atomics.or` per word. Returns how many
 * were clear before: of agents setting one bit at once, exactly one counts it.
 */
export function setBitRangeAtomic(bits: Int32Array, at: number, start: number, n: number): number {
  let added = 0;
  for (let i = start, end = start + n; i < end; i = (i | 31) + 1) {
    const m = wordMask(i, end);
    added += popcount32(~Atomics.or(bits, at + (i >>> 5), m) & m);
  }
  return added;
}

/**
 * Clears bits [start, start + n) of the bitmap at word `at` with one `Atomics.and` per word. Returns how
 * many were set before: of agents clearing one bit at once, exactly one counts it.
 */
export function clearBitRangeAtomic(bits: Int32Array, at: number, start: number, n: number): number {
  let removed = 0;
  for (let i = start, end = start + n; i < end; i = (i | 31) + 1) {
    const m = wordMask(i, end);
    removed += popcount32(Atomics.and(bits, at + (i >>> 5), ~m) & m);
  }
  return removed;
}

/** Index of the lowest set bit among bits [start, start + n) of the bitmap at word `at`, or -1 (`Atomics.load`). */
export function firstSetBit(bits: Int32Array, at: number, start: number, n: number): number {
  for (let i = start, end = start + n; i < end; i = (i | 31) + 1) {
    const hit = Atomics.load(bits, at + (i >>> 5)) & wordMask(i, end);
    if (hit !== 0) return (i & ~31) + (31 - Math.clz32(hit & -hit));
  }
  return -1;
}

/** Whether all of bits [start, start + n) of the bitmap at word `at` are set (`Atomics.load`); true for n = 0. */
export function allBitsSet(bits: Int32Array, at: number, start: number, n: number): boolean {
  for (let i = start, end = start + n; i < end; i = (i | 31) + 1) {
    const m = wordMask(i, end);
    if ((Atomics.load(bits, at + (i >>> 5)) & m) !== m) return false;
  }
  return true;
}

/**
 * Sets bits [start, start + n) of the bitmap at word `at` if all of them are clear, word by word with
 * `Atomics.compareExchange` (a word's CAS succeeds only while none of its bits in the range is set). When a
 * bit is found set, the words already taken are cleared again (their bits are ours, so `Atomics.and` leaves
 * other agents' bits alone) and that bit's index is returned; -1 when the whole range was claimed. Of agents
 * claiming overlapping ranges at once, at most one succeeds. Another agent may see a claim half made, or a
 * failed one for a moment before its rollback: a bit set here is taken, not yet a finished claim.
 */
export function claimBitRange(bits: Int32Array, at: number, start: number, n: number): number {
  for (let i = start, end = start + n; i < end; i = (i | 31) + 1) {
    const m = wordMask(i, end);
    const w = at + (i >>> 5);
    for (;;) {
      const old = Atomics.load(bits, w);
      const taken = old & m;
      if (taken !== 0) {
        clearBitRangeAtomic(bits, at, start, i - start);
        return (i & ~31) + (31 - Math.clz32(taken & -taken));
      }
      if (Atomics.compareExchange(bits, w, old, old | m) === old) break;
    }
  }
  return -1;
}

/**
 * Sets the lowest clear bit among bits [start, start + n) of the bitmap at word `at` with one successful
 * `Atomics.compareExchange`, and returns its index; -1 when every bit of the range is set. Of agents racing
 * for one bit, exactly one gets it; a loser moves on to the next clear bit.
 */
export function claimFirstClearBit(bits: Int32Array, at: number, start: number, n: number): number {
  for (let i = start, end = start + n; i < end; i = (i | 31) + 1) {
    const m = wordMask(i, end);
    const w = at + (i >>> 5);
    for (;;) {
      const old = Atomics.load(bits, w);
      const free = ~old & m;
      if (free === 0) break;
      const low = free & -free;
      if (Atomics.compareExchange(bits, w, old, old | low) === old) return (i & ~31) + (31 - Math.clz32(low));
    }
  }
  return -1;
}
