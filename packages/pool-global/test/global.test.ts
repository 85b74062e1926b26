// One agent: malloc, free and usableSize over every class and large sizes; create and open; check().
import { describe, expect, it } from 'vitest';
import { GlobalPool, LARGE_HEADER, classIndex, classSize } from '../src/index.js';
import { MiB, makePool, sizeLadder } from './helpers.js';

describe('one agent', () => {
  it('every size gets a block of its class (aligned to it) or a large block, usable as asked, and frees back', () => {
    const { space, pool } = makePool();
    const live = sizeLadder().map((size) => {
      const p = pool.malloc(size);
      const usable = pool.usableSize(p);
      expect(usable).toBeGreaterThanOrEqual(size);
      if (size <= MiB) {
        expect(usable).toBe(classSize(classIndex(size)));
        expect(p % usable).toBe(0);
      } else {
        expect(p % MiB).toBe(LARGE_HEADER);
        expect(usable).toBe(Math.ceil((size + LARGE_HEADER) / 4096) * 4096 - LARGE_HEADER);
      }
      space.covers(p + usable);
      space.u8.fill(0xab, p, p + usable); // the whole usable range is writable and overlaps nothing
      return [p, usable] as const;
    });
    for (const [p, usable] of live) expect(space.u8[p + usable - 1]).toBe(0xab);
    expect(pool.check().liveBytes).toBe(live.reduce((sum, [, u]) => sum + u, 0));
    const reserved = space.reservedBytes;
    for (const [p] of live) pool.free(p);
    const counts = pool.check();
    expect(counts.liveBytes).toBe(0);
    expect(counts.largeBlocks).toBe(0);
    expect(space.reservedBytes).toBeLessThan(reserved); // large blocks gave their addresses back
  });

  it('reuses the last freed block of a class first, and carves a slab in order', () => {
    const { pool } = makePool();
    for (let c = 0; c < 16; c++) {
      const size = classSize(c);
      const a = pool.malloc(size);
      const b = pool.malloc(size);
      if (c < 15) expect(b - a).toBe(size);
      pool.free(a);
      pool.free(b);
      expect(pool.malloc(size)).toBe(b);
      expect(pool.malloc(size)).toBe(a);
      pool.free(a);
      pool.free(b);
    }
    const counts = pool.check();
    for (const k of counts.perClass) expect([k.carved, k.free, k.live]).toEqual([2, 2, 0]);
  });

  it('moves on to a fresh slab when one is used up', () => {
    const { pool } = makePool();
    const size = 64 * 1024;
    const blocks = Array.from({ length: 17 }, () => pool.malloc(size));
    expect(new Set(blocks.map((p) => Math.floor(p / MiB))).size).toBe(2);
    expect(pool.check().perClass[classIndex(size)]).toMatchObject({ slabs: 2, carved: 17, live: 17 });
    for (const p of blocks) pool.free(p);
    expect(pool.check().perClass[classIndex(size)]).toMatchObject({ free: 17, live: 0 });
  });

  it('a second agent opens the pool and frees and reuses the first agent blocks', async () => {
    const { space, pool } = makePool();
    const { openAddressSpace } = await import('@paddock/platform');
    const other = GlobalPool.open(openAddressSpace(space.handle));
    const p = pool.malloc(100);
    const big = pool.malloc(2 * MiB);
    other.free(p);
    other.free(big);
    expect(pool.malloc(100)).toBe(p);
    expect(other.check().liveBytes).toBe(128);
  });

  it('create refuses a space that holds a pool; open refuses one that holds none', async () => {
    const { space } = makePool();
    expect(() => GlobalPool.create(space)).toThrow(expect.objectContaining({ code: 'BAD_HANDLE' }));
    const { createAddressSpace } = await import('@paddock/platform');
    expect(() => GlobalPool.open(createAddressSpace({ maxBytes: 64 * MiB }))).toThrow(expect.objectContaining({ code: 'BAD_HANDLE' }));
    expect(() => GlobalPool.create({} as never)).toThrow(TypeError);
  });
});

describe('check() records what it has seen in a bitmap, not a set', () => {
  it('a block forged onto its free list twice is reported', () => {
    const { space, pool } = makePool();
    const blocks = Array.from({ length: 10 }, () => pool.malloc(32));
    const [a, b, c] = blocks as [number, number, number];
    for (const p of [a, b, c]) pool.free(p); // the list: c -> b -> a
    pool.check();
    space.u32[a >>> 2] = b; // a links back to b: c -> b -> a -> b, fewer blocks than carved
    expect(() => pool.check()).toThrow(/names a block twice/);
  });

  it('a heap of more than 2^24 free blocks (the most a Set holds) checks clean', () => {
    const { pool } = makePool(1024 * MiB);
    const count = 17_500_000; // 534 MiB of 32-byte blocks
    const live = new Uint32Array(count);
    for (let i = 0; i < count; i++) live[i] = pool.malloc(32);
    pool.check();
    for (let i = 0; i < count; i++) pool.free(live[i]!);
    expect(pool.check().perClass[0]!.free).toBe(count);
  });
});
