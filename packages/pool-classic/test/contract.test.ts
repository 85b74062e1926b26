// The allocator contract on the classic pool: every class and a size ladder up to 3 MiB, realloc, calloc,
// reuse, create/open, every backing, and pointers above 2 GiB.
import { describe, expect, it } from 'vitest';
import { HeapError, createAddressSpace, openAddressSpace, type AddressSpace, type AddressSpaceOptions } from '@paddock/platform';
import { ClassicPool, MAX_CLASS_SIZE, classIndex, classSize } from '../src/index.js';
import { checkPattern, fillPattern } from './workers/pattern.mjs';
import { GiB, MiB, heapErrorOf, makePool, overlaps, sizeLadder } from './helpers.js';

/** Allocates the whole ladder, checks the contract, frees it all; returns the pointers. */
function ladderContract(space: AddressSpace, pool: ClassicPool): number[] {
  const sizes = sizeLadder();
  const got: { p: number; size: number; usable: number }[] = [];
  for (const size of sizes) {
    const p = pool.malloc(size);
    const usable = pool.usableSize(p);
    expect(p, `malloc(${size})`).toBeGreaterThan(0);
    expect(usable).toBeGreaterThanOrEqual(size);
    if (size <= MAX_CLASS_SIZE) {
      expect(usable).toBe(classSize(classIndex(size)));
      expect(p % usable, `class object of ${usable} bytes aligned to its size`).toBe(0);
    } else {
      expect(usable).toBe(Math.ceil(size / 4096) * 4096);
      expect(p % MiB, 'large blocks start on a MiB').toBe(0);
    }
    space.covers(p + usable);
    fillPattern(space.u8, p, usable, p ^ size);
    got.push({ p, size, usable });
  }
  const sorted = [...got].sort((a, b) => a.p - b.p);
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    expect(overlaps(a.p, a.usable, b.p, b.usable), `blocks at ${a.p} and ${b.p} overlap`).toBe(false);
  }
  for (const { p, size, usable } of got) expect(checkPattern(space.u8, p, usable, p ^ size), `pattern of ${size}-byte block`).toBe(-1);
  pool.check();
  for (const { p } of got) pool.free(p);
  pool.check();
  return got.map((g) => g.p);
}

