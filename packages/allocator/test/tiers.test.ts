// The thread cache, the large and oversized tiers, the retention ledger, and the profile wired through.
import { describe, expect, it } from 'vitest';
import { HeapError } from '@paddock/platform';
import { attachArenaHeap as attachHeap, createArenaHeap as createHeap, type ArenaBackedHeap as Heap } from '../src/heap.js';
import { nextMessage, startWorker } from './workers.js';

const KiB = 1024;
const MiB = 1 << 20;
const GiB = 1 << 30;
const UNIT = 16 * KiB;
// Large sizes served from arena units: spans that pack an arena well (four or two whole blocks fill at least 15/16
// of its usable units). 2 MiB and 4 MiB do not while an arena keeps 2 header units (three of 128 units fill 75% of
// 510): those are oversized mappings.
const LARGE_A = 120 * UNIT; // 1.875 MiB
const LARGE_B = 240 * UNIT; // 3.75 MiB

function arenaOf(heap: Heap, p: number): number {
  return (p & ~(8 * MiB - 1)) >>> 0;
}

describe('thread cache', () => {
  it('depth follows the profile budget', () => {
    const depth = (profile: number) => createHeap({ maxBytes: 256 * MiB, profile }).threadCache.stats().depth;
    expect(depth(1)[9]).toBe(4); // the 16 KiB class
    expect(depth(3)[9]).toBe(40);
    expect(depth(10)[0]).toBe(512); // 32 B
    expect(depth(3)).toEqual([512, 512, 512, 512, 512, 512, 320, 160, 80, 40, 20, 10, 8, 8, 8, 8]);
  });

  it("a foreign free is cached and the freeing agent's next allocation returns it", () => {
    const owner = createHeap({ maxBytes: 2 * GiB });
    const other = attachHeap(owner.handle);
    const p = owner.malloc(200);
    other.free(p);
    expect(other.stats().cacheBlocks[3]).toBe(1);
    expect(other.stats().pendingChainObjects).toBe(0);
    expect(() => other.free(p)).toThrow(HeapError); // a double free through the cache is caught
    expect(other.malloc(256)).toBe(p);
    expect(other.stats().ownerSlot).toBe(0); // served from the cache: it still owns nothing
    other.free(p);
    expect(other.flushCache()).toBe(1); // the cache only sends blocks home when told (or full)
    other.flush();
    expect(owner.drain()).toBe(1);
    owner.check();
  });

  it('never evicts to make room: a free that finds the stack full goes home', () => {
    const heap = createHeap({ maxBytes: 2 * GiB, profile: 1 }); // 16 KiB class depth 4
    const blocks = Array.from({ length: 6 }, () => heap.malloc(16 * KiB));
    for (const b of blocks) heap.free(b);
    expect(heap.stats().cacheBlocks[9]).toBe(4);
    expect(heap.threadCache.holds(blocks[0]!)).toBe(true);
    expect(heap.threadCache.holds(blocks[5]!)).toBe(false);
    heap.check();
  });

  it('a sized free of the right class takes the same path as an unsized one; a wrong size changes nothing', () => {
    const heap = createHeap({ maxBytes: GiB });
    const a = heap.malloc(100); // 128-byte class
    const b = heap.malloc(100);
    expect(() => heap.free(a, 129)).toThrow(expect.objectContaining({ code: 'WRONG_SIZE' }));
    expect(() => heap.free(a, 64)).toThrow(expect.objectContaining({ code: 'WRONG_SIZE' }));
    expect(() => heap.free(a, 100.5)).toThrow(RangeError);
    expect(heap.threadCache.holds(a)).toBe(false);
    heap.free(a, 128);
    heap.free(b, 65);
    expect(heap.threadCache.holds(a)).toBe(true);
    expect(heap.threadCache.holds(b)).toBe(true);
    expect(() => heap.free(a, 128)).toThrow(expect.objectContaining({ code: 'DOUBLE_FREE' }));
    expect(heap.malloc(128)).toBe(b);
    heap.check();
  });
});

