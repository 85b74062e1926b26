// A dead agent's half-updated slab: the reaper's repair quarantines it (counted, never served again), and
// check() judges it by the same rules before the reap and passes after it.
import { describe, expect, it } from 'vitest';
import { UNIT, metaCommitBytes, recordIndex } from '../src/index.js';
import { R_FREE, R_SPAN } from '../src/layout.js';
import { KiB, makeHeap, thrown } from './agents.js';

/** The record index of the slab holding `p` (its head unit), in the arena at `base`. */
function recordOf(base: number, p: number, arenaBytes: number): number {
  return recordIndex(base, Math.floor((p - base) / UNIT), arenaBytes);
}

describe('repair quarantines a slab a dead agent left half-updated', () => {
  it('a slab whose free list holds one more object than its live count lets go', () => {
    const heap = makeHeap();
    const dying = heap.agent();
    const small = Array.from({ length: 10 }, () => dying.malloc(64)); // one slab of the 64 B class
    const other = Array.from({ length: 5 }, () => dying.malloc(32)); // another, left healthy
    for (const p of small.slice(0, 3)) dying.free(p);
    const base = heap.regions.arenaBase(small[0]!);
    const slab = base + Math.floor((small[0]! - base) / UNIT) * UNIT;
    // Stopped half way through a free: the object is on the free list, the live count not yet lowered.
    const ri = recordOf(base, small[5]!, dying.arenaBytes);
    heap.space.refresh();
    heap.space.u32[small[5]! >>> 2] = heap.space.u32[ri + R_FREE]!;
    heap.space.u32[ri + R_FREE] = small[5]!;
    expect(thrown(() => dying.check())?.message).toMatch(/live 7 \+ free 4 \+ unbumped 246 != capacity 256/);

    const reaper = heap.agent();
    const report = reaper.reapAgent(dying.space.agentId);
    const quarantined = UNIT + metaCommitBytes(dying.arenaBytes); // the slab's unit, and its arena's metadata pages once
    expect(report.quarantinedBytes).toBe(quarantined);
    expect(reaper.quarantinedBytes).toBe(quarantined);
    expect(reaper.stats().quarantinedBytes).toBe(quarantined);
    reaper.check();

    // Nothing of the slab is served again, however much of its class is asked for.
    const served = Array.from({ length: 1000 }, () => reaper.malloc(64));
    expect(served.filter((p) => p >= slab && p < slab + UNIT)).toEqual([]);
    // A free into it is dropped: the slab stays out of use.
    reaper.free(small[6]!);
    expect(reaper.malloc(64)).not.toBe(small[6]);
    for (const p of [...served, ...other]) reaper.free(p);
    reaper.check();
    expect(reaper.stats().quarantinedBytes).toBe(quarantined);
  });

  it('a head unit whose span runs past the end of its arena', () => {
    const heap = makeHeap();
    const dying = heap.agent();
    const block = dying.malloc(64 * KiB); // 4 units, placed at the top of the arena
    const base = heap.regions.arenaBase(block);
    expect(block + 4 * UNIT).toBe(base + dying.units * UNIT);
    heap.space.refresh();
    heap.space.i32[recordOf(base, block, dying.arenaBytes) + R_SPAN] = 8;
    expect(thrown(() => dying.check())?.message).toMatch(/span 8 runs past the arena/);

    const reaper = heap.agent();
    const report = reaper.reapAgent(dying.space.agentId);
    // The head and each of its three continuations, none of them a consistent slab now, and the metadata pages.
    const quarantined = 4 * UNIT + metaCommitBytes(dying.arenaBytes);
    expect(report.quarantinedBytes).toBe(quarantined);
    expect(reaper.quarantinedBytes).toBe(quarantined);
    reaper.check();

    const served = Array.from({ length: 40 }, () => reaper.malloc(64 * KiB));
    expect(served.filter((p) => p + 4 * UNIT > block && p < block + 4 * UNIT)).toEqual([]);
    for (const p of served) reaper.free(p);
    reaper.check();
    expect(reaper.stats().quarantinedBytes).toBe(quarantined);
  });
});
