// Suspend and drain: the idle tick, the idle return, the bounded wait, detach and adoption, reap.
import { describe, expect, it } from 'vitest';
import { HeapError } from '@paddock/platform';
import { TICK_MAX_MS } from '../src/types.js';
import { attachArenaHeap as attachHeap, createArenaHeap as createHeap } from '../src/heap.js';
import { rss } from '@paddock/platform';
import { nextMessage, startWorker } from './workers.js';

const MiB = 1 << 20;
const GiB = 1 << 30;

describe('the idle tick', () => {
  it('runs 10, 20, 40 ... 500 ms while quiet, resets on allocation, and returns memory at the cap', () => {
    const heap = createHeap({ maxBytes: GiB });
    expect(heap.stats().nextTickMs).toBe(10);
    const ps = Array.from({ length: 1000 }, () => heap.malloc(64));
    expect(heap.tick()).toBe(10); // allocations since the last visit
    for (const p of ps) heap.free(p);
    // 512 filled the stack; each free that found it full handed its top 32 to the heap's exchange
    expect(heap.stats().cacheBlocks[1]).toBe(488);
    expect(heap.stats().exchangeBytes).toBe((1000 - 488) * 64);
    const seen: number[] = [];
    for (let i = 0; i < 7; i++) seen.push(heap.tick());
    expect(seen).toEqual([20, 40, 80, 160, 320, 500, 500]);
    expect(heap.stats().cacheBytes).toBe(0); // the visit that reached 500 ran the idle return
    expect(heap.stats().exchangeBytes).toBe(0);
    heap.malloc(32);
    expect(heap.tick()).toBe(10);
    heap.check();
  });

  it('an idle agent is woken by frees arriving in its empty inbox, not left until its next visit', async () => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const owner = createHeap({ maxBytes: GiB });
    const other = attachHeap(owner.handle);
    const ps = Array.from({ length: 64 }, () => owner.malloc(4096));
    for (let i = 0; i < 8; i++) owner.tick(); // idle since: its visits are 500 ms apart now
    expect(owner.stats().nextTickMs).toBe(TICK_MAX_MS);
    owner.startIdle();
    await sleep(40); // the first visit (10 ms) has run: the next is 500 ms away, the inbox watched
    const start = performance.now();
    for (const p of ps) other.free(p);
    other.flushCache();
    other.flush(); // the first batch into the empty inbox notifies it
    while (owner.stats().liveBytes !== 0 && performance.now() - start < 2000) await sleep(5);
    const took = performance.now() - start;
    owner.stopIdle();
    expect(owner.stats().liveBytes).toBe(0);
    expect(took).toBeLessThan(300); // well before the timer's visit
    owner.check();
  });

  it('the idle return sends cached foreign blocks home at once and empties the cache', () => {
    const owner = createHeap({ maxBytes: GiB });
    const other = attachHeap(owner.handle);
    const ps = Array.from({ length: 100 }, () => owner.malloc(128));
    for (const p of ps) other.free(p);
    expect(other.stats().cacheBlocks[2]).toBe(100);
    other.returnIdle();
    expect(other.stats().cacheBytes).toBe(0);
    expect(other.stats().pendingChainObjects).toBe(0);
    expect(owner.drain()).toBe(100);
    expect(owner.stats().liveBytes).toBe(0);
    owner.check();
  });

  it('the bounded wait flushes first, drains after, and runs the idle return exactly once', () => {
    const heap = createHeap({ maxBytes: GiB });
    const other = attachHeap(heap.handle);
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const p = heap.malloc(64);
    other.free(p); // cached in the other agent
    const q = heap.malloc(64);
    const runs: number[] = [];
    const original = other.returnIdle.bind(other);
    other.returnIdle = () => {
      runs.push(Date.now());
      original();
    };
    const t0 = Date.now();
    expect(other.wait(flag, 0, 0, 10_000)).toBe('timed-out'); // bounded at 500 ms
    expect(Date.now() - t0).toBeLessThan(TICK_MAX_MS + 400);
    expect(other.wait(flag, 0, 0, 20)).toBe('timed-out');
    expect(other.wait(flag, 0, 1, 20)).toBe('not-equal');
    expect(runs).toHaveLength(1);
    expect(other.stats().cacheBytes).toBe(0);
    heap.drain();
    expect(heap.stats().liveBytes).toBe(64); // q only: p came home
    heap.free(q);
    other.malloc(32); // activity: the next timed-out wait returns memory again
    other.wait(flag, 0, 0, 5);
    expect(runs).toHaveLength(2);
  });
});