describe('large tier', () => {
  it('a freed large block comes back at the same address, and a second block of twice its size opens a new arena', () => {
    const heap = createHeap({ maxBytes: 2 * GiB });
    const a = heap.malloc(LARGE_A);
    expect(heap.usableSize(a)).toBe(LARGE_A);
    heap.free(a);
    expect(heap.stats().retention.retainedBytes).toBe(LARGE_A);
    expect(heap.malloc(LARGE_A)).toBe(a);
    const b = heap.malloc(LARGE_B);
    const c = heap.malloc(LARGE_B);
    expect(arenaOf(heap, b)).toBe(arenaOf(heap, a));
    expect(arenaOf(heap, c)).not.toBe(arenaOf(heap, a));
    heap.check();
  });

  it('100 rounds of large blocks freed on another worker use at most 4 distinct addresses', async () => {
    const heap = createHeap({ maxBytes: 2 * GiB });
    const w = startWorker('large-freer.mjs', { handle: heap.handle });
    const seen = new Set<number>();
    for (let r = 0; r < 100; r++) {
      const p = heap.malloc(LARGE_B);
      heap.u8[p] = r;
      seen.add(p);
      const freed = nextMessage(w, (m) => m === 'freed');
      w.postMessage(p);
      await freed;
    }
    const done = nextMessage<{ ledger: number; slot: number }>(w, (m) => typeof m === 'object');
    w.postMessage('stop');
    const r = await done;
    await w.terminate();
    expect(seen.size).toBeLessThanOrEqual(4);
    expect(r.ledger).toBe(0); // the freeing agent's ledger stays 0
    expect(r.slot).toBe(0);
    heap.drain();
    expect(heap.stats().retention.ledgerBytes).toBe(LARGE_B); // the owner's ledger holds the last one
    heap.check();
  });

  it("retention admission is all or nothing: with a budget of one span the second free is returned at once", () => {
    const heap = createHeap({ maxBytes: 2 * GiB, pageReturn: 'native' });
    heap.largeTier.budgetBytes = LARGE_B;
    const a = heap.malloc(LARGE_B);
    const b = heap.malloc(LARGE_B); // a span above the decommit span: not left dirty for a sweep
    heap.free(a);
    heap.free(b);
    expect(heap.stats().retention.ledgerBytes).toBe(LARGE_B);
    expect(heap.space.isCommitted(a, LARGE_B)).toBe(true);
    expect(heap.space.isCommitted(b, LARGE_B)).toBe(false);
    heap.check();
  });

  it('a partial carve takes exactly its units off the ledger (mid-arena reuse)', () => {
    const heap = createHeap({ maxBytes: 2 * GiB });
    const a = heap.malloc(LARGE_A); // 120 units at the top of the arena
    heap.free(a);
    expect(heap.stats().retention.retainedBytes).toBe(LARGE_A);
    const b = heap.malloc(1.5 * MiB); // 96 units from the top of the retained run
    expect(b).toBe(a + 24 * UNIT);
    expect(heap.stats().retention.retainedBytes).toBe(LARGE_A - 96 * UNIT);
    expect(heap.stats().retention.ledgerBytes).toBe(24 * UNIT);
    heap.check();
  });

  it('the dirty sweep spares retained units', () => {
    const heap = createHeap({ maxBytes: 2 * GiB, pageReturn: 'native' });
    const big = heap.malloc(LARGE_A);
    // 64 KiB blocks are never cached past depth 8 at rung 3: free 40 of them to make 160 dirty units.
    const blocks = Array.from({ length: 48 }, () => heap.malloc(64 * KiB));
    heap.free(big);
    for (const p of blocks) heap.free(p);
    expect(heap.engine.stats().dirtyUnits).toBeGreaterThanOrEqual(32); // at the threshold: a sweep is due
    heap.engine.sweepDue(true);
    expect(heap.engine.stats().dirtyUnits).toBe(0);
    expect(heap.space.isCommitted(big, LARGE_A)).toBe(true);
    expect(heap.stats().retention.retainedBytes).toBe(LARGE_A);
    heap.check();
    expect(heap.purgeRetention()).toBe(LARGE_A);
    expect(heap.space.isCommitted(big, LARGE_A)).toBe(false);
    expect(heap.stats().retention.ledgerBytes).toBe(0);
    heap.check();
  });

  it("the owner's ledger is credited for a cross-agent free and the freeing agent's stays 0", () => {
    const owner = createHeap({ maxBytes: 2 * GiB });
    const other = attachHeap(owner.handle);
    const p = owner.malloc(LARGE_B);
    other.free(p);
    other.flush();
    expect(other.stats().retention.ledgerBytes).toBe(0);
    expect(owner.drain()).toBe(1);
    expect(owner.stats().retention.ledgerBytes).toBe(LARGE_B);
    owner.check();
  });

  it('a size that stays in arenas is served as a mapping when no arena can be carved', () => {
    const heap = createHeap({ maxBytes: 256 * MiB }); // 64 MiB regions: the lowest 64 MiB can never be one
    expect(heap.largeTier.inArena(LARGE_A)).toBe(true);
    const got: number[] = [];
    try {
      for (;;) got.push(heap.malloc(LARGE_A));
    } catch (e) {
      expect((e as HeapError).code).toBe('OUT_OF_MEMORY');
    }
    const mapped = got.filter((p) => heap.largeTier.isMapping(p));
    expect(mapped.length).toBeGreaterThan(20); // most of the lowest 64 MiB
    expect(mapped.every((p) => p < 64 * MiB)).toBe(true);
    expect(got.length - mapped.length).toBe(3 * 31); // one block per arena of three regions
    expect((got.length * LARGE_A) / (256 * MiB)).toBeGreaterThan(0.85);
    heap.check();
    for (const p of got) heap.free(p);
    heap.check();
  });

  it("sizes of an arena's usable size minus k x 16 KiB (k = 0..30) cross the large/oversized boundary cleanly", () => {
    const heap = createHeap({ maxBytes: 4 * GiB });
    const max = heap.largeMax;
    expect(max).toBe(512 * UNIT); // the whole 8 MiB arena
    for (let k = 0; k <= 30; k++) {
      for (const size of [max - k * UNIT, max - k * UNIT + 1]) {
        const p = heap.malloc(size);
        const u8 = heap.u8;
        u8[p] = 0xa5;
        u8[p + size - 1] = 0x5a;
        expect(heap.usableSize(p)).toBeGreaterThanOrEqual(size);
        expect(heap.largeTier.isMapping(p)).toBe(size > max); // every span from 480 units up packs an arena
        expect(u8[p]).toBe(0xa5);
        heap.free(p);
      }
    }
    heap.check();
  });
});

