// Bad input: sizes throw RangeError, pointers that name no live block throw HeapError with a code, and a
// refused call leaves the heap exactly as it was (the buffer and the pool's counts).
import { describe, expect, it } from 'vitest';
import { MiB, makePool, thrownBy } from './helpers.js';

describe('bad input', () => {
  const { space, pool } = makePool(64 * MiB);
  const small = pool.malloc(100); // class 2, 128 B
  const freed = pool.malloc(100);
  pool.free(freed);
  const big = pool.malloc(2 * MiB);
  const gone = pool.malloc(3 * MiB);
  pool.free(gone);

  const sizes: [string, unknown][] = [
    ['negative', -1],
    ['fractional', 1.5],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['a string', '64'],
    ['larger than the space', 64 * MiB + 1],
  ];
  const pointers: [string, unknown, string][] = [
    ['negative', -32, 'BAD_POINTER'],
    ['fractional', small + 0.5, 'BAD_POINTER'],
    ['a string', String(small), 'BAD_POINTER'],
    ['past the space', 64 * MiB, 'BAD_POINTER'],
    ['the pool header', 64, 'BAD_POINTER'],
    ['inside a block', small + 8, 'MISALIGNED'],
    ['a block never handed out', small + 2 * 128, 'BAD_POINTER'],
    ['a free block', freed, 'DOUBLE_FREE'],
    ['inside a large block', big + 4096, 'BAD_POINTER'],
    ['a large block freed already', gone, 'BAD_POINTER'],
  ];

  /** The heap's state: the pool's counts, the reserved bytes and a copy of every byte of the buffer. */
  function snapshot(): { counts: string; reserved: number; bytes: Buffer } {
    space.refresh();
    return { counts: JSON.stringify(pool.check()), reserved: space.reservedBytes, bytes: Buffer.from(space.u8) };
  }

  function expectUnchanged(before: ReturnType<typeof snapshot>): void {
    const after = snapshot();
    expect(after.counts).toBe(before.counts);
    expect(after.reserved).toBe(before.reserved);
    expect(after.bytes.equals(before.bytes)).toBe(true);
  }

  it.each(sizes)('malloc(%s) throws RangeError and changes nothing', (_, size) => {
    const before = snapshot();
    expect(() => pool.malloc(size as number)).toThrow(RangeError);
    expectUnchanged(before);
  });

  it.each(pointers)('free(%s) throws HeapError %s and changes nothing', (_, ptr, code) => {
    const before = snapshot();
    expect(thrownBy(() => pool.free(ptr as number))).toMatchObject({ name: 'HeapError', code });
    expectUnchanged(before);
  });

  it.each(pointers)('usableSize(%s) throws HeapError %s', (_, ptr, code) => {
    expect(thrownBy(() => pool.usableSize(ptr as number))).toMatchObject({ name: 'HeapError', code });
  });

  it('free(0) does nothing; the live blocks are still live', () => {
    pool.free(0);
    expect(pool.usableSize(small)).toBe(128);
    expect(pool.usableSize(big)).toBeGreaterThanOrEqual(2 * MiB);
    expect(pool.check().liveBytes).toBe(128 + pool.usableSize(big));
  });
});
