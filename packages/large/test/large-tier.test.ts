// The tier on its own: the ledger's admission, parked large blocks, the stash and its one eviction, the cut
// put off, purge, and the reaper's view.
import { ArenaHeap, MAPPING_OFFSET, MP_BASE, MP_KIB, MP_MAKING, MP_MOVING, UNIT } from '@paddock/arena';
import { HeapError, PAGE_SIZE, createAddressSpace, openAddressSpace, type AddressSpace } from '@paddock/platform';
import { resolveProfile } from '@paddock/profile';
import { Regions } from '@paddock/region';
import { Registry } from '@paddock/registry';
import { describe, expect, it } from 'vitest';
import { LargeTier, MAPPING_HEADER_BYTES } from '../src/index.js';

const MiB = 1 << 20;

function setup(budget: number) {
  const space = createAddressSpace({ maxBytes: 2 ** 32 - 65536, pageReturn: 'native' });
  const regions = Regions.create(space);
  const registry = Registry.create(space);
  const arena = new ArenaHeap(space, regions, registry, resolveProfile(3, regions.geometry.unitsPerArena));
  return { space, arena, tier: new LargeTier(space, arena, budget) };
}

/** Another agent of `space`'s heap in this thread (opening the space as a worker would), with its own tier. */
function agentOf(space: AddressSpace, budget: number) {
  const s = openAddressSpace(space.handle, { pageReturn: 'native' });
  const regions = Regions.open(s);
  const arena = new ArenaHeap(s, regions, Registry.open(s), resolveProfile(3, regions.geometry.unitsPerArena));
  return { space: s, arena, tier: new LargeTier(s, arena, budget) };
}

/** Catches what `fn` throws. */
function thrown(fn: () => unknown): (Error & { code?: string }) | undefined {
  try {
    fn();
  } catch (e) {
    return e as Error & { code?: string };
  }
  return undefined;
}

describe('retention ledger', () => {
  it('admits whole spans within the budget, all or nothing', () => {
    const { tier } = setup(4 * MiB);
    expect(tier.admitUnits(128)).toBe(true); // 2 MiB
    expect(tier.admitUnits(192)).toBe(false); // 3 MiB would not fit beside it
    expect(tier.admitUnits(128)).toBe(true);
    expect(tier.stats().ledgerBytes).toBe(4 * MiB);
    tier.unitsTaken(64);
    expect(tier.stats().ledgerBytes).toBe(4 * MiB - 64 * UNIT);
  });

  it('is what the arena asks when a large block is freed', () => {
    const { arena, tier, space } = setup(2 * MiB);
    const a = arena.allocLarge(2 * MiB);
    const b = arena.allocLarge(2 * MiB);
    arena.free(a);
    arena.free(b);
    expect(tier.stats().retainedBytes).toBe(2 * MiB);
    expect(space.isCommitted(a, 2 * MiB)).toBe(true);
    expect(space.isCommitted(b, 2 * MiB)).toBe(false);
    expect(tier.purge()).toBe(2 * MiB);
    expect(tier.stats().ledgerBytes).toBe(0);
    expect(space.isCommitted(a, 2 * MiB)).toBe(false);
    tier.check();
    arena.check();
  });
});