describe('oversized tier', () => {
  it('192 MiB and 256 MiB allocations work', () => {
    const heap = createHeap({ maxBytes: 4 * GiB });
    for (const size of [192 * MiB, 256 * MiB]) {
      const p = heap.malloc(size);
      expect(heap.largeTier.isMapping(p)).toBe(true);
      expect(heap.usableSize(p)).toBe(size);
      heap.u8[p + size - 1] = 7;
      heap.free(p);
    }
    heap.check();
  });

  it('a freed mapping is stashed and re-served at the same address, grown and shrunk within its reservation', () => {
    const heap = createHeap({ maxBytes: 4 * GiB, profile: 10 });
    const p = heap.malloc(15 * MiB); // reservation 15 MiB + 64 KiB
    heap.free(p);
    expect(heap.stats().retention.stashEntries).toBe(1);
    expect(() => heap.free(p)).toThrow(HeapError);
    const grown = heap.malloc(15 * MiB);
    expect(grown).toBe(p);
    expect(heap.space.isCommitted(p, 15 * MiB)).toBe(true);
    heap.free(grown);
    const shrunk = heap.malloc(8.5 * MiB); // needs 8.5 MiB + 64 KiB: the stashed mapping is less than twice that
    expect(shrunk).toBe(p);
    expect(heap.space.isCommitted(p + 9 * MiB, 4096)).toBe(false); // the excess went back
    heap.free(shrunk);
    const other = heap.malloc(31 * MiB); // more than the stashed reservation: a new mapping
    expect(other).not.toBe(p);
    heap.free(other);
    heap.check();
  });

  it('mappings of sizes that pack an arena badly, freed on another worker: found by the region map, into its stash', async () => {
    const heap = createHeap({ maxBytes: 2 * GiB });
    const w = startWorker('large-freer.mjs', { handle: heap.handle });
    const sizes = [5 * MiB, MiB + 1, 3 * MiB, 9 * MiB + 12345];
    for (const size of sizes) expect(heap.largeTier.inArena(size)).toBe(false);
    const reserved = heap.space.reservedBytes;
    const got: number[] = [];
    for (let r = 0; r < 40; r++) {
      const size = sizes[r % sizes.length]!;
      const p = heap.malloc(size);
      expect(heap.largeTier.isMapping(p)).toBe(true);
      expect(heap.engine.regions.inRegion(p)).toBe(false);
      expect((p - 16 * KiB) % (64 * KiB)).toBe(0);
      heap.u8[p] = r;
      heap.u8[p + size - 1] = r;
      got.push(p);
      const freed = nextMessage(w, (m) => m === 'freed');
      w.postMessage(p);
      await freed;
      // Stashed by the worker (DOUBLE_FREE) or released at once (BAD_POINTER: no mapping there any more).
      expect(() => heap.free(p)).toThrow(HeapError);
    }
    const done = nextMessage<{ ledger: number; slot: number }>(w, (m) => typeof m === 'object');
    w.postMessage('stop');
    const r = await done;
    await w.terminate();
    expect(r.slot).toBe(0); // the freeing agent never carved an arena
    expect(r.ledger).toBeGreaterThan(0); // its stash holds what it freed, within its budget
    expect(heap.space.reservedBytes - reserved).toBeLessThanOrEqual(16 * MiB + 2 * (9 * MiB + 128 * KiB)); // its stash, and no leak
    heap.check();
  });

  it('the one eviction: the oldest stashed mapping goes when its size differs and evicting it lets the free fit', () => {
    const heap = createHeap({ maxBytes: 4 * GiB });
    const tier = heap.largeTier;
    const a = heap.malloc(9 * MiB); // 9 MiB + 64 KiB reservation, 9 MiB + 4 KiB committed
    const b = heap.malloc(9 * MiB);
    const c = heap.malloc(20 * MiB); // 20 MiB + 64 KiB reservation
    const d = heap.malloc(9 * MiB + 100); // the same reservation as a
    tier.budgetBytes = 12 * MiB;
    heap.free(a); // stashed
    heap.free(b); // would not fit; the oldest (a) has the same reservation size: b is returned at once
    expect(tier.stashed()).toEqual([a]);
    heap.free(d); // same size as a again: returned at once
    expect(tier.stashed()).toEqual([a]);
    tier.budgetBytes = 24 * MiB;
    heap.free(c); // 20 MiB + 4 KiB does not fit beside a; a differs in size and evicting it lets c fit
    expect(tier.stashed()).toEqual([c]);
    expect(heap.space.isReserved(a - 16 * KiB, 64 * KiB)).toBe(false);
    heap.check();
  });
});

