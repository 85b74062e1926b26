// Bad input gets a typed error and leaves the heap exactly as it was (check() passes, stats unchanged,
// the free lists serve the same objects); damage the pool can see is reported as CORRUPTION.
import { describe, expect, it } from 'vitest';
import { HeapError, openAddressSpace } from '@paddock/platform';
import { ClassicPool } from '../src/index.js';
import { GiB, MiB, heapErrorOf, makePool } from './helpers.js';

/** A pool with some live and some free blocks of several kinds. */
function setup() {
  const { space, pool } = makePool();
  const live = { small: pool.malloc(100), mid: pool.malloc(5000), large: pool.malloc(3 * MiB), one: pool.malloc(MiB) };
  const freed = { small: pool.malloc(100), large: pool.malloc(2 * MiB) };
  pool.free(freed.small);
  pool.free(freed.large);
  return { space, pool, live, freed };
}

describe('bad sizes are RangeErrors', () => {
  const { pool } = setup();
  it.each([
    ['negative', -1],
    ['NaN', Number.NaN],
    ['fractional', 1.5],
    ['a string', '64'],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['larger than the space', GiB + 1],
    ['undefined', undefined],
    ['null', null],
    ['true', true],
  ])('malloc(%s)', (_name, size) => {
    const before = JSON.stringify(pool.stats());
    expect(() => pool.malloc(size as never)).toThrow(RangeError);
    expect(JSON.stringify(pool.stats())).toBe(before);
    pool.check();
  });
});

describe('bad pointers are HeapErrors with a code, and change nothing', () => {
  type Case = [string, (s: ReturnType<typeof setup>) => number, string];
  const cases: Case[] = [
    ['a misaligned small pointer', (s) => s.live.small + 4, 'MISALIGNED'],
    ['a pointer inside a small object, on a smaller class boundary', (s) => s.live.small + 64, 'MISALIGNED'],
    ['an object of a class block that was never handed out', (s) => s.live.small + 128 * 10, 'BAD_POINTER'],
    ['the pool header (no block of the pool starts there)', (s) => s.pool.headerAddress + 64, 'BAD_POINTER'],
    ['an address past the end of the space', () => 2 * GiB, 'BAD_POINTER'],
    ['a negative address', () => -64, 'BAD_POINTER'],
    ['a fractional address', (s) => s.live.small + 0.5, 'BAD_POINTER'],
    ['a string', () => '4096' as never, 'BAD_POINTER'],
    ['NaN', () => Number.NaN, 'BAD_POINTER'],
    ['a misaligned large pointer', (s) => s.live.large + 8, 'MISALIGNED'],
    ['a page inside a large block', (s) => s.live.large + 4096, 'BAD_POINTER'],
    ['a MiB inside a large block', (s) => s.live.large + MiB, 'BAD_POINTER'],
    ['a freed small object (double free)', (s) => s.freed.small, 'DOUBLE_FREE'],
    ['a freed large block (double free)', (s) => s.freed.large, 'DOUBLE_FREE'],
  ];
  for (const [name, ptr, code] of cases) {
    it(`free of ${name}: ${code}`, () => {
      const s = setup();
      const p = ptr(s);
      const before = JSON.stringify(s.pool.stats());
      const err = heapErrorOf(() => s.pool.free(p));
      expect(err).toBeInstanceOf(HeapError);
      expect(err.code).toBe(code);
      expect(JSON.stringify(s.pool.stats())).toBe(before);
      s.pool.check();
      // The lists are as they were: the freed objects come back, the live ones are still live.
      expect(s.pool.malloc(100)).toBe(s.freed.small);
      expect(s.pool.malloc(2 * MiB)).toBe(s.freed.large);
      for (const q of Object.values(s.live)) expect(s.pool.usableSize(q)).toBeGreaterThan(0);
      s.pool.check();
    });
  }

  it('free(0) does nothing', () => {
    const s = setup();
    const before = JSON.stringify(s.pool.stats());
    s.pool.free(0);
    expect(JSON.stringify(s.pool.stats())).toBe(before);
  });

  it('usableSize and realloc reject the same pointers', () => {
    const s = setup();
    expect(heapErrorOf(() => s.pool.usableSize(s.freed.small)).code).toBe('BAD_POINTER');
    expect(heapErrorOf(() => s.pool.usableSize(s.freed.large)).code).toBe('BAD_POINTER');
    expect(heapErrorOf(() => s.pool.usableSize(s.live.small + 4)).code).toBe('MISALIGNED');
    expect(heapErrorOf(() => s.pool.realloc(s.live.large + MiB, 10)).code).toBe('BAD_POINTER');
    expect(heapErrorOf(() => s.pool.realloc(s.freed.small, 10)).code).toBe('DOUBLE_FREE');
    s.pool.check();
  });

  it('a double free from another agent is caught too, small and large', () => {
    const s = setup();
    const other = ClassicPool.open(openAddressSpace(s.space.handle));
    expect(heapErrorOf(() => other.free(s.freed.small)).code).toBe('DOUBLE_FREE');
    expect(heapErrorOf(() => other.free(s.freed.large)).code).toBe('DOUBLE_FREE');
    other.free(s.live.small);
    expect(heapErrorOf(() => s.pool.free(s.live.small)).code).toBe('DOUBLE_FREE');
    other.free(s.live.large);
    expect(heapErrorOf(() => s.pool.free(s.live.large)).code).toBe('DOUBLE_FREE');
    other.check();
    s.pool.check();
  });
});

