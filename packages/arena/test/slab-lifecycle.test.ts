// Slabs and arenas on one owner: bump order, partial list, release and re-carve, geometry.
import { describe, expect, it } from 'vitest';
import { META_OFFSET, UNIT, arenaMeta, headerIndex, metaCommitBytes, spanOf } from '../src/index.js';
import { GiB, KiB, MiB, makeHeap } from './agents.js';

describe('slab lifecycle', () => {
  it('bumps 32 B objects at exact addresses, and the second slab starts 16 KiB on', () => {
    const heap = makeHeap();
    const a = heap.agent();
    const first = a.malloc(32);
    const arena = heap.regions.arenaBase(first);
    expect(first).toBe(arena); // unit 0: the header and records live in the region's slot 0
    for (let k = 1; k < 512; k++) expect(a.malloc(32)).toBe(first + 32 * k);
    expect(a.malloc(1)).toBe(first + 16 * KiB);
    a.check();
  });

  it('a freed object from a full slab returns through the partial list', () => {
    const heap = makeHeap();
    const a = heap.agent();
    const full: number[] = [];
    for (let k = 0; k < 512; k++) full.push(a.malloc(32));
    const second: number[] = [];
    for (let k = 0; k < 100; k++) second.push(a.malloc(32));
    a.free(full[5]!);
    a.check();
    expect(a.stats().perClass[0]).toMatchObject({ slabs: 2, live: 611 });
    for (let k = 100; k < 512; k++) second.push(a.malloc(32)); // fill the current slab
    expect(a.malloc(32)).toBe(full[5]); // next comes from the partial slab
    a.check();
  });

  it('a fully freed slab is kept for its class and serves its next refill; released, it is re-carved for the 16 KiB class', () => {
    const heap = makeHeap();
    const a = heap.agent();
    const slab: number[] = [];
    for (let k = 0; k < 512; k++) slab.push(a.malloc(32));
    const second = a.malloc(32); // a second slab becomes current
    for (const p of slab) a.free(p);
    a.check();
    expect(a.emptySlabs.count).toBe(1); // kept, laid out, nothing live
    expect(a.stats()).toMatchObject({ keptSlabs: 1, keptBytes: 16 * KiB });
    expect(a.stats().perClass[0]!.slabs).toBe(2);
    for (let k = 1; k < 512; k++) a.malloc(32); // fill the current slab
    expect(a.malloc(32)).toBe(slab[0]); // the refill takes the kept slab, bumping from its start
    expect(a.emptySlabs.count).toBe(0);
    a.check();
    // Emptied again and released (the idle return releases what is kept): its unit is the lowest free one.
    const again = [slab[0]!];
    for (let k = 1; k < 512; k++) again.push(a.malloc(32));
    a.malloc(32); // a third slab becomes current
    for (const p of again) a.free(p);
    a.emptySlabs.releaseAll(a);
    expect(a.stats().perClass[0]!.slabs).toBe(2);
    expect(a.malloc(16 * KiB)).toBe(slab[0]);
    expect(second).toBe(slab[0]! + 16 * KiB);
    a.check();
  });

  it('empty slabs are kept; those above the sweep threshold go back when the sweep comes due', () => {
    const heap = makeHeap();
    const a = heap.agent();
    const budget = a.sweepThreshold;
    const blocks: number[] = [];
    for (let k = 0; k < budget + 4; k++) blocks.push(a.malloc(16 * KiB)); // one-unit slabs of one block each
    a.malloc(16 * KiB); // the class's current slab
    const arena = heap.regions.arenaBase(blocks[0]!);
    const freeUnits = () => (heap.space.refresh(), heap.space.i32[headerIndex(arena, a.arenaBytes) + 2]!);
    const before = freeUnits();
    for (const p of blocks) a.free(p);
    expect(a.emptySlabs.count).toBe(budget + 4); // all kept for now
    expect(freeUnits()).toBe(before);
    a.sweepDue(false); // not due yet: kept above the threshold for less than the sweep delay
    expect(a.emptySlabs.count).toBe(budget + 4);
    a.sweepDue(true); // due (forced here): the oldest four go back, the threshold's worth stays
    expect(a.emptySlabs.count).toBe(budget);
    expect(freeUnits() - before).toBe(4);
    a.check();
    a.releaseIdle(true);
    expect(a.emptySlabs.count).toBe(0);
    a.check();
  });

  it('kept slabs of one class go back before a new arena is carved for another', () => {
    const heap = makeHeap();
    const a = heap.agent();
    a.sweepThreshold = 1 << 20; // nothing kept is trimmed by the clock here: only the lack of room releases it
    const blocks: number[] = [];
    for (;;) {
      const p = a.malloc(16 * KiB); // one-unit slabs of one block each, until the first arena is full
      if (blocks.length > 0 && heap.regions.arenaBase(p) !== heap.regions.arenaBase(blocks[0]!)) {
        a.free(p);
        break;
      }
      blocks.push(p);
    }
    for (const p of blocks) a.free(p);
    expect(a.emptySlabs.count).toBeGreaterThan(0);
    const arenas = a.ownArenas().length;
    // Another class whose slabs need more units than the second arena has left: without the kept 16 KiB slabs
    // going back, a third arena would be carved.
    for (let k = 0; k < (blocks.length + 16) * 16; k++) a.malloc(1024);
    expect(a.ownArenas().length).toBe(arenas);
    expect(a.emptySlabs.count).toBe(0);
    a.check();
  });

  it('a slab whose last object is freed while current is reset in place', () => {
    const heap = makeHeap();
    const a = heap.agent();
    const p = a.malloc(100);
    const q = a.malloc(100);
    a.free(q);
    a.free(p);
    expect(a.malloc(128)).toBe(p);
    expect(a.malloc(128)).toBe(q);
    a.check();
  });

  it('multi-unit block classes span 2 to 64 units and are placed from the top of the arena down', () => {
    const heap = makeHeap();
    const a = heap.agent();
    expect([9, 10, 11, 15].map(spanOf)).toEqual([1, 2, 4, 64]);
    const small = a.malloc(32);
    const arena = heap.regions.arenaBase(small);
    const block = a.malloc(1 * MiB);
    expect(block).toBe(arena + 8 * MiB - 1 * MiB);
    const b2 = a.malloc(32 * KiB + 1); // 64 KiB class
    expect(b2).toBe(block - 64 * KiB);
    expect(a.usableSize(b2)).toBe(64 * KiB);
    a.check();
  });
});