describe('an agent that only frees', () => {
  it('sends what it freed after its idle return home at the next visit at the cap, and after a timed-out wait', () => {
    const owner = createHeap({ maxBytes: GiB });
    const freer = attachHeap(owner.handle);
    while (freer.tick() < TICK_MAX_MS); // quiet: up to the cap
    freer.tick(); // the idle return has run
    const flag = new Int32Array(new SharedArrayBuffer(4));
    for (const round of ['tick', 'wait'] as const) {
      const blocks = Array.from({ length: 300 }, () => owner.malloc(256));
      for (const p of blocks) freer.free(p); // into the freer's cache: it allocates nothing, so no activity
      expect(freer.stats().cacheBytes).toBeGreaterThan(0);
      if (round === 'tick') freer.tick();
      else freer.wait(flag, 0, 0, 1);
      expect(freer.stats().cacheBytes, round).toBe(0);
      expect(owner.drain(), round).toBe(300);
    }
    expect(owner.stats().liveBytes).toBe(0);
    owner.check();
  });
});

describe('idle agents give memory back to the OS', () => {
  async function idleDrop(bytes: number, block: number): Promise<{ baseline: number; held: number; after: number; ms: number }> {
    const heap = createHeap({ maxBytes: 4 * GiB - 65536, pageReturn: 'native' });
    expect(['prebuilt', 'built']).toContain(heap.stats().pageReturnAddon); // which addon returns the pages
    expect(createHeap({ maxBytes: GiB, pageReturn: 'none' }).stats().pageReturnAddon).toBeNull();
    const w = startWorker('idle.mjs', { handle: heap.handle, job: 'hold-free-idle', bytes, block });
    await nextMessage(w, (m: { kind: string }) => m.kind === 'attached');
    await new Promise((r) => setTimeout(r, 50));
    const baseline = rss()!;
    const held = nextMessage<{ kind: string }>(w, (m) => m.kind === 'held');
    const idle = nextMessage<{ kind: string }>(w, (m) => m.kind === 'idle');
    w.postMessage('go');
    await held;
    const heldRss = rss()!;
    await idle;
    const t0 = Date.now();
    let after = rss()!;
    while (Date.now() - t0 < 2000 && after > baseline + 10 * MiB) {
      await new Promise((r) => setTimeout(r, 50));
      after = rss()!;
    }
    const ms = Date.now() - t0;
    const stats = nextMessage<{ kind: string }>(w, (m) => m.kind === 'stats');
    w.postMessage('stats');
    await stats;
    await w.terminate();
    console.log(`idle return of ${bytes / MiB} MiB: rss baseline ${(baseline / MiB).toFixed(1)} MiB, held ${(heldRss / MiB).toFixed(1)} MiB, after ${(after / MiB).toFixed(1)} MiB (${ms} ms)`);
    return { baseline, held: heldRss, after, ms };
  }

  it('a worker that held about 100 MiB of class blocks settles within 10 MiB of its baseline in 2 s', async () => {
    const r = await idleDrop(100 * MiB, 64 * 1024);
    expect(r.held - r.baseline).toBeGreaterThan(80 * MiB); // the payload really was resident
    expect(r.after - r.baseline).toBeLessThanOrEqual(10 * MiB);
    expect(r.ms).toBeLessThan(2000);
  });

  it('with 1 GiB held it settles within 30 MiB of its baseline', async () => {
    const r = await idleDrop(GiB, 256 * 1024);
    expect(r.held - r.baseline).toBeGreaterThan(800 * MiB);
    expect(r.after - r.baseline).toBeLessThanOrEqual(30 * MiB);
  });
});

describe('detach and adoption', () => {
  it('a free to a detached owner is reclaimed by an adopter', async () => {
    const heap = createHeap({ maxBytes: GiB });
    const w = startWorker('idle.mjs', { handle: heap.handle, job: 'alloc-and-detach', count: 300, size: 96 });
    const r = await nextMessage<{ kind: string; blocks: number[]; agentId: number }>(w, (m) => m.kind === 'detached');
    await w.terminate();
    for (let i = 0; i < r.blocks.length; i++) expect(heap.u32[r.blocks[i]! >>> 2]).toBe(i);
    for (const p of r.blocks) heap.free(p);
    heap.returnIdle(); // cached foreign blocks go to the detached owner's inbox
    expect(heap.tick()).toBeGreaterThan(0); // the tick adopts the detached owner and drains its inbox
    expect(heap.stats().adoptedSlots).toHaveLength(1);
    expect(heap.stats().liveBytes).toBe(0);
    heap.check();
    expect(() => heap.reap(r.agentId)).toThrow(RangeError); // it detached: nothing to reap
  });

  it('a detached agent refuses further use', () => {
    const heap = createHeap({ maxBytes: GiB });
    const other = attachHeap(heap.handle);
    const p = other.malloc(40);
    other.detach();
    expect(() => other.malloc(40)).toThrow(HeapError);
    expect(() => other.free(p)).toThrow(HeapError);
    heap.free(p);
    heap.tick();
    heap.check();
  });
});

