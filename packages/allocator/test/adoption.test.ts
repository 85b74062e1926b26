// Adoption from several real workers at once: every detached owner is adopted exactly once, and every
// free sent to a detached owner is reclaimed by whoever adopted it.
import { describe, expect, it } from 'vitest';
import { SLOT_ADOPTED, SLOT_DETACHED } from '@paddock/arena';
import { attachArenaHeap, createArenaHeap } from '../src/heap.js';
import { nextMessage, startWorker } from './workers.js';

describe('concurrent adoption', () => {
  it('4 detached owners, 3 adopters ticking at once: each owner adopted once, every block reclaimed', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30 });
    const leavers = [0, 1, 2, 3].map((i) => startWorker('adopt.mjs', { handle: heap.handle, role: 'leaver', count: 200, tag: i * 1000 }));
    const left = await Promise.all(leavers.map((w) => nextMessage<{ kind: string; slot: number; blocks: number[] }>(w, (m) => m.kind === 'left')));
    await Promise.all(leavers.map((w) => w.terminate()));
    left.forEach((l, i) => l.blocks.forEach((p, k) => expect(heap.u32[p >>> 2]).toBe(i * 1000 + k)));
    // The leavers left with every block live: only the adopters' ticks take them over.
    const gate = new SharedArrayBuffer(12);
    const g = new Int32Array(gate);
    const adopters = [0, 1, 2].map(() => startWorker('adopt.mjs', { handle: heap.handle, role: 'adopter', gate }));
    while (Atomics.load(g, 1) < 3) await new Promise((r) => setTimeout(r, 2));
    Atomics.store(g, 0, 1);
    Atomics.notify(g, 0);
    await new Promise((r) => setTimeout(r, 300));
    expect(heap.stats().adoptedSlots).toEqual([]);
    // Free everything the leavers owned: into this agent's cache, then to whoever took each owner over.
    for (const l of left) for (const p of l.blocks) heap.free(p);
    heap.flushCache();
    heap.flush();
    expect(heap.stats().adoptedSlots).toEqual([]); // every owner had been taken over: the frees went to them
    await new Promise((r) => setTimeout(r, 300));
    const reports = adopters.map((w) => nextMessage<{ kind: string; slots: number[]; liveBytes: number }>(w, (m) => m.kind === 'adopted'));
    Atomics.store(g, 2, 1);
    const done = await Promise.all(reports);
    await Promise.all(adopters.map((w) => w.terminate()));
    const adopted = done.flatMap((d) => d.slots);
    expect(adopted.sort((a, b) => a - b)).toEqual(left.map((l) => l.slot).sort((a, b) => a - b));
    expect(new Set(adopted).size).toBe(4);
    expect(done.reduce((n, d) => n + d.liveBytes, 0)).toBe(0); // all 800 frees came home
  });
});

describe('an adopter that dies in the middle of an adoption', () => {
  it("its reaper takes over the adoptee's arenas it had not renamed yet: frees into them reach an owner of them", () => {
    const a = createArenaHeap({ maxBytes: 1 << 28 });
    const b = attachArenaHeap(a.handle);
    b.malloc(64); // b takes a slot
    const bSlot = b.stats().ownerSlot;
    const x = attachArenaHeap(a.handle);
    const blocks = Array.from({ length: 8 }, () => x.malloc(64));
    const xSlot = x.stats().ownerSlot;
    x.detach(); // its arenas, with the blocks live, wait for an adopter
    // b adopts x and dies right after its CAS of x's slot, before renaming x's arenas (they still name x)
    const registry = a.engine.registry;
    expect(registry.casSlotState(xSlot, SLOT_DETACHED, SLOT_ADOPTED | (bSlot << 8))).toBe(SLOT_DETACHED);
    a.reap(b.agentId);
    // another agent frees x's blocks: they must reach the agent that now owns their arenas
    const c = attachArenaHeap(a.handle);
    for (const p of blocks) c.free(p);
    c.flushCache();
    c.flush();
    expect(() => a.drain()).not.toThrow();
    expect(a.snapshot().liveBytes).toBe(64); // b's own block, which died with it
    a.check();
  });
});
