// The bitmap module, one agent: every range operation against a bit-at-a-time model of the same bitmap.
import { describe, expect, it } from 'vitest';
import {
  allBitsSet,
  bitMask,
  claimBitRange,
  claimFirstClearBit,
  clearBitRange,
  clearBitRangeAtomic,
  countSetBits,
  firstSetBit,
  popcount32,
  setBitRange,
  setBitRangeAtomic,
} from '../src/index.js';

/** The bitmap under test starts at word AT of a WORDS-word array; the words around it must never change. */
const AT = 3;
const BITMAP_WORDS = 6;
const WORDS = AT + BITMAP_WORDS + 2;
const BITS = BITMAP_WORDS * 32;

const getBit = (a: Int32Array, b: number): boolean => ((a[AT + (b >>> 5)]! >>> (b & 31)) & 1) === 1;
const putBit = (a: Int32Array, b: number, on: boolean): void => {
  const w = AT + (b >>> 5);
  a[w] = on ? a[w]! | (1 << (b & 31)) : a[w]! & ~(1 << (b & 31));
};

/** The bit-at-a-time model of each operation, on a copy: [resulting words, returned value]. */
const model = {
  set(a: Int32Array, s: number, n: number): number {
    let added = 0;
    for (let b = s; b < s + n; b++) if (!getBit(a, b)) (added++, putBit(a, b, true));
    return added;
  },
  clear(a: Int32Array, s: number, n: number): number {
    let removed = 0;
    for (let b = s; b < s + n; b++) if (getBit(a, b)) (removed++, putBit(a, b, false));
    return removed;
  },
  count(a: Int32Array, s: number, n: number): number {
    let c = 0;
    for (let b = s; b < s + n; b++) if (getBit(a, b)) c++;
    return c;
  },
  firstSet(a: Int32Array, s: number, n: number): number {
    for (let b = s; b < s + n; b++) if (getBit(a, b)) return b;
    return -1;
  },
  allSet(a: Int32Array, s: number, n: number): boolean {
    for (let b = s; b < s + n; b++) if (!getBit(a, b)) return false;
    return true;
  },
  claim(a: Int32Array, s: number, n: number): number {
    const taken = model.firstSet(a, s, n);
    if (taken < 0) model.set(a, s, n);
    return taken;
  },
  claimFirstClear(a: Int32Array, s: number, n: number): number {
    for (let b = s; b < s + n; b++) {
      if (!getBit(a, b)) {
        putBit(a, b, true);
        return b;
      }
    }
    return -1;
  },
};

type Op = (bits: Int32Array, at: number, start: number, n: number) => number | boolean | void;
const cases: [string, Op, (a: Int32Array, s: number, n: number) => number | boolean | void][] = [
  ['setBitRange', setBitRange, (a, s, n) => void model.set(a, s, n)],
  ['clearBitRange', clearBitRange, model.clear],
  ['setBitRangeAtomic', setBitRangeAtomic, model.set],
  ['clearBitRangeAtomic', clearBitRangeAtomic, model.clear],
  ['countSetBits', countSetBits, model.count],
  ['firstSetBit', firstSetBit, model.firstSet],
  ['allBitsSet', allBitsSet, model.allSet],
  ['claimBitRange', claimBitRange, model.claim],
  ['claimFirstClearBit', claimFirstClearBit, model.claimFirstClear],
];

/** Ranges that exercise every edge: empty, one bit, bit 31, crossing one or more word boundaries, whole words. */
const edgeRanges: [number, number][] = [
  [0, 0], [31, 0], [32, 0], [BITS, 0],
  [0, 1], [31, 1], [32, 1], [63, 1], [BITS - 1, 1],
  [30, 2], [31, 2], [31, 3], [28, 8], [63, 2], [1, 62],
  [0, 32], [32, 32], [64, 64], [0, BITS], [32, BITS - 32],
  [0, 31], [1, 31], [33, 31], [5, 100], [31, 130], [BITS - 33, 33],
];

/** Deterministic pseudo-random words (xorshift), so a failure reproduces. */
function makeRandom(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x | 0;
  };
}

/** Bitmap contents to start from: empty, full, alternating, and random ones (the outside words are noise). */
function startingBitmaps(random: () => number): Int32Array[] {
  const fill = (f: (w: number) => number) => {
    const a = new Int32Array(WORDS).map(() => random());
    for (let w = 0; w < BITMAP_WORDS; w++) a[AT + w] = f(w);
    return a;
  };
  return [fill(() => 0), fill(() => -1), fill(() => 0x55555555), fill(() => 0x80000001), fill(() => random()), fill(() => random() & random())];
}