describe('oversized mappings', () => {
  it('are sized to size + 16 KiB rounded up to 64 KiB, at 64 KiB, header 16 KiB before the payload', () => {
    const { tier, arena, space } = setup(64 * MiB);
    expect(tier.reservationFor(arena.largeMax + 1)).toBe(8 * MiB + 64 * 1024); // a whole 8 MiB arena + 1 byte + 16 KiB, in 64 KiB granules
    expect(tier.reservationFor(16 * MiB - MAPPING_HEADER_BYTES)).toBe(16 * MiB);
    expect(tier.reservationFor(16 * MiB - MAPPING_HEADER_BYTES + 1)).toBe(16 * MiB + 64 * 1024);
    expect(tier.reservationFor(1.5 * MiB)).toBe(1.5 * MiB + 64 * 1024);
    const reserved = space.reservedBytes;
    const p = tier.mallocOversized(12 * MiB);
    expect(space.reservedBytes - reserved).toBe(12 * MiB + 64 * 1024);
    expect((p - MAPPING_HEADER_BYTES) % (64 * 1024)).toBe(0);
    expect(tier.isMapping(p)).toBe(true);
    expect(arena.regions.inRegion(p)).toBe(false);
    // Two mappings in a row leave no arena-sized gap between them: the second starts at the first one's end.
    const q = tier.mallocOversized(3 * MiB);
    expect(q).toBe(p + 12 * MiB + 64 * 1024);
    tier.freeOversized(q);
    tier.purge();
    expect(arena.validateFree(p, undefined)).toBe(-1);
    expect(space.isCommitted(p, 12 * MiB)).toBe(true);
    expect(tier.usableSize(p)).toBe(12 * MiB);
    tier.freeOversized(p);
    expect(() => tier.freeOversized(p)).toThrow(HeapError);
    expect(tier.stashed()).toEqual([p]);
    tier.check();
  });

  it('the stash lives in the agent area, where a reaper releases it', () => {
    const { tier, space } = setup(64 * MiB);
    const p = tier.mallocOversized(10 * MiB);
    tier.freeOversized(p);
    const area = tier.arena.agentArea;
    const reserved = space.reservedBytes;
    // Pretend the agent died: a reaper reads the stash from the area and releases the mapping.
    const r = tier.reapStash(area);
    expect(r).toEqual({ released: 1, skipped: 0 });
    expect(space.reservedBytes).toBe(reserved - 10 * MiB - 64 * 1024);
  });

  it('a stashed mapping serves a malloc that needs from half its reservation up to all of it, the same reservation first', () => {
    const { tier, space } = setup(64 * MiB);
    const a = tier.mallocOversized(12 * MiB);
    const b = tier.mallocOversized(5 * MiB);
    const c = tier.mallocOversized(6 * MiB);
    tier.freeOversized(a);
    tier.freeOversized(b);
    tier.freeOversized(c);
    expect(tier.stashed()).toEqual([a, b, c]);
    const reserved = space.reservedBytes;
    expect(tier.mallocOversized(5 * MiB)).toBe(b); // its own reservation, though c is newer and would do
    expect(tier.mallocOversized(4 * MiB)).toBe(c); // 6 MiB + 64 KiB is within twice what 4 MiB needs
    expect(tier.usableSize(c)).toBe(4 * MiB);
    expect(space.isCommitted(c + 4 * MiB, 2 * MiB)).toBe(false); // its commit shrank with it
    expect(tier.stashed()).toEqual([a]);
    const d = tier.mallocOversized(5 * MiB); // 12 MiB is more than twice what it needs: a new range
    expect(d).not.toBe(a);
    expect(space.reservedBytes).toBe(reserved + 5 * MiB + 64 * 1024);
    expect(tier.mallocOversized(7 * MiB)).toBe(a);
    tier.freeOversized(c, 4 * MiB); // a sized free names the size it was taken for
    expect(thrown(() => tier.freeOversized(a, 12 * MiB))?.code).toBe('WRONG_SIZE');
    tier.freeOversized(a, 7 * MiB);
    tier.check();
  });

  it('grow in place while the next granules are free, shrink in place giving the tail back', () => {
    const { tier, space } = setup(0);
    const p = tier.mallocOversized(2 * MiB);
    const u8 = () => space.u8;
    u8()[p] = 7;
    const reserved = space.reservedBytes;
    expect(tier.resizeInPlace(p, 3 * MiB)).toBe(true);
    expect(space.reservedBytes - reserved).toBe(MiB);
    expect(tier.usableSize(p)).toBe(3 * MiB);
    expect(space.isCommitted(p, 3 * MiB)).toBe(true);
    u8()[p + 3 * MiB - 1] = 9;
    // A mapping right after it: the next grow cannot be in place and changes nothing.
    const q = tier.mallocOversized(2 * MiB);
    expect(q).toBe(p + 3 * MiB + 64 * 1024);
    expect(tier.resizeInPlace(p, 3 * MiB + 64 * 1024)).toBe(false);
    expect(tier.usableSize(p)).toBe(3 * MiB);
    // Within its reservation it still grows (the commit only).
    expect(tier.resizeInPlace(p, 3 * MiB + 1000)).toBe(true);
    // Shrinking by a quarter or more gives the tail granules back: a mapping fits there now.
    const before = space.reservedBytes;
    expect(tier.resizeInPlace(p, 1.5 * MiB)).toBe(true);
    expect(before - space.reservedBytes).toBe(1.5 * MiB);
    expect(space.isReserved(p + 1.5 * MiB + 64 * 1024, 64 * 1024)).toBe(false);
    expect(u8()[p]).toBe(7);
    // Shrinking by less keeps the reservation.
    expect(tier.resizeInPlace(p, 1.25 * MiB)).toBe(true);
    expect(space.reservedBytes).toBe(before - 1.5 * MiB);
    expect(tier.resizeInPlace(p, 1.25 * MiB + 256 * 1024)).toBe(true);
    expect(tier.resizeInPlace(p, MiB)).toBe(false); // not oversized any more: the caller moves it
    // Never past the end of the space.
    expect(tier.resizeInPlace(q, space.maxBytes - q + 1)).toBe(false);
    tier.freeOversized(p);
    tier.freeOversized(q);
    tier.check();
  });

  it('a reaper releases the mapping a dead agent was making or moving, named in its agent area', () => {
    const { tier, space } = setup(64 * MiB);
    const dying = agentOf(space, 64 * MiB);
    const area = dying.arena.agentArea;
    const pw = (area + MAPPING_OFFSET) >>> 2;
    const reserved = space.reservedBytes;
    // Killed while making one: reserved, its header page committed, no magic yet.
    const base = space.reserve(5 * MiB + 64 * 1024);
    space.commit(base, PAGE_SIZE);
    space.u32[pw + MP_KIB] = (5 * MiB + 64 * 1024) / 1024;
    space.u32[pw + MP_BASE] = base | MP_MAKING;
    expect(tier.reapStash(area)).toEqual({ released: 1, skipped: 0 });
    expect(space.reservedBytes).toBe(reserved);
    expect(space.u32[pw + MP_BASE]).toBe(0);
    // Killed between a free's CAS and the stash: stashed state, in no stash.
    const p = dying.tier.mallocOversized(3 * MiB);
    const q = dying.tier.mallocOversized(3 * MiB);
    dying.tier.freeOversized(q); // a stashed one the stash walk releases, and the moving one is not in the stash
    expect(Atomics.compareExchange(space.i32, ((p - MAPPING_HEADER_BYTES) >>> 2) + 4, 1, 2)).toBe(1);
    space.u32[pw + MP_BASE] = (p - MAPPING_HEADER_BYTES) | MP_MOVING;
    expect(tier.reapStash(area)).toEqual({ released: 2, skipped: 0 });
    expect(space.reservedBytes).toBe(reserved);
    // A mapping named while still live (killed before the free's CAS, or after a malloc made it live) stays.
    const r = tier.mallocOversized(3 * MiB); // live (the dying tier still counts the stash the reaper took)
    space.u32[pw + MP_BASE] = (r - MAPPING_HEADER_BYTES) | MP_MOVING;
    expect(tier.reapStash(area)).toEqual({ released: 0, skipped: 0 });
    space.u32[pw + MP_KIB] = (3 * MiB + 64 * 1024) / 1024;
    space.u32[pw + MP_BASE] = (r - MAPPING_HEADER_BYTES) | MP_MAKING;
    expect(tier.reapStash(area)).toEqual({ released: 0, skipped: 1 });
    expect(tier.usableSize(r)).toBe(3 * MiB); // another agent may still use it
  });

  it('refuses sizes that are not oversized and pointers that are not mappings', () => {
    const { tier } = setup(0);
    expect(() => tier.mallocOversized(MiB)).toThrow(RangeError);
    expect(() => tier.mallocOversized(Number.NaN)).toThrow(RangeError);
    expect(() => tier.freeOversized(12345)).toThrow(HeapError);
    const p = tier.mallocOversized(9 * MiB);
    expect(() => tier.freeOversized(p + 32)).toThrow(/not the start of an oversized block/);
    expect(() => tier.freeOversized(p, 100)).toThrow(/WRONG_SIZE|holds/);
    tier.freeOversized(p, 9 * MiB);
  });
});

