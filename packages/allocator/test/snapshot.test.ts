// heap.snapshot(): what it shows of one agent is exact; of agents that run meanwhile it never throws and is
// marked racy; owners that leave or die show as they are; it survives structured cloning; the backends without
// a unit map report their classes.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { HeapError } from '@paddock/platform';
import { createClassicHeap } from '../src/classic-heap.js';
import { createGlobalHeap } from '../src/global-heap.js';
import { attachArenaHeap, createArenaHeap } from '../src/heap.js';
import { SNAPSHOT_VERSION } from '../src/snapshot.js';
import {
  UNIT_CONTINUATION,
  UNIT_DECOMMITTED,
  UNIT_DIRTY,
  UNIT_EMPTY_SLAB,
  UNIT_LARGE,
  UNIT_SLAB,
} from '@paddock/arena';
import { nextMessage, startWorker } from './workers.js';

const MiB = 1 << 20;
const GiB = 1 << 30;

/** How many units of the snapshot's map are in `state`. */
function unitsIn(s: ReturnType<typeof createArenaHeap>['snapshot'] extends () => infer R ? R : never, state: number): number {
  let n = 0;
  for (const v of s.arena!.unitState) if (v === state) n++;
  return n;
}

describe('heap.snapshot on the arena', () => {
  it("shows one agent's heap exactly: classes, units, large objects, mappings, its cache", () => {
    const heap = createArenaHeap({ maxBytes: GiB });
    const small = Array.from({ length: 1000 }, (_, i) => heap.malloc(i % 2 === 0 ? 64 : 4096));
    const large = heap.malloc(1.875 * MiB); // 120 units: large in an arena (it packs one well) in either geometry
    const huge = heap.malloc(40 * MiB);
    for (const p of small.slice(0, 10)) heap.free(p); // into the cache: still live in their slabs
    const s = heap.snapshot();
    expect(s.version).toBe(SNAPSHOT_VERSION);
    expect(s.backend).toBe('pool_arena');
    expect(s.racy).toBe(false);
    expect(s.takenBy).toBe(heap.agentId);
    const stats = heap.stats();
    for (let c = 0; c < 16; c++) {
      expect(s.classes[c]!.live, `class ${c}`).toBe(stats.perClass[c]!.live);
      expect(s.classes[c]!.free, `class ${c}`).toBe(stats.perClass[c]!.free);
    }
    expect(s.classes[1]!.live).toBe(500); // 64 B: the cache's blocks are live in their slabs
    expect(s.classes[7]!.live).toBe(500); // 4 KiB
    expect(s.classes[16]!.live).toBe(1);
    const a = s.arena!;
    expect(a.arenas).toHaveLength(stats.arenas);
    expect(a.arenas.every((x) => x.exact && x.owner === stats.ownerSlot)).toBe(true);
    expect(a.unitState).toHaveLength(a.arenas.length * a.unitsPerArena);
    expect(unitsIn(s, UNIT_SLAB)).toBe(stats.perClass.reduce((n, c) => n + c.slabs, 0) - stats.keptSlabs);
    expect(unitsIn(s, UNIT_LARGE)).toBe(1);
    const largeUnits = Math.ceil((1.875 * MiB) / a.unitBytes);
    const head = a.unitState.indexOf(UNIT_LARGE);
    expect(a.unitSpan[head]).toBe(largeUnits);
    expect(a.unitClass[head]).toBe(16);
    expect([...a.unitState.subarray(head + 1, head + largeUnits)].every((v) => v === UNIT_CONTINUATION)).toBe(true);
    expect(a.large).toEqual([{ address: large, bytes: 1.875 * MiB, owner: stats.ownerSlot, parked: false }]);
    expect(s.mappings).toHaveLength(1);
    expect(s.mappings[0]).toMatchObject({ state: 'live', payloadBytes: 40 * MiB });
    expect(huge - s.mappings[0]!.base).toBe(16 * 1024);
    expect(s.liveBytes).toBe(stats.liveBytes + 40 * MiB);
    expect(a.owners).toEqual([expect.objectContaining({ slot: stats.ownerSlot, state: 'live', arenas: stats.arenas, liveBytes: stats.liveBytes })]);
    const me = a.agents.find((x) => x.self)!;
    expect(me).toMatchObject({ agentId: heap.agentId, state: 'live', ownerSlot: stats.ownerSlot, cacheBytes: stats.cacheBytes });
    expect(me.cacheBlocks).toEqual(stats.cacheBlocks);
    expect(s.committedBytes).toBe(stats.committedBytes);
    // Cloned (as postMessage does) it is the same.
    expect(structuredClone(s)).toEqual(s);
    // Everything freed and the idle return run: no live unit, the freed units dirty or decommitted.
    for (const p of [...small.slice(10), large, huge]) heap.free(p);
    heap.returnIdle();
    const after = heap.snapshot();
    expect(after.liveBytes).toBe(0);
    expect(unitsIn(after, UNIT_SLAB) + unitsIn(after, UNIT_LARGE) + unitsIn(after, UNIT_EMPTY_SLAB)).toBe(0);
    expect(unitsIn(after, UNIT_DECOMMITTED) + unitsIn(after, UNIT_DIRTY)).toBe(after.arena!.unitState.length);
    expect(after.mappings.filter((m) => m.state === 'live')).toHaveLength(0);
  });

  it('agents that churn meanwhile: never throws, marked racy, their held blocks always counted; a reaped one shows', async () => {
    const heap = createArenaHeap({ maxBytes: GiB, watchWorkers: false }); // reaped by hand below, not at its exit
    const flag = new SharedArrayBuffer(4);
    const hold: [number, number][] = [
      [48, 300],
      [700, 200],
      [5000, 40],
    ];
    const workers: Worker[] = [0, 1, 2].map(() => startWorker('snapshot-agent.mjs', { handle: heap.handle, flag, hold }));
    const holding = await Promise.all(workers.map((w) => nextMessage<{ kind: string; slot: number; agentId: number }>(w, (m) => m.kind === 'holding')));
    const quiet = heap.snapshot();
    for (const h of holding) {
      const o = quiet.arena!.owners.find((x) => x.slot === h.slot)!;
      expect(o.state).toBe('live');
      expect(o.liveByClass[1]).toBe(300); // 48 B -> 64 B class
      expect(o.liveByClass[5]).toBe(200); // 700 B -> 1 KiB
      expect(o.liveByClass[8]).toBe(40); // 5000 B -> 8 KiB
    }
    expect(quiet.racy).toBe(true);
    expect(quiet.arena!.arenas.filter((a) => holding.some((h) => h.slot === a.owner)).every((a) => !a.exact)).toBe(true);
    const churned = workers.map((w) => nextMessage<{ kind: string; rounds: number }>(w, (m) => m.kind === 'churned'));
    for (const w of workers) w.postMessage('churn');
    let taken = 0;
    const t0 = Date.now();
    while (Date.now() - t0 < 400) {
      const s = heap.snapshot();
      for (const h of holding) {
        const o = s.arena!.owners.find((x) => x.slot === h.slot)!;
        expect(o.liveByClass[5]).toBeGreaterThanOrEqual(200);
      }
      expect(structuredClone(s).arena!.unitState.length).toBe(s.arena!.unitState.length);
      taken++;
      await new Promise((r) => setTimeout(r, 5));
    }
    Atomics.store(new Int32Array(flag), 0, 1);
    expect((await Promise.all(churned)).every((c) => c.rounds > 0)).toBe(true);
    expect(taken).toBeGreaterThan(5);
    // One worker is terminated and reaped (its held blocks released): its slot shows taken over, its area reaped.
    await workers[0]!.terminate();
    heap.reap(holding[0]!.agentId, { releaseLive: true });
    const s = heap.snapshot();
    const gone = s.arena!.owners.find((o) => o.slot === holding[0]!.slot)!;
    expect(gone.state).toBe('adopted');
    expect(gone.adoptedBy).toBe(heap.stats().ownerSlot);
    expect(s.arena!.agents.find((a) => a.agentId === holding[0]!.agentId)?.state ?? 'vacant').toMatch(/reaped|vacant/);
    await Promise.all(workers.slice(1).map((w) => w.terminate()));
  });

  it('an agent that is closed refuses to take one', () => {
    const heap = createArenaHeap({ maxBytes: GiB });
    const other = attachArenaHeap(heap.handle);
    other.close();
    expect(() => other.snapshot()).toThrow(HeapError);
  });
});

describe.each([
  ['pool_classic', () => createClassicHeap({ maxBytes: GiB })],
  ['pool_global', () => createGlobalHeap({ maxBytes: GiB })],
] as const)('heap.snapshot on %s', (backend, create) => {
  it('reports the heap figures and classes, with no unit map', () => {
    const heap = create();
    const ps = Array.from({ length: 100 }, () => heap.malloc(200));
    const s = heap.snapshot();
    expect(s).toMatchObject({ version: SNAPSHOT_VERSION, backend, arena: null, mappings: [] });
    expect(s.classes[3]!.live).toBe(100);
    expect(s.liveBytes).toBe(heap.stats().liveBytes);
    expect(structuredClone(s)).toEqual(s);
    for (const p of ps) heap.free(p);
  });
});