describe('arena geometry', () => {
  it('an 8 MiB arena has 512 usable units, and the newest arena fills first', () => {
    const heap = makeHeap(2 * GiB);
    expect(heap.regions.geometry.arenaBytes).toBe(8 * MiB);
    const a = heap.agent();
    const blocks: number[] = [];
    for (let k = 0; k < 512; k++) blocks.push(a.malloc(16 * KiB));
    const first = heap.regions.arenaBase(blocks[0]!);
    expect(new Set(blocks.map((p) => heap.regions.arenaBase(p))).size).toBe(1);
    expect(a.ownArenas()).toEqual([first]);
    const next = a.malloc(16 * KiB);
    const second = heap.regions.arenaBase(next);
    expect(second).not.toBe(first);
    a.free(blocks[200]!); // a unit frees up in the older arena
    a.free(next);
    a.check();
    const again = a.malloc(16 * KiB);
    expect(heap.regions.arenaBase(again)).toBe(second); // the newest arena serves first
    a.check();
  });

  it('a 2 MiB arena (small heaps) has 128 usable units', () => {
    const heap = makeHeap(256 * MiB);
    const a = heap.agent();
    const blocks: number[] = [];
    for (let k = 0; k < 129; k++) blocks.push(a.malloc(16 * KiB));
    expect(new Set(blocks.slice(0, 128).map((p) => heap.regions.arenaBase(p))).size).toBe(1);
    expect(heap.regions.arenaBase(blocks[128]!)).not.toBe(heap.regions.arenaBase(blocks[0]!));
  });

  it('an arena whose objects span all its units holds whole 1 MiB and 2 MiB blocks (and its header is in slot 0)', () => {
    const heap = makeHeap(256 * MiB);
    const a = heap.agent();
    const one = [a.malloc(MiB), a.malloc(MiB)];
    expect(heap.regions.arenaBase(one[0]!)).toBe(heap.regions.arenaBase(one[1]!)); // two 64-unit blocks in one 2 MiB arena
    const whole = a.allocLarge(2 * MiB);
    const base = heap.regions.arenaBase(whole);
    expect(whole).toBe(base);
    expect(a.largeMax).toBe(2 * MiB);
    // The metadata: 20 KiB into chunk `slot` (64 KiB each) of the region's slot 0, committed; none of the arena's own pages hold it.
    const region = base - (base % (64 * MiB));
    const meta = arenaMeta(base, 2 * MiB);
    expect(META_OFFSET).toBe(20 * KiB);
    expect(meta).toBe(region + ((base - region) / (2 * MiB)) * 64 * KiB + META_OFFSET);
    expect(heap.space.isCommitted(meta, metaCommitBytes(2 * MiB))).toBe(true);
    a.check();
    a.free(whole);
    for (const p of one) a.free(p);
    a.check();
  });

  it('the longest-run bound falls when a span search fails and recovers on release', () => {
    const heap = makeHeap(2 * GiB);
    const a = heap.agent();
    // Fill the arena with 16 KiB blocks, then free every other one: 256 free units, no two adjacent.
    const blocks: number[] = [];
    for (let k = 0; k < 512; k++) blocks.push(a.malloc(16 * KiB));
    const arena = heap.regions.arenaBase(blocks[0]!);
    for (let k = 0; k < 512; k += 2) a.free(blocks[k]!);
    a.emptySlabs.releaseAll(a); // the last emptied slabs were kept for their class: release them too
    const runBound = () => (heap.space.refresh(), heap.space.i32[headerIndex(arena, 8 * MiB) + 3]);
    expect(runBound()).toBe(512); // an upper bound: no search has failed yet
    const big = a.malloc(64 * KiB); // needs 4 adjacent units: not in the first arena
    expect(heap.regions.arenaBase(big)).not.toBe(arena);
    a.free(big); // the 64 KiB class's current slab: reset in place, it keeps its 4 units
    // Fill the rest of the second arena so the next block can only go to the first one.
    const second = heap.regions.arenaBase(big);
    const filler: number[] = [];
    for (let k = 0; k < 508; k++) filler.push(a.malloc(16 * KiB));
    expect(filler.every((p) => heap.regions.arenaBase(p) === second)).toBe(true);
    expect(runBound()).toBe(1);
    a.check();
    // Freeing block 1 joins units 0-2 into a run of 3; the bound must let a 32 KiB search back in,
    // which takes the highest two units of that run.
    a.free(blocks[1]!);
    a.emptySlabs.releaseAll(a);
    expect(runBound()).toBe(3);
    const again = a.malloc(32 * KiB);
    expect(again).toBe(blocks[1]);
    expect(a.ownArenas()).toHaveLength(2);
    a.check();
  });

  it('an emptied arena is kept until the delayed sweep, then as the one spare with only its metadata committed; a second is released', () => {
    const heap = makeHeap(2 * GiB, 3, 'native');
    const a = heap.agent();
    const blocks: number[] = [];
    for (let k = 0; k < 1024; k++) blocks.push(a.malloc(16 * KiB)); // two full arenas
    const [first, second] = a.ownArenas();
    expect(a.ownArenas()).toHaveLength(2);
    a.malloc(16 * KiB); // the class's current block now sits in a third arena
    const committedFull = heap.space.committedBytes;
    for (const p of blocks.slice(0, 512)) a.free(p);
    a.emptySlabs.releaseAll(a); // the last emptied slabs were kept for their class: release them too
    // Not at once: an agent that empties an arena often carves the same units again right away.
    expect(heap.space.committedBytes).toBe(committedFull);
    expect(a.sweepDue(false)).toBe(0); // nothing has waited SWEEP_DELAY_MS yet
    expect(a.sweepDue(true)).toBe(512); // the delay over (forced here): the spare keeps its metadata only
    expect(a.ownArenas().slice(0, 2)).toEqual([first, second]);
    expect(heap.space.isCommitted(arenaMeta(first!, 8 * MiB), metaCommitBytes(8 * MiB))).toBe(true);
    for (let off = 0; off < 8 * MiB; off += UNIT) expect(heap.space.isCommitted(first! + off, 4096)).toBe(false);
    expect(committedFull - heap.space.committedBytes).toBe(512 * UNIT);
    for (const p of blocks.slice(512)) a.free(p);
    a.emptySlabs.releaseAll(a);
    expect(heap.regions.isCarved(second!)).toBe(true); // again not at once
    a.sweepDue(true);
    expect(a.ownArenas()).toHaveLength(2);
    expect(a.ownArenas()).toContain(first);
    expect(heap.regions.isCarved(second!)).toBe(false);
    expect(heap.space.isCommitted(second!, 4096)).toBe(false);
    // Its metadata pages went back too: a released arena holds no committed page.
    for (let off = 0; off < metaCommitBytes(8 * MiB); off += 4096) expect(heap.space.isCommitted(arenaMeta(second!, 8 * MiB) + off, 4096)).toBe(false);
    a.check();
  });
});
