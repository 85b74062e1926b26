// The tier on its own: the ledger's admission, the stash and its one eviction, purge, and the reaper's view.
import { ArenaHeap, UNIT } from '@paddock/arena';
import { HeapError, createAddressSpace } from '@paddock/platform';
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
  it('are sized to the next power of two of size + 16 KiB, at least one arena, header found by masking', () => {
    const { tier, arena, space } = setup(64 * MiB);
    expect(tier.reservationFor(arena.largeMax + 1)).toBe(8 * MiB); // one arena: 8160 KiB + 16 KiB fits
    expect(tier.reservationFor(16 * MiB - MAPPING_HEADER_BYTES)).toBe(16 * MiB);
    expect(tier.reservationFor(16 * MiB - MAPPING_HEADER_BYTES + 1)).toBe(32 * MiB);
    const p = tier.mallocOversized(12 * MiB);
    expect((p - MAPPING_HEADER_BYTES) % arena.arenaBytes).toBe(0);
    expect(tier.isMapping(p)).toBe(true);
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
    expect(space.reservedBytes).toBe(reserved - 16 * MiB);
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