function expectSameAsModel(name: string, op: Op, modelOp: (a: Int32Array, s: number, n: number) => unknown, start: Int32Array, s: number, n: number): void {
  const actual = start.slice();
  const expected = start.slice();
  const got = op(actual, AT, s, n);
  const want = modelOp(expected, s, n);
  expect({ name, s, n, got, words: [...actual] }).toEqual({ name, s, n, got: want, words: [...expected] });
}

describe('bit helpers', () => {
  it('bitMask covers [lo, hi) of one word, bit 31 and the whole word included', () => {
    expect(bitMask(0, 1)).toBe(1);
    expect(bitMask(31, 32)).toBe(1 << 31);
    expect(bitMask(0, 32)).toBe(-1);
    expect(bitMask(4, 8)).toBe(0xf0);
    expect(bitMask(1, 32)).toBe(-2);
  });

  it('popcount32 counts the bits of any int32', () => {
    expect(popcount32(0)).toBe(0);
    expect(popcount32(-1)).toBe(32);
    expect(popcount32(1 << 31)).toBe(1);
    expect(popcount32(0x55555555)).toBe(16);
  });
});

describe('bitmap range operations match a bit-at-a-time model', () => {
  for (const [name, op, modelOp] of cases) {
    it(`${name}: edge ranges (empty, bit 31, across words, whole words) on every starting bitmap`, () => {
      for (const start of startingBitmaps(makeRandom(7))) {
        for (const [s, n] of edgeRanges) expectSameAsModel(name, op, modelOp, start, s, n);
      }
    });

    it(`${name}: 2000 random ranges`, () => {
      const random = makeRandom(name.length * 7919);
      const starts = startingBitmaps(random);
      for (let i = 0; i < 2000; i++) {
        const s = (random() >>> 0) % BITS;
        const n = (random() >>> 0) % (BITS - s + 1);
        expectSameAsModel(name, op, modelOp, starts[i % starts.length]!, s, n);
      }
    });
  }
});

describe('bitmap answers at the edges', () => {
  it('n = 0 changes nothing and answers "none"', () => {
    const a = new Int32Array([0, -1, 0]);
    expect(setBitRange(a, 0, 0, 0)).toBeUndefined();
    expect(setBitRangeAtomic(a, 0, 3, 0)).toBe(0);
    expect(clearBitRange(a, 1, 0, 0)).toBe(0);
    expect(clearBitRangeAtomic(a, 1, 7, 0)).toBe(0);
    expect(countSetBits(a, 1, 0, 0)).toBe(0);
    expect(firstSetBit(a, 1, 0, 0)).toBe(-1);
    expect(allBitsSet(a, 0, 0, 0)).toBe(true);
    expect(claimBitRange(a, 0, 0, 0)).toBe(-1);
    expect(claimFirstClearBit(a, 0, 0, 0)).toBe(-1);
    expect([...a]).toEqual([0, -1, 0]);
  });

  it('bit 31 of a word is found, counted, claimed and cleared like any other', () => {
    const a = new Int32Array(2);
    expect(claimFirstClearBit(a, 0, 31, 1)).toBe(31);
    expect(a[0]).toBe(1 << 31);
    expect(firstSetBit(a, 0, 0, 64)).toBe(31);
    expect(countSetBits(a, 0, 0, 64)).toBe(1);
    expect(claimBitRange(a, 0, 30, 4)).toBe(31);
    expect([...a]).toEqual([1 << 31, 0]);
    expect(claimBitRange(a, 0, 32, 32)).toBe(-1);
    expect(a[1]).toBe(-1);
    expect(claimFirstClearBit(a, 0, 31, 33)).toBe(-1);
    expect(clearBitRangeAtomic(a, 0, 31, 2)).toBe(2);
    expect([...a]).toEqual([0, -2]);
  });

  it('a claim that meets a set bit in a later word rolls back the words it took and names that bit', () => {
    const a = new Int32Array(4);
    a[2] = 1 << 5; // bit 69
    expect(claimBitRange(a, 0, 10, 100)).toBe(69);
    expect([...a]).toEqual([0, 0, 1 << 5, 0]);
    // Bits of other owners in the words it touched stay set through the rollback.
    a[0] = 1 << 3;
    a[1] = 1 << 31;
    expect(claimBitRange(a, 0, 4, 60)).toBe(63);
    expect([...a]).toEqual([1 << 3, 1 << 31, 1 << 5, 0]);
  });
});
