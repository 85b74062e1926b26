// The cache on its own: LIFO per class, bounded by depth, marks what it holds, and flushes everything home.
import { ArenaHeap, FREED_MARK } from '@paddock/arena';
import { createAddressSpace } from '@paddock/platform';
import { resolveProfile } from '@paddock/profile';
import { Regions } from '@paddock/region';
import { Registry } from '@paddock/registry';
import { describe, expect, it } from 'vitest';
import { ThreadCache } from '../src/index.js';

function setup(rung = 3) {
  const space = createAddressSpace({ maxBytes: 1 << 30 });
  const regions = Regions.create(space);
  const registry = Registry.create(space);
  const profile = resolveProfile(rung, regions.geometry.unitsPerArena);
  const arena = new ArenaHeap(space, regions, registry, profile);
  return { space, arena, cache: new ThreadCache(arena, profile.cacheDepth), profile };
}

describe('thread cache', () => {
  it('serves the last block freed of a class first, and marks blocks while it holds them', () => {
    const { arena, cache } = setup();
    const a = arena.malloc(64);
    const b = arena.malloc(64);
    expect(arena.validateFree(a, undefined)).toBe(1);
    expect(cache.push(1, a)).toBe(true);
    expect(cache.push(1, b)).toBe(true);
    expect(arena.i32[(a >>> 2) + 1]).toBe(FREED_MARK ^ a);
    expect(() => arena.validateFree(a, undefined)).toThrow(/double free/);
    expect(cache.pop(1)).toBe(b);
    expect(cache.pop(1)).toBe(a);
    expect(arena.i32[(a >>> 2) + 1]).toBe(0);
    expect(cache.pop(1)).toBe(0);
    expect(cache.pop(2)).toBe(0);
  });

  it('holds at most the depth of each class and never evicts', () => {
    const { arena, cache, profile } = setup(1);
    const depth = profile.cacheDepth[9]!;
    expect(depth).toBe(4);
    const blocks = Array.from({ length: 6 }, () => arena.malloc(16384));
    const taken = blocks.map((p) => cache.push(9, p));
    expect(taken).toEqual([true, true, true, true, false, false]);
    expect(cache.held(9)).toBe(4);
    expect(cache.holds(blocks[0]!)).toBe(true);
    expect(cache.holds(blocks[5]!)).toBe(false);
  });

  it('flush sends every block home and empties every class', () => {
    const { arena, cache } = setup();
    const ps = [32, 64, 4096, 65536].flatMap((size) => [arena.malloc(size), arena.malloc(size)]);
    for (const p of ps) cache.push(arena.validateFree(p, undefined), p);
    expect(cache.stats().bytes).toBe(2 * (32 + 64 + 4096 + 65536));
    expect(cache.flush()).toBe(8);
    expect(cache.stats().bytes).toBe(0);
    expect(arena.stats().liveBytes).toBe(0);
    arena.check();
  });

  it('refuses a depth above 512', () => {
    const { arena } = setup();
    expect(() => new ThreadCache(arena, Array(16).fill(513))).toThrow(RangeError);
  });
});