describe('a same-size free and malloc', () => {
  it('a freed large block is parked whole and the next block of its span takes it back, records untouched', () => {
    const { arena, tier, space } = setup(16 * MiB);
    const a = arena.allocLarge(2 * MiB);
    const used = arena.stats().usedUnits;
    arena.free(a);
    expect(tier.parked()).toEqual([a]);
    expect(tier.stats()).toMatchObject({ parkedBlocks: 1, retainedBytes: 2 * MiB, ledgerBytes: 2 * MiB });
    expect(arena.stats().usedUnits).toBe(used); // its units stay in use: nothing to search for or rewrite
    expect(arena.stats().largeObjects).toBe(0);
    expect(space.isCommitted(a, 2 * MiB)).toBe(true);
    arena.check();
    tier.check();
    // A parked block is freed: every free of it is refused before anything changes.
    expect(thrown(() => arena.free(a))?.code).toBe('DOUBLE_FREE');
    expect(thrown(() => arena.validateFree(a, 2 * MiB))?.code).toBe('DOUBLE_FREE');
    expect(tier.parked()).toEqual([a]);
    const b = arena.allocLarge(2 * MiB - 1024); // the same span of 128 units
    expect(b).toBe(a);
    expect(arena.usableSize(b)).toBe(2 * MiB - 1024);
    expect(tier.stats()).toMatchObject({ parkedBlocks: 0, retainedBytes: 0, ledgerBytes: 0 });
    arena.check();
    tier.check();
    arena.free(b, 2 * MiB - 1024);
    expect(tier.parked()).toEqual([b]);
  });

  it('a block of another span is carved: a larger parked block goes back to retained units first', () => {
    const { arena, tier } = setup(16 * MiB);
    const a = arena.allocLarge(3 * MiB); // 192 units
    arena.free(a);
    const b = arena.allocLarge(2 * MiB); // 128 units, from the top of the retained run
    expect(b).toBe(a + 64 * UNIT);
    expect(tier.stats()).toMatchObject({ parkedBlocks: 0, retainedBytes: 64 * UNIT, ledgerBytes: 64 * UNIT });
    arena.check();
    tier.check();
  });

  it('parked blocks go back to the units before a new arena is carved, and the ledger bounds them', () => {
    const { arena, tier } = setup(6 * MiB);
    const blocks = [0, 1, 2].map(() => arena.allocLarge(2 * MiB)); // 384 of an arena's 512 units
    expect(arena.arenas.length).toBe(1);
    for (const p of blocks) arena.free(p);
    expect(tier.stats().parkedBlocks).toBe(3);
    const small = Array.from({ length: 300 }, () => arena.malloc(16 * 1024)); // one unit each
    expect(arena.arenas.length).toBe(1);
    expect(tier.stats().parkedBlocks).toBe(0);
    expect(tier.stats().ledgerBytes).toBeLessThanOrEqual(6 * MiB);
    for (const p of small) arena.free(p);
    arena.check();
    tier.check();
    const over = setup(2 * MiB);
    const [x, y] = [over.arena.allocLarge(2 * MiB), over.arena.allocLarge(2 * MiB)];
    over.arena.free(x);
    over.arena.free(y); // the ledger is full: y's units are decommitted at once
    expect(over.tier.parked()).toEqual([x]);
    expect(over.space.isCommitted(y, 2 * MiB)).toBe(false);
  });

  it('an agent that gives back what it holds idle, or leaves, releases its parked blocks first', () => {
    const { arena, tier } = setup(16 * MiB);
    const a = arena.allocLarge(2 * MiB);
    arena.free(a); // parked, as a block a drain delivers after the tier's purge would be
    arena.releaseIdle(false);
    expect(tier.stats()).toMatchObject({ parkedBlocks: 0, retainedBytes: 0, ledgerBytes: 0 }); // its empty arena went back
    expect(arena.stats()).toMatchObject({ usedUnits: 0, arenas: 0 });
    tier.check();
  });

  it('the purge (the idle return) gives parked blocks back', () => {
    const { arena, tier, space } = setup(16 * MiB);
    const a = arena.allocLarge(4 * MiB);
    arena.free(a);
    expect(tier.purge()).toBe(4 * MiB);
    expect(tier.stats()).toMatchObject({ parkedBlocks: 0, retainedBytes: 0, ledgerBytes: 0 });
    expect(space.isCommitted(a, 4 * MiB)).toBe(false);
    expect(arena.stats().usedUnits).toBe(0);
    arena.check();
    tier.check();
  });

  it('a freed mapping is taken back from the stash without a new reservation or a commit', () => {
    const { tier, space } = setup(16 * MiB);
    const p = tier.mallocOversized(9 * MiB); // above a whole arena
    const reserved = space.reservedBytes;
    tier.freeOversized(p);
    expect(tier.mallocOversized(9 * MiB)).toBe(p);
    expect(space.reservedBytes).toBe(reserved);
    expect(space.isCommitted(p, 9 * MiB)).toBe(true);
    expect(tier.stats()).toMatchObject({ stashEntries: 0, ledgerBytes: 0 });
    tier.check();
  });

  it('a mapping of which at least half fits the ledger is stashed, its cut put off until an operation that does not take it back', () => {
    const { tier, space } = setup(16 * MiB);
    const p = tier.mallocOversized(16 * MiB); // 16 MiB + its header page: one page over the budget
    tier.freeOversized(p);
    expect(tier.stashed()).toEqual([p]);
    expect(tier.stats()).toMatchObject({ stashEntries: 1, ledgerBytes: 16 * MiB, uncutBytes: PAGE_SIZE });
    tier.check();
    expect(tier.mallocOversized(16 * MiB)).toBe(p); // taken back before the cut: nothing was decommitted
    expect(space.isCommitted(p, 16 * MiB)).toBe(true);
    expect(tier.stats()).toMatchObject({ stashEntries: 0, ledgerBytes: 0, uncutBytes: 0 });
    tier.freeOversized(p);
    const q = tier.mallocOversized(7 * MiB); // p is more than twice what it needs: the cut is made first
    expect(tier.stats().uncutBytes).toBe(0);
    expect(space.isCommitted(p, 16 * MiB - 2 * PAGE_SIZE)).toBe(true);
    expect(space.isCommitted(p + 16 * MiB - PAGE_SIZE, PAGE_SIZE)).toBe(false);
    tier.check();
    expect(tier.mallocOversized(16 * MiB)).toBe(p); // the cut part is committed again
    expect(space.isCommitted(p, 16 * MiB)).toBe(true);
    tier.freeOversized(p);
    tier.freeOversized(q); // q fits once p (the oldest, of another size) is evicted: the one eviction
    expect(tier.stashed()).toEqual([q]);
    tier.check();
    expect(tier.purge()).toBeGreaterThan(0);
    expect(tier.stats()).toMatchObject({ stashEntries: 0, ledgerBytes: 0, uncutBytes: 0 });
    expect(space.isCommitted(p, PAGE_SIZE)).toBe(false);
  });

  it('a mapping of which less than half fits is released at once', () => {
    const { tier, space } = setup(8 * MiB);
    const reserved = space.reservedBytes;
    const p = tier.mallocOversized(20 * MiB);
    tier.freeOversized(p);
    expect(tier.stats()).toMatchObject({ stashEntries: 0, ledgerBytes: 0, uncutBytes: 0 });
    expect(space.reservedBytes).toBe(reserved);
  });

  it('a reaper finds what a dead agent had parked and stashed, its cut included, and releases it', () => {
    const { space, arena: reaper, tier: reaperTier } = setup(16 * MiB);
    reaper.onReaped = (area) => void reaperTier.reapStash(area); // what the allocator's heap wires
    const dying = agentOf(space, 16 * MiB);
    const big = dying.arena.allocLarge(2 * MiB);
    const keep = dying.arena.allocLarge(2 * MiB);
    const m = dying.tier.mallocOversized(16 * MiB);
    dying.arena.free(big);
    dying.tier.freeOversized(m);
    // The parked block holds 2 MiB of the ledger: the mapping's cut will leave 14 MiB of it committed.
    expect(dying.tier.stats()).toMatchObject({ parkedBlocks: 1, stashEntries: 1, ledgerBytes: 16 * MiB, uncutBytes: 2 * MiB + PAGE_SIZE });
    const reserved = space.reservedBytes;
    const report = reaper.reapAgent(dying.space.agentId);
    expect(report.quarantinedBytes).toBe(0);
    expect(space.reservedBytes).toBe(reserved - 16 * MiB - 64 * 1024); // the stashed mapping's reservation
    expect(reaper.stats().largeObjects).toBe(1); // keep; the parked block was released
    expect(reaper.stats().usedUnits).toBe(128);
    reaper.check();
    reaper.free(keep);
    reaper.check();
  });
});