describe('the allocation contract across tiers', () => {
  it('a ladder up to 3 MiB is aligned and non-overlapping', () => {
    const heap = createHeap({ maxBytes: 2 * GiB });
    const got: [number, number][] = [];
    for (let size = 1; size <= 3 * MiB; size = Math.ceil(size * 1.37) + 1) {
      const p = heap.malloc(size);
      const usable = heap.usableSize(p);
      expect(usable).toBeGreaterThanOrEqual(size);
      expect(p % Math.min(usable >= 32 ? 2 ** Math.floor(Math.log2(usable)) : 32, 16 * KiB)).toBe(0);
      for (const [q, n] of got) expect(p + size <= q || q + n <= p).toBe(true);
      got.push([p, size]);
    }
    heap.check();
  });

  it('realloc: same pointer within a class or the same rounded large size, contents kept when it moves', () => {
    const heap = createHeap({ maxBytes: 2 * GiB });
    const big = heap.malloc(LARGE_B - 1000);
    expect(heap.realloc(big, LARGE_B - 100)).toBe(big); // same 1 KiB-rounded size
    heap.u8.fill(9, big, big + 64);
    const small = heap.realloc(big, 40); // shrinking from above 1 MiB into a class
    expect(small).not.toBe(big);
    expect([...heap.u8.subarray(small, small + 40)].every((v) => v === 9)).toBe(true);
    expect(heap.stats().retention.retainedBytes).toBe(LARGE_B); // all 240 units of the old block
    expect(() => heap.free(big)).toThrow(HeapError); // the old block was freed with its real size
    const huge = heap.realloc(small, 50 * MiB);
    expect([...heap.u8.subarray(huge, huge + 40)].every((v) => v === 9)).toBe(true);
    expect(heap.realloc(huge, 60 * MiB)).toBe(huge); // the granules after it are free: grown in place
    expect(heap.realloc(huge, 20 * MiB)).toBe(huge); // shrunk in place, its tail given back
    expect(heap.space.isReserved(huge + 20 * MiB + 48 * KiB, 64 * KiB)).toBe(false);
    expect([...heap.u8.subarray(huge, huge + 40)].every((v) => v === 9)).toBe(true);
    heap.free(huge);
    heap.check();
  });
});

describe('the profile', () => {
  it('can change before any agent attaches or allocates, and not after', () => {
    const heap = createHeap({ maxBytes: 256 * MiB });
    heap.setProfile(7);
    expect(heap.profile).toBe(7);
    expect(attachHeap(heap.handle).profile).toBe(7);
    expect(() => heap.setProfile(2)).toThrow(/before any agent attaches/);
    expect(() => createHeap({ maxBytes: 256 * MiB }).setProfile(0)).toThrow(RangeError);
  });

  it('the rungs trade memory for speed: retention at rung 1 returns every freed large block', () => {
    const low = createHeap({ maxBytes: 2 * GiB, profile: 1 });
    const p = low.malloc(LARGE_A);
    low.free(p);
    expect(low.stats().retention.ledgerBytes).toBe(0);
    const high = createHeap({ maxBytes: 2 * GiB, profile: 10 });
    const q = high.malloc(LARGE_A);
    high.free(q);
    expect(high.stats().retention.ledgerBytes).toBe(LARGE_A);
  });
});