describe('reaping an agent that died', () => {
  it('a worker terminated in the middle of churn is reaped; check() passes and committed bytes come back', async () => {
    const heap = createHeap({ maxBytes: 2 * GiB, pageReturn: 'native', watchWorkers: false }); // reaped by hand below, not at its exit
    heap.malloc(32);
    const baseline = heap.stats().committedBytes;
    const w = startWorker('idle.mjs', { handle: heap.handle, job: 'churn-forever' });
    const { agentId } = await nextMessage<{ kind: string; agentId: number }>(w, (m) => m.kind === 'attached');
    await nextMessage(w, (m: { kind: string }) => m.kind === 'churning');
    await new Promise((r) => setTimeout(r, 30));
    await w.terminate();
    expect(heap.stats().committedBytes).toBeGreaterThan(baseline);
    const report = heap.reap(agentId, { releaseLive: true });
    expect(report.arenasAdopted).toBeGreaterThan(0);
    expect(report.liveBlocksReleased).toBeGreaterThan(0);
    heap.check();
    expect(() => heap.reap(agentId)).toThrow(RangeError); // once only
    heap.returnIdle();
    heap.check();
    const s = heap.stats();
    // Back to the baseline plus what was quarantined, plus the one spare arena's header (32 KiB) and the
    // dead agent's area header page (4 KiB) that stay committed.
    expect(s.committedBytes - baseline).toBeLessThanOrEqual(s.quarantinedBytes + 36 * 1024);
  });

  it('releaseLive drops the blocks of the dead agent\'s arenas; blocks its cache handed it from other arenas stay live', () => {
    const heap = createHeap({ maxBytes: GiB });
    const dying = attachHeap(heap.handle);
    const mine = Array.from({ length: 20 }, () => heap.malloc(96)); // 128 B class, the main agent's arena
    for (const p of mine) dying.free(p); // into the dying agent's cache: foreign blocks
    const reserved = Array.from({ length: 20 }, () => dying.malloc(100)); // served from that cache
    const own = Array.from({ length: 30 }, () => dying.malloc(100)); // cache empty: its own arena
    const slot = heap.engine.arenaOwnerOf(mine[0]!);
    expect(slot).toBe(heap.stats().ownerSlot);
    expect(reserved.every((p) => heap.engine.arenaOwnerOf(p) === slot)).toBe(true);
    expect(own.every((p) => heap.engine.arenaOwnerOf(p) === dying.stats().ownerSlot)).toBe(true);
    expect(heap.engine.arenaOwnerOf(0)).toBe(0);
    const report = heap.reap(dying.agentId, { releaseLive: true }); // it never detached: as if terminated
    expect(report.liveBlocksReleased).toBe(30);
    heap.check();
    expect(heap.stats().liveBytes).toBe(20 * 128); // the re-served blocks: nothing records who holds them
    for (const p of reserved) heap.free(p);
    heap.flushCache();
    expect(heap.stats().liveBytes).toBe(0);
    heap.check();
  });
});

describe('an agent that died while opening a region', () => {
  it('the reaper lists the region and releases the arena it never laid out', async () => {
    const heap = createHeap({ maxBytes: 1 << 30, watchWorkers: false }); // reaped by hand below, not at its exit
    const blocks: number[] = [];
    for (let i = 0; i < 31; i++) blocks.push(heap.malloc(heap.largeMax)); // one whole arena each: the region is full
    expect(heap.engine.regions.regionList()).toHaveLength(1);
    const w = startWorker('die-opening-region.mjs', { handle: heap.handle });
    const dying = await nextMessage<{ kind: string; agentId: number; region: number }>(w, (m) => m.kind === 'dying');
    await w.terminate();
    expect(heap.engine.regions.regionList()).toHaveLength(1); // the dead agent never listed it
    expect(heap.space.isReserved(dying.region, 64 << 20)).toBe(true);
    heap.reap(dying.agentId);
    expect(heap.engine.regions.regionList()).toContain(dying.region);
    expect(heap.engine.regions.isCarved(dying.region + (2 << 20))).toBe(false); // its slot 1 is free again
    heap.check();
    const p = heap.malloc(64 * 1024); // the heap grows into it
    expect(heap.engine.regions.regionList()).toHaveLength(2);
    heap.free(p);
    for (const b of blocks) heap.free(b);
    heap.check();
  });
});
