// Cross-agent frees with real workers: nothing lost, nothing duplicated, every block goes home.
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { attachArenaHeap, createArenaHeap as createHeap } from '../src/heap.js';
import { nextMessage, startWorker } from './workers.js';

describe('cross-agent frees with real workers', () => {
  it('4 workers x 400 rounds of 64 B blocks passed around a ring: every block received and freed exactly once', async () => {
    const heap = createHeap({ maxBytes: 1 << 30 });
    const n = 4;
    const rounds = 400;
    const channels = Array.from({ length: n }, () => new MessageChannel());
    const workers = channels.map((_, i) => {
      const next = channels[i]!.port1;
      const prev = channels[(i + n - 1) % n]!.port2;
      return startWorker('ring.mjs', { handle: heap.handle, index: i, rounds, size: 64, next, prev }, [next, prev]);
    });
    const received = await Promise.all(workers.map((w) => nextMessage<{ kind: string; ids: number[]; bad: number; slot: number }>(w, (m) => m.kind === 'received')));
    const all = received.flatMap((r) => r.ids);
    expect(all).toHaveLength(n * rounds);
    expect(new Set(all).size).toBe(n * rounds);
    expect(Math.min(...all)).toBe(1);
    expect(Math.max(...all)).toBe(n * rounds);
    expect(received.map((r) => r.bad)).toEqual([0, 0, 0, 0]);
    expect(new Set(received.map((r) => r.slot)).size).toBe(n); // each worker owns its blocks
    const drained = workers.map((w) => nextMessage<{ kind: string; liveBytes: number; pending: number }>(w, (m) => m.kind === 'drained'));
    for (const w of workers) w.postMessage('drain');
    for (const d of await Promise.all(drained)) {
      expect(d.liveBytes).toBe(0); // every block came home
      expect(d.pending).toBe(0);
    }
    await Promise.all(workers.map((w) => w.terminate()));
    heap.check();
  });

  it('an agent that only frees takes no owner slot, and its frees reach the owner', async () => {
    const heap = createHeap({ maxBytes: 1 << 30, watchWorkers: false }); // a reap at its exit would drain the inbox first
    const blocks = Array.from({ length: 100 }, (_, k) => heap.malloc(32 + k * 10));
    heap.malloc(32);
    const live = heap.stats().liveBytes;
    const w = startWorker('free-only.mjs', { handle: heap.handle, blocks });
    const r = await nextMessage<{ slot: number; cached: number; pendingBeforeFlush: number; pendingAfter: number }>(w);
    await w.terminate();
    expect(r.slot).toBe(0);
    expect(r.cached).toBe(100); // first into the freeing agent's cache
    expect(r.pendingBeforeFlush).toBe(100 - 3 * 32); // three chains of 32 went home as they filled
    expect(r.pendingAfter).toBe(0);
    expect(heap.drain()).toBe(100);
    expect(heap.stats().liveBytes).toBeLessThan(live);
    expect(heap.stats().liveBytes).toBe(32);
    heap.check();
  });

  it('frees of blocks above 2 GiB go home in batches (addresses past the int32 range kept whole)', () => {
    const heap = createHeap({ maxBytes: 2 ** 32 - 65536 });
    // Reserved address space below 2 GiB (never committed: no memory), so the next arenas lie above it.
    for (let r = 0; r < 64; r++) {
      if (heap.space.reserve(128 << 20, 128 << 20) >= 2 ** 31 - (256 << 20)) break;
    }
    const other = attachArenaHeap(heap.handle);
    const blocks = Array.from({ length: 256 }, (_, i) => {
      const p = heap.malloc(i % 2 === 0 ? 4096 : 96);
      heap.u32[p >>> 2] = i;
      return p;
    });
    expect(Math.min(...blocks)).toBeGreaterThanOrEqual(2 ** 31);
    for (const p of blocks) other.free(p); // through the freer's cache, then chains of 32 flushed as runs
    other.flushCache();
    other.flush();
    expect(other.stats().pendingChainObjects).toBe(0);
    expect(heap.drain()).toBe(256);
    expect(heap.stats().liveBytes).toBe(0);
    heap.check();
  });

  it("an allocation that finds its slab full reclaims batches onto the cache stacks until its class has a block; the rest wait", () => {
    const owner = createHeap({ maxBytes: 1 << 30 });
    const other = attachArenaHeap(owner.handle);
    const slab = Array.from({ length: 64 }, () => owner.malloc(256)); // one full 16 KiB slab of 256 B blocks
    const small = Array.from({ length: 40 }, () => owner.malloc(32));
    for (const p of slab) other.free(p);
    other.flushCache(); // two batches of the slab's blocks
    for (const p of small) other.free(p);
    other.flushCache();
    other.flush(); // four batches wait in the owner's inbox, newest first: 8 small, 32 small, 32 and 32 of the slab
    const before = owner.stats();
    const p = owner.malloc(256); // the slab is full: the drain reclaims batches until class 3 has a block
    expect(slab).toContain(p);
    const after = owner.stats();
    expect(after.cacheBlocks[3]).toBe(31); // one batch of the slab, less this block
    expect(after.cacheBlocks[0]).toBe(40); // the small ones came first: onto their own class's stack
    expect(after.perClass[3]!.slabs).toBe(before.perClass[3]!.slabs); // no new slab, the old one untouched
    expect(after.perClass[3]!.live).toBe(64); // cached blocks stay live in their slab
    expect(after.perClass[0]!.live).toBe(before.perClass[0]!.live);
    const again = new Set([p, ...Array.from({ length: 63 }, () => owner.malloc(256))]); // the last batch when needed
    expect(again).toEqual(new Set(slab)); // every delivered block served once, none twice
    expect(owner.stats().perClass[3]!.slabs).toBe(before.perClass[3]!.slabs);
    expect(owner.drain()).toBe(0);
    for (const q of again) owner.free(q);
    owner.flushCache();
    expect(owner.stats().perClass[3]!.live).toBe(0);
    expect(owner.stats().perClass[0]!.live).toBe(before.perClass[0]!.live - 40);
    owner.check();
  });

  it('a batch that fails a check when the allocation drains it: the objects before the bad one are reclaimed, the rest dropped', () => {
    const owner = createHeap({ maxBytes: 1 << 30 });
    const other = attachArenaHeap(owner.handle);
    const slab = Array.from({ length: 64 }, () => owner.malloc(256));
    for (const p of slab.slice(0, 32)) other.free(p); // one chain of 32: flushed as one batch when it fills
    other.flushCache();
    other.flush();
    // A write after free while the batch is in transit: the link of its 31st object now points outside the slab.
    let m = owner.u32[owner.engine.registry.inboxAddress(owner.stats().ownerSlot) >>> 2]!;
    for (let k = 1; k < 31; k++) m = owner.u32[m >>> 2]!;
    owner.u32[m >>> 2] = slab[63]! + 4096 * 64;
    let err: unknown;
    try {
      owner.malloc(256);
    } catch (e) {
      err = e;
    }
    expect((err as { code?: string })?.code).toBe('CORRUPTION');
    expect((err as Error).message).toMatch(/outside its slab|head unit|not in an arena/);
    expect(owner.stats().cacheBlocks[3]).toBe(31); // the 31 before it passed every check
    expect(owner.drain()).toBe(0); // the rest of the batch (its 32nd object) was dropped: it stays live
    expect(owner.stats().perClass[3]!.live).toBe(64);
    owner.check();
  });
});

