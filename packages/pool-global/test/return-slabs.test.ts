// Returning empty slabs, one agent: what goes back, what stays, what is refused after, and a damaged list.
import { describe, expect, it } from 'vitest';
import { classSize } from '../src/index.js';
import { MiB, makePool, thrownBy } from './helpers.js';

describe('returning empty slabs', () => {
  it('every slab whose blocks are all free goes back, the slab being carved included; its pointers are refused after', () => {
    const { space, pool } = makePool();
    const c = 5; // 1 KiB blocks, 1024 to a slab
    const base = space.committedBytes;
    const blocks = Array.from({ length: 3 * 1024 + 10 }, () => pool.malloc(classSize(c)));
    expect(pool.check().perClass[c]!.slabs).toBe(4);
    expect(space.committedBytes - base).toBe(4 * MiB);
    for (const p of blocks) pool.free(p);
    expect(pool.returnEmptySlabs()).toBe(4 * MiB);
    expect(pool.returnedSlabs).toBe(4);
    expect(space.committedBytes).toBe(base);
    expect(pool.check().perClass[c]).toMatchObject({ slabs: 0, carved: 0, free: 0, live: 0 });
    expect(thrownBy(() => pool.free(blocks[0]!)).code).toBe('BAD_POINTER');
    expect(thrownBy(() => pool.usableSize(blocks[5]!)).code).toBe('BAD_POINTER');
    // The class carves a fresh slab afterwards, and a second return finds nothing.
    const p = pool.malloc(classSize(c));
    expect(pool.usableSize(p)).toBe(classSize(c));
    expect(pool.returnEmptySlabs()).toBe(0);
    pool.free(p);
    expect(pool.returnEmptySlabs(c)).toBe(MiB);
    expect(pool.check().liveBytes).toBe(0);
  });

  it('a slab with one live block stays, its free blocks stay listed in their order, and it goes once that block is freed', () => {
    const { pool } = makePool();
    const c = 7; // 4 KiB blocks, 256 to a slab
    const blocks = Array.from({ length: 512 }, () => pool.malloc(classSize(c)));
    const keep = blocks[300]!; // in the second slab
    for (const p of blocks) if (p !== keep) pool.free(p);
    expect(pool.returnEmptySlabs()).toBe(MiB);
    const counts = pool.check().perClass[c]!;
    expect(counts).toMatchObject({ slabs: 1, carved: 256, free: 255, live: 1 });
    expect(pool.usableSize(keep)).toBe(classSize(c));
    // The second slab's free blocks come back last-freed first, as before the return.
    const order = blocks.slice(256).filter((p) => p !== keep).reverse();
    expect(Array.from({ length: 5 }, () => pool.malloc(classSize(c)))).toEqual(order.slice(0, 5));
    for (const p of order.slice(0, 5).reverse()) pool.free(p);
    pool.free(keep);
    expect(pool.returnEmptySlabs(c)).toBe(MiB);
    expect(pool.check().perClass[c]!.slabs).toBe(0);
  });

  it('leaves other classes, large blocks and live blocks alone; a returned MiB serves another class after', () => {
    const { space, pool } = makePool(16 * MiB);
    const small = Array.from({ length: 32 * 1024 }, () => pool.malloc(32)); // one whole class-0 slab
    const other = pool.malloc(100);
    const large = pool.malloc(2 * MiB);
    for (const p of small) pool.free(p);
    pool.free(pool.malloc(100));
    expect(pool.returnEmptySlabs(3)).toBe(0); // class 3 (256 B) has no free list
    expect(pool.returnEmptySlabs(0)).toBe(MiB);
    expect(pool.returnEmptySlabs(2)).toBe(0); // class 2's slab holds `other`
    expect(pool.usableSize(other)).toBe(128);
    expect(pool.usableSize(large)).toBe(2 * MiB + 4096 - 64);
    // The space is small: the MiB the class-0 slab held is used again, by class 15 blocks.
    const big = [];
    for (;;) {
      try {
        big.push(pool.malloc(MiB));
      } catch {
        break;
      }
    }
    expect(big).toContain(Math.floor(small[0]! / MiB) * MiB);
    expect(thrownBy(() => pool.free(small[1]!)).code).toBe('MISALIGNED'); // inside a 1 MiB block, not its start
    for (const p of big) pool.free(p);
    pool.free(other);
    pool.free(large);
    pool.returnEmptySlabs();
    expect(pool.check().liveBytes).toBe(0);
    expect(space.committedBytes).toBeLessThan(MiB);
  });

  it('a damaged link: CORRUPTION, the list cut before it, and the pool consistent after', () => {
    const { space, pool } = makePool();
    const c = 2;
    const blocks = Array.from({ length: 10 }, () => pool.malloc(classSize(c)));
    for (const p of blocks) pool.free(p); // the list: blocks[9] -> blocks[8] -> ... -> blocks[0]
    space.u32[blocks[6]! >>> 2] = 12345; // blocks[6]'s link names no block
    const err = thrownBy(() => pool.returnEmptySlabs(c));
    expect(err.code).toBe('CORRUPTION');
    expect(err.message).toMatch(/class 2's free list names 12345/);
    const counts = pool.check().perClass[c]!;
    expect(counts.free).toBe(4); // blocks[9] .. blocks[6]; the six after the damage are lost to the list
    expect(Array.from({ length: 4 }, () => pool.malloc(classSize(c)))).toEqual(blocks.slice(6).reverse());
  });

  it('a second free racing the return of its slab is refused, and leaves neither the list nor the memory changed', () => {
    const { space, pool } = makePool();
    const c = 15; // 1 MiB blocks: one to a slab
    const p = pool.malloc(classSize(c));
    pool.free(p);
    // Freeze the second free between its checks and its free mark: the slab goes back right then, and its
    // memory is no longer the block's (here zero, as pages the OS took back read).
    const at = (p >>> 2) + 1;
    const load = Atomics.load;
    let returned = 0;
    (Atomics as { load: typeof Atomics.load }).load = ((array: Int32Array, index: number) => {
      if (returned === 0 && array === space.i32 && index === at) {
        (Atomics as { load: typeof Atomics.load }).load = load;
        returned = pool.returnEmptySlabs(c);
        space.i32[at] = 0;
      }
      return load(array, index);
    }) as typeof Atomics.load;
    let err: Error & { code?: string };
    try {
      err = thrownBy(() => pool.free(p));
    } finally {
      (Atomics as { load: typeof Atomics.load }).load = load;
    }
    expect(returned).toBe(MiB);
    expect(err.code).toBe('DOUBLE_FREE');
    expect(err.message).toMatch(/returned meanwhile/);
    expect(space.i32[at]).toBe(0); // the mark it wrote was taken back
    expect(pool.check().perClass[c]).toMatchObject({ slabs: 0, free: 0 }); // nothing pushed
  });

  it('a class out of range is a RangeError', () => {
    const { pool } = makePool();
    expect(() => pool.returnEmptySlabs(16)).toThrow(RangeError);
    expect(() => pool.returnEmptySlabs(-1)).toThrow(RangeError);
  });
});