describe('damage is reported as CORRUPTION', () => {
  it('an object written after free: the next malloc of its class and check() throw', () => {
    const { space, pool } = makePool();
    const p = pool.malloc(200);
    pool.free(p);
    space.i32[(p >>> 2) + 1] = 12345; // the free mark's word
    expect(heapErrorOf(() => pool.check()).code).toBe('CORRUPTION');
    expect(heapErrorOf(() => pool.malloc(200)).code).toBe('CORRUPTION');
  });

  it('a free-list link redirected to a live object', () => {
    const { space, pool } = makePool();
    const live = pool.malloc(64);
    const a = pool.malloc(64);
    pool.free(a);
    space.u32[a >>> 2] = live; // a's next now points at a live object
    expect(heapErrorOf(() => pool.check()).code).toBe('CORRUPTION');
    expect(pool.malloc(64)).toBe(a);
    expect(heapErrorOf(() => pool.malloc(64)).code).toBe('CORRUPTION');
  });

  it('a cycle in a free list', () => {
    const { space, pool } = makePool();
    const ps = [pool.malloc(32), pool.malloc(32), pool.malloc(32)];
    for (const p of ps) pool.free(p);
    space.u32[ps[0]! >>> 2] = ps[2]!; // the tail links back to the head
    expect(heapErrorOf(() => pool.check()).message).toMatch(/longer than its length/);
  });

  it('a list on the global stack with a damaged length', () => {
    const { space, pool } = makePool();
    const p = pool.malloc(32);
    pool.free(p);
    pool.flush();
    space.u32[(p >>> 2) + 2] = 999_999;
    expect(heapErrorOf(() => pool.check()).code).toBe('CORRUPTION');
    const other = ClassicPool.open(openAddressSpace(space.handle));
    expect(heapErrorOf(() => other.malloc(32)).code).toBe('CORRUPTION');
  });

  it('a MiB table entry inside a large block', () => {
    const { space, pool } = makePool();
    const p = pool.malloc(4 * MiB);
    const hdr = new Int32Array(space.buffer, pool.headerAddress, 64 + 3 * 1024);
    hdr[64 + p / MiB + 1] = 1; // claims a class-0 block in the middle of the large one
    expect(heapErrorOf(() => pool.check()).message).toMatch(/inside the large block/);
  });
});

describe('check() records what it has seen in a bitmap, not a set', () => {
  it('an object forged onto two lists on the global stack is reported', () => {
    const { space, pool } = makePool();
    const x = pool.malloc(32);
    const y = pool.malloc(32);
    pool.free(x);
    pool.flush(); // x alone on the global stack
    pool.free(y);
    pool.flush(); // y alone on the global stack, above x's list
    pool.check();
    space.u32[y >>> 2] = x; // y's list now runs on into x ...
    space.u32[(y >>> 2) + 2] = 2; // ... and says it is two objects long: x is on two lists
    expect(heapErrorOf(() => pool.check()).message).toMatch(/is on two free lists/);
  });

  it('a heap of more than 2^24 free objects (the most a Set holds) checks clean', () => {
    const { pool } = makePool();
    const count = 17_500_000; // 534 MiB of 32-byte objects
    const live = new Uint32Array(count);
    for (let i = 0; i < count; i++) live[i] = pool.malloc(32);
    pool.check();
    for (let i = 0; i < count; i++) pool.free(live[i]!);
    pool.check();
  });
});
