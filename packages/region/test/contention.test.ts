// Real worker_threads racing on one heap. Workers run the built dist/ (test/workers/*.mjs).
import { describe, expect, it } from 'vitest';
import { GRANULE, HeapError, createAddressSpace } from '@paddock/platform';
import { Worker } from 'node:worker_threads';
import { Regions, USABLE_SLOTS_PER_REGION } from '@paddock/region';
import { runWorkers } from '../../../tools/test-utils/workers.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

function popcount(x: number): number {
  let n = 0;
  for (let v = x >>> 0; v !== 0; v &= v - 1) n++;
  return n;
}

describe('carving under contention', () => {
  it('8 workers x 8 concurrent carves give 64 distinct, aligned, non-overlapping arenas', async () => {
    const space = createAddressSpace({ maxBytes: GiB, pageReturn: 'none' });
    const regions = Regions.create(space);
    const { regionBytes, arenaBytes } = regions.geometry;
    const reservedBefore = space.reservedBytes;
    const results = await runWorkers<{ arenas: number[] }>(new URL('./workers/carve.mjs', import.meta.url), 8, () => ({
      handle: space.handle,
      carves: 8,
    }));
    const arenas = results.flatMap((r) => r.arenas);
    expect(arenas).toHaveLength(64);
    expect(new Set(arenas).size).toBe(64);
    const sorted = [...arenas].sort((a, b) => a - b);
    for (let i = 0; i < sorted.length; i++) {
      const a = sorted[i]!;
      expect(a % arenaBytes).toBe(0);
      expect(a % regionBytes).not.toBe(0); // never the header slot
      if (i > 0) expect(a - sorted[i - 1]!).toBeGreaterThanOrEqual(arenaBytes); // no overlap
      expect(regions.isCarved(a)).toBe(true);
    }
    // The shared picture agrees: every arena is in a listed region, and the bitmaps hold exactly these.
    const list = regions.regionList();
    expect(new Set(list).size).toBe(list.length);
    for (const a of arenas) expect(list).toContain(a - (a % regionBytes));
    expect(regions.carvedArenas()).toEqual(sorted);
    let bits = 0;
    for (const r of list) bits += popcount(space.i32[(r >>> 2) + 1]!) - 1;
    expect(bits).toBe(64);
    // 64 arenas need at least 3 regions; racing creators may each open one, but none is lost or leaked.
    expect(list.length).toBeGreaterThanOrEqual(Math.ceil(64 / USABLE_SLOTS_PER_REGION));
    expect(list.length).toBeLessThanOrEqual(8 + 2);
    expect(regions.regionCount()).toBe(list.length);
    expect(space.reservedBytes - reservedBefore).toBe(list.length * regionBytes);
  });

  it('carve and release churn never hands one arena to two workers at once', async () => {
    const space = createAddressSpace({ maxBytes: GiB, pageReturn: 'none' });
    const regions = Regions.create(space);
    const owners = new SharedArrayBuffer((GiB / regions.geometry.arenaBytes) * 4);
    const results = await runWorkers<{ collisions: number; carved: number }>(new URL('./workers/churn.mjs', import.meta.url), 8, () => ({
      handle: space.handle,
      rounds: 1000,
      hold: 5,
      owners,
    }));
    expect(results.map((r) => r.collisions)).toEqual(new Array(8).fill(0));
    expect(results.reduce((n, r) => n + r.carved, 0)).toBe(8 * 1000 * 5);
    expect(regions.carvedArenas()).toEqual([]);
    expect(new Int32Array(owners).every((v) => v === 0)).toBe(true);
    // 8 workers holding 5 each never need more than 40 slots: at most a region per racing creator.
    expect(regions.regionList().length).toBeLessThanOrEqual(8 + 2);
    expect(space.reservedBytes % GRANULE).toBe(0);
  });

  it('a carve that finds no room while another agent is opening a region waits for it and takes the room that appears', async () => {
    const space = createAddressSpace({ maxBytes: 256 * MiB, pageReturn: 'none' });
    const regions = Regions.create(space);
    const arenas: number[] = [];
    for (;;) {
      try {
        arenas.push(regions.carveArena());
      } catch (err) {
        expect((err as HeapError).code).toBe('OUT_OF_MEMORY'); // full, and nobody opening: at once
        break;
      }
    }
    // The heap header's count of regions being opened (word 9; the user words start at word 32).
    const openingWord = ((regions.userWord(0) - 32 * 4) >>> 2) + 9;
    const w = new Worker(new URL('./workers/slow-opener.mjs', import.meta.url), {
      workerData: { handle: space.handle, openingWord, arena: arenas[3], holdMs: 30 },
    });
    await new Promise((resolve) => w.once('message', resolve)); // it is "opening"
    // A descheduled opener holds the last room for longer than any count of instant walks lasts.
    expect(regions.carveArena()).toBe(arenas[3]);
    await new Promise((resolve) => w.once('exit', resolve));
  });
});