describe('contract', () => {
  it('every class and a size ladder up to 3 MiB: non-zero, aligned, non-overlapping, usable', () => {
    const { space, pool } = makePool();
    expect(pool.backend).toBe('pool_classic');
    ladderContract(space, pool);
    expect(pool.stats().liveBytes).toBe(0);
  });

  it('freed memory is reused: the same ladder again gets the same class objects', () => {
    const { space, pool } = makePool();
    const first = ladderContract(space, pool);
    const reserved = space.reservedBytes;
    const second = ladderContract(space, pool);
    // Small objects come back LIFO from the free lists; large ones first-fit from the large list, so no
    // address space is reserved for the second round.
    const small = sizeLadder().filter((s) => s <= MAX_CLASS_SIZE).length;
    expect(new Set(second.slice(0, small))).toEqual(new Set(first.slice(0, small)));
    expect(space.reservedBytes).toBe(reserved);
  });

  it('free then malloc of the same class returns the same pointer, last freed first', () => {
    const { pool } = makePool();
    const a = pool.malloc(100);
    const b = pool.malloc(120);
    const c = pool.malloc(128);
    pool.free(a);
    pool.free(c);
    pool.free(b);
    expect(pool.malloc(97)).toBe(b);
    expect(pool.malloc(128)).toBe(c);
    expect(pool.malloc(65)).toBe(a);
    // Another class does not take them.
    pool.free(a);
    expect(pool.malloc(64)).not.toBe(a);
    expect(pool.malloc(100)).toBe(a);
  });

  it('malloc(0) gives a minimal non-zero block, distinct each time', () => {
    const { pool } = makePool();
    const a = pool.malloc(0);
    const b = pool.malloc(0);
    expect(a).toBeGreaterThan(0);
    expect(b).not.toBe(a);
    expect(pool.usableSize(a)).toBe(32);
  });

  describe('realloc', () => {
    it('null acts as malloc', () => {
      const { pool } = makePool();
      const p = pool.realloc(0, 100);
      expect(p).toBeGreaterThan(0);
      expect(pool.usableSize(p)).toBe(128);
      const q = pool.realloc(0, 2 * MiB);
      expect(pool.usableSize(q)).toBe(2 * MiB);
    });

    it('the same class keeps the pointer; another class moves, copies min(old, new) and frees the old block', () => {
      const { space, pool } = makePool();
      const p = pool.malloc(100);
      fillPattern(space.u8, p, 128, 7);
      expect(pool.realloc(p, 128)).toBe(p);
      expect(pool.realloc(p, 65)).toBe(p);
      const q = pool.realloc(p, 129);
      expect(q).not.toBe(p);
      expect(pool.usableSize(q)).toBe(256);
      expect(checkPattern(space.u8, q, 128, 7)).toBe(-1);
      expect(heapErrorOf(() => pool.usableSize(p)).code).toBe('BAD_POINTER'); // the old block is free
      // Shrinking copies only the new size.
      fillPattern(space.u8, q, 256, 9);
      const r = pool.realloc(q, 10);
      expect(pool.usableSize(r)).toBe(32);
      expect(checkPattern(space.u8, r, 10, 9)).toBe(-1);
      expect(pool.malloc(200)).toBe(q); // q was freed and is reused
      expect(pool.malloc(100)).toBe(p);
      pool.check();
    });

    it('the same rounded large size keeps the pointer; another size moves and copies', () => {
      const { space, pool } = makePool();
      const p = pool.malloc(3 * MiB);
      fillPattern(space.u8, p, 3 * MiB, 11);
      expect(pool.realloc(p, 3 * MiB - 4095)).toBe(p);
      expect(pool.usableSize(p)).toBe(3 * MiB);
      const q = pool.realloc(p, 3 * MiB + 1);
      expect(q).not.toBe(p);
      expect(pool.usableSize(q)).toBe(3 * MiB + 4096);
      expect(checkPattern(space.u8, q, 3 * MiB, 11)).toBe(-1);
      expect(heapErrorOf(() => pool.usableSize(p)).code).toBe('BAD_POINTER');
      const r = pool.realloc(q, 2 * MiB);
      expect(r).not.toBe(q);
      expect(checkPattern(space.u8, r, 256, 11)).toBe(-1);
      pool.check();
    });

    it('shrinking from above 1 MiB into a class frees the old block with its real size', () => {
      const { space, pool } = makePool();
      const big = pool.malloc(3 * MiB);
      fillPattern(space.u8, big, 1000, 5);
      const before = pool.stats();
      expect(before.liveBytes).toBe(3 * MiB);
      const small = pool.realloc(big, 1000);
      expect(pool.usableSize(small)).toBe(1024);
      expect(checkPattern(space.u8, small, 1000, 5)).toBe(-1);
      const after = pool.stats();
      expect(after.liveBytes).toBe(1024);
      // The whole 3 MiB block went onto the large list, and serves a 3 MiB request again.
      expect(after.largeFreeBytes - before.largeFreeBytes).toBe(3 * MiB - MiB /* the class block came off the list */);
      expect(pool.malloc(3 * MiB)).toBe(big);
      pool.check();
    });

    it('realloc(p, 0) gives a minimal block; bad sizes and freed pointers throw and change nothing', () => {
      const { pool } = makePool();
      const p = pool.malloc(500);
      const q = pool.realloc(p, 0);
      expect(pool.usableSize(q)).toBe(32);
      expect(() => pool.realloc(q, -1)).toThrow(RangeError);
      expect(() => pool.realloc(q, Number.NaN)).toThrow(RangeError);
      expect(() => pool.realloc(q, 2 * GiB)).toThrow(RangeError);
      expect(pool.usableSize(q)).toBe(32);
      expect(heapErrorOf(() => pool.realloc(p, 10)).code).toBe('DOUBLE_FREE');
      pool.check();
    });
  });

  describe('calloc', () => {
    it('returns zeroed memory, also when it reuses a dirty block', () => {
      const { space, pool } = makePool();
      const p = pool.malloc(4000);
      space.u8.fill(0xee, p, p + 4096);
      pool.free(p);
      const q = pool.calloc(1000, 4);
      expect(q).toBe(p);
      expect(space.u8.subarray(q, q + 4000).every((b) => b === 0)).toBe(true);
      const big = pool.malloc(2 * MiB);
      space.u8.fill(0xdd, big, big + 2 * MiB);
      pool.free(big);
      const z = pool.calloc(2, MiB);
      expect(space.u8.subarray(z, z + 2 * MiB).every((b) => b === 0)).toBe(true);
      expect(pool.calloc(0, 5)).toBeGreaterThan(0);
    });

    it('checks for overflow and bad numbers with a RangeError', () => {
      const { pool } = makePool();
      expect(() => pool.calloc(2 ** 31, 2 ** 31)).toThrow(/more than the heap/);
      expect(() => pool.calloc(2 ** 53, 2)).toThrow(RangeError);
      expect(() => pool.calloc(-1, 8)).toThrow(RangeError);
      expect(() => pool.calloc(8, 1.5)).toThrow(RangeError);
      expect(() => pool.calloc('8' as never, 8)).toThrow(RangeError);
      pool.check();
    });
  });

  describe('create and open', () => {
    it('open finds the pool another agent created; it shares the heap', () => {
      const { space, pool } = makePool();
      const other = ClassicPool.open(openAddressSpace(space.handle));
      const p = pool.malloc(64);
      other.free(p);
      expect(other.malloc(64)).toBe(p);
      expect(other.stats().perClass[1]!.live).toBe(1);
      other.check();
      pool.check();
    });

    it('open without a pool, create twice, and a foreign root word are BAD_HANDLE', () => {
      const space = createAddressSpace({ maxBytes: 64 * MiB });
      expect(heapErrorOf(() => ClassicPool.open(space)).code).toBe('BAD_HANDLE');
      ClassicPool.create(space);
      expect(heapErrorOf(() => ClassicPool.create(space)).code).toBe('BAD_HANDLE');
      const other = createAddressSpace({ maxBytes: 64 * MiB });
      const junk = other.reserve(65536);
      other.commit(junk, 65536);
      other.casRoot(2, 0, junk);
      expect(heapErrorOf(() => ClassicPool.open(other)).code).toBe('BAD_HANDLE');
      expect(() => ClassicPool.create({} as never)).toThrow(TypeError);
      expect(() => ClassicPool.create(createAddressSpace({ maxBytes: 64 * MiB }), { retain: 'yes' as never })).toThrow(TypeError);
    });
  });

  const backings: [string, AddressSpaceOptions][] = [
    ['growable SAB', { maxBytes: 256 * MiB }],
    ['shared wasm memory', { maxBytes: 256 * MiB, backing: 'wasm' }],
    ['fixed SAB', { maxBytes: 256 * MiB, backing: 'fixed' }],
    ['growable SAB without page return', { maxBytes: 256 * MiB, pageReturn: 'none' }],
  ];
  for (const [name, options] of backings) {
    it(`the ladder contract holds on a ${name}, with a second agent freeing`, () => {
      const { space, pool } = makePool({}, options);
      ladderContract(space, pool);
      const other = ClassicPool.open(openAddressSpace(space.handle));
      const ps = sizeLadder().map((s) => pool.malloc(s));
      for (const p of ps) other.free(p);
      other.check();
      pool.check();
      expect(other.stats().liveBytes).toBe(0);
    });
  }

  it('a heap above 2 GiB: every pointer is above 2^31 and the contract still holds', () => {
    const space = createAddressSpace({ maxBytes: 4 * GiB });
    space.reserve(GiB, GiB); // [1 GiB, 2 GiB)
    space.reserve(GiB - space.headerBytes); // the rest below 1 GiB
    const pool = ClassicPool.create(space);
    expect(pool.headerAddress).toBeGreaterThanOrEqual(2 * GiB);
    const ps = ladderContract(space, pool);
    for (const p of ps) expect(p).toBeGreaterThanOrEqual(2 ** 31);
    const other = ClassicPool.open(openAddressSpace(space.handle));
    const q = other.malloc(48);
    pool.free(q);
    expect(pool.malloc(64)).toBe(q);
    const big = other.realloc(other.malloc(100), 2 * MiB);
    expect(big).toBeGreaterThan(2 ** 31);
    pool.free(big);
    other.check();
    pool.check();
  });

  it('running out of address space is an OUT_OF_MEMORY HeapError, and the pool keeps serving', () => {
    const { pool } = makePool({}, { maxBytes: 32 * MiB });
    let err: unknown;
    const got: number[] = [];
    try {
      for (;;) got.push(pool.malloc(4 * MiB));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HeapError);
    expect((err as HeapError).code).toBe('OUT_OF_MEMORY');
    expect(got.length).toBeGreaterThan(3);
    pool.free(got[0]!);
    expect(pool.malloc(4 * MiB)).toBe(got[0]);
    expect(pool.malloc(100)).toBeGreaterThan(0);
    pool.check();
  });
});
