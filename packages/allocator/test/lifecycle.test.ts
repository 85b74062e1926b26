// Agents that come and go: a worker that ends by itself leaves the heap, a free that reaches an owner that
// left is taken over by the freeing agent (exactly once when several race), `watch` reaps a worker that was
// stopped from outside or crashed, and a closed heap object refuses every use. Real workers throughout.
import { describe, expect, it } from 'vitest';
import type { Worker } from 'node:worker_threads';
import { B_NEXT, DRAIN_OFFSET, D_RUN } from '@paddock/arena';
import { HeapError } from '@paddock/platform';
import { attachArenaHeap, createArenaHeap, type ArenaBackedHeap } from '../src/heap.js';
import { nextMessage, startWorker } from './workers.js';

const MiB = 1024 * 1024;

/**
 * Resolves with the worker's exit code. Call it before awaiting a message of the worker: the messages a worker
 * sent just before it ended are delivered in the same task as its 'exit' event.
 */
function exited(w: Worker): Promise<number> {
  return new Promise((resolve) => w.once('exit', resolve));
}

/** Arenas carved in the whole heap (by any agent) that are laid out. */
function carvedArenas(heap: ArenaBackedHeap): number {
  return heap.engine.regions.carvedArenas().length;
}

/** Blocks a worker handed over: their addresses, and the agent and owner slot that allocated them. */
interface Handed {
  kind: string;
  agentId: number;
  slot: number;
  blocks: number[];
}

/**
 * Runs a worker that allocates `count` blocks of `size` (block i holds `tag + i`), hands them over and ends by
 * itself, or by an uncaught exception with `crash`. Resolves once it is gone, with what it handed and its exit code.
 */
async function handOver(heap: ArenaBackedHeap, count: number, size: number, tag: number, crash = false): Promise<Handed & { code: number }> {
  const w = startWorker('lifecycle.mjs', { handle: heap.handle, job: crash ? 'hand-over-then-throw' : 'hand-over-then-end', count, size, tag });
  if (crash) w.on('error', () => {}); // the exception is the worker's own
  const gone = exited(w);
  const handed = await nextMessage<Handed>(w, (m) => m.kind === 'handed');
  return { ...handed, code: await gone };
}

describe('a worker that ends by itself', () => {
  for (const how of ['natural', 'exit', 'close'] as const) {
    it(`leaves the heap (${how}): its empty arenas are released and their pages returned, no other agent ticking`, async () => {
      const heap = createArenaHeap({ maxBytes: 1 << 30 });
      const before = heap.stats().committedBytes;
      const w = startWorker('lifecycle.mjs', { handle: heap.handle, job: 'free-all-then-end', bytes: 24 * MiB, how });
      const gone = exited(w);
      const freed = await nextMessage<{ kind: string; committed: number; agentId: number; slot: number }>(w, (m) => m.kind === 'freed');
      expect(freed.committed - before).toBeGreaterThan(8 * MiB); // freed, but not yet given back
      expect(await gone).toBe(0);
      expect(carvedArenas(heap)).toBe(0);
      // Its agent area's first page stays (the list runs through it); nothing else of it is committed.
      expect(heap.stats().committedBytes - before).toBeLessThanOrEqual(64 * 1024);
      expect(heap.engine.registry.slotState(freed.slot)).toBe(1); // detached: nothing left to take over
      expect(() => heap.reap(freed.agentId)).toThrow(RangeError); // it left; there is nothing to reap
      heap.check();
    });
  }

  it('its agent area is laid out again by the next agent, so workers that come and go do not grow the heap', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30 });
    let committed = 0;
    for (let round = 0; round < 4; round++) {
      const w = startWorker('lifecycle.mjs', { handle: heap.handle, job: 'free-all-then-end', bytes: 2 * MiB, how: 'natural' });
      await exited(w);
      if (round === 1) committed = heap.stats().committedBytes;
      if (round > 1) expect(heap.stats().committedBytes).toBe(committed);
    }
    expect(heap.space.agentsOpened).toBe(5);
    heap.check();
  });
});

describe('frees that reach an owner after it left', () => {
  it('are taken over by the freeing agent, which returns the memory without ticking', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30 });
    const handed = await handOver(heap, 3000, 1000, 7);
    expect(carvedArenas(heap)).toBeGreaterThan(0); // its blocks are live: its arenas wait for them
    handed.blocks.forEach((p, i) => expect(heap.u32[p >>> 2]).toBe(7 + i));
    for (const p of handed.blocks) heap.free(p);
    heap.flushCache(); // what the cache took goes home too: to this agent, which owns the arena now
    heap.flush();
    expect(heap.stats().adoptedSlots).toEqual([handed.slot]);
    expect(heap.stats().liveBytes).toBe(0);
    expect(carvedArenas(heap)).toBe(0); // emptied, and given back at once
    heap.check();
  });

  it('are taken over exactly once when several agents free into a departed owner at the same moment', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30 });
    const handed = await handOver(heap, 4000, 200, 0);
    const freers = 4;
    const gate = new SharedArrayBuffer(12);
    const g = new Int32Array(gate);
    const share = (k: number) => handed.blocks.filter((_, i) => i % freers === k);
    const ws = Array.from({ length: freers }, (_, k) => startWorker('lifecycle.mjs', { handle: heap.handle, job: 'free-at-gate', gate, freers, blocks: share(k) }));
    while (Atomics.load(g, 1) < freers) await new Promise((r) => setTimeout(r, 2));
    Atomics.store(g, 0, 1);
    Atomics.notify(g, 0);
    const reports = await Promise.all(ws.map((x) => nextMessage<{ kind: string; adoptedSlots: number[]; liveBytes: number; arenas: number }>(x, (m) => m.kind === 'freed')));
    const takers = reports.filter((r) => r.adoptedSlots.includes(handed.slot));
    expect(takers).toHaveLength(1);
    expect(reports.reduce((n, r) => n + r.liveBytes, 0)).toBe(0); // every block came home once (a second time throws)
    const allGone = Promise.all(ws.map(exited));
    ws.forEach((x) => x.postMessage('go'));
    await allGone;
    expect(carvedArenas(heap)).toBe(0);
    heap.check();
  });
});

describe('a worker that crashes', () => {
  async function crashed(heap: ArenaBackedHeap) {
    const handed = await handOver(heap, 1000, 500, 3, true);
    expect(handed.code).toBe(1);
    expect(heap.engine.registry.slotState(handed.slot)).toBe(2); // orphaned: to be reaped, never trusted as is
    return handed;
  }

  it('is reaped by the first agent whose free reaches it', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30, watchWorkers: false }); // not watched: reaped by a free
    const handed = await crashed(heap);
    for (const p of handed.blocks) heap.free(p);
    heap.flushCache();
    heap.flush();
    expect(() => heap.reap(handed.agentId)).toThrow(/not live/);
    expect(heap.stats().adoptedSlots).toEqual([handed.slot]);
    expect(heap.stats().liveBytes).toBe(0);
    expect(carvedArenas(heap)).toBe(0);
    heap.check();
  });

  it('is reaped by any agent that ticks, its blocks kept live', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30, watchWorkers: false }); // not watched: reaped by a tick
    const handed = await crashed(heap);
    heap.tick();
    expect(heap.stats().adoptedSlots).toEqual([handed.slot]);
    handed.blocks.forEach((p, i) => expect(heap.u32[p >>> 2]).toBe(3 + i));
    expect(heap.stats().liveBytes).toBe(1000 * 512);
    for (const p of handed.blocks) heap.free(p);
    heap.flushCache();
    expect(heap.stats().liveBytes).toBe(0);
    expect(carvedArenas(heap)).toBe(0);
    heap.check();
  });
});

describe('watch', () => {
  it('reaps a worker that throws after attaching, releasing its blocks when asked', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30 });
    const before = heap.stats().committedBytes;
    const w = startWorker('lifecycle.mjs', { handle: heap.handle, job: 'hold-then-throw', bytes: 16 * MiB });
    expect(heap.watch(w, { releaseLive: true })).toBe(true);
    const gone = exited(w);
    w.on('error', () => {}); // the exception is the worker's own
    const holding = await nextMessage<{ kind: string; agentId: number; committed: number }>(w, (m) => m.kind === 'holding');
    expect(holding.committed - before).toBeGreaterThan(16 * MiB);
    expect(await gone).toBe(1); // the watch's own exit listener ran first
    expect(heap.engine.agentsOnThread(w.threadId + 1)).toEqual([]);
    expect(() => heap.reap(holding.agentId)).toThrow(/not live/);
    expect(carvedArenas(heap)).toBe(0);
    expect(heap.stats().committedBytes - before).toBeLessThanOrEqual(64 * 1024);
    heap.check();
  });

  it('reaps a terminated worker; by default its blocks stay live for whoever holds them', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30 });
    const w = startWorker('lifecycle.mjs', { handle: heap.handle, job: 'hold-then-wait', bytes: 4 * MiB });
    heap.watch(w);
    heap.watch(w); // a second watch of the same worker adds nothing
    const holding = await nextMessage<{ kind: string; agentId: number; blocks: number[] }>(w, (m) => m.kind === 'holding');
    await w.terminate();
    expect(() => heap.reap(holding.agentId)).toThrow(/not live/); // watch did it
    holding.blocks.forEach((p, i) => expect(heap.u32[p >>> 2]).toBe(i));
    expect(heap.stats().liveBytes).toBeGreaterThanOrEqual(4 * MiB);
    for (const p of holding.blocks) heap.free(p);
    heap.flushCache();
    expect(heap.stats().liveBytes).toBe(0);
    expect(carvedArenas(heap)).toBe(0);
    heap.check();
  });

  it('releaseLive releases what the dead worker carved, never the arenas it took over from a worker that left', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30 });
    const handed = await handOver(heap, 200, 100, 0);
    const b = startWorker('lifecycle.mjs', { handle: heap.handle, job: 'free-then-wait', blocks: handed.blocks.slice(0, 10) });
    heap.watch(b, { releaseLive: true });
    const bGone = exited(b);
    const freed = await nextMessage<{ kind: string; adoptedSlots: number[] }>(b, (m) => m.kind === 'freed');
    expect(freed.adoptedSlots).toEqual([handed.slot]); // b took the departed owner over
    await b.terminate();
    await bGone;
    // The other 190 blocks are still the main thread's to read and free: their arena was not released.
    handed.blocks.slice(10).forEach((p, i) => expect(heap.u32[p >>> 2]).toBe(10 + i));
    for (const p of handed.blocks.slice(10)) heap.free(p);
    heap.flushCache();
    heap.flush();
    expect(heap.stats().liveBytes).toBe(0);
    expect(carvedArenas(heap)).toBe(0);
    heap.check();
  });

  it('a worker terminated in the middle of a drain: the reaper finishes the drain, nothing stays live', async () => {
    // Sixteen rounds, each stopping the worker a little later (0 to 3.75 ms into its drain of 200,000 objects,
    // while its code is still cold and every call inside the loop is a point where it can be stopped), so that the
    // stops land at many points of the per-object reclaim, not only at its start.
    let stoppedMidway = 0;
    for (let round = 0; round < 16; round++) {
      const heap = createArenaHeap({ maxBytes: 1 << 30 });
      const flag = new SharedArrayBuffer(4);
      const f = new Int32Array(flag);
      const w = startWorker('lifecycle.mjs', { handle: heap.handle, job: 'drain-when-told', count: 200_000, size: 48, flag });
      heap.watch(w);
      const gone = exited(w);
      const handed = await nextMessage<{ kind: string; blocks: number[] }>(w, (m) => m.kind === 'handed');
      for (const p of handed.blocks) heap.free(p);
      heap.flushCache();
      heap.flush(); // every block now waits in the worker's inbox
      w.postMessage('drain');
      while (Atomics.load(f, 0) === 0) Atomics.wait(f, 0, 0, 1);
      Atomics.wait(f, 0, 1, round / 4); // returns early once the drain is done
      await w.terminate();
      await gone;
      if (Atomics.load(f, 0) === 1) stoppedMidway++; // it never finished its drain
      heap.flushCache();
      expect(heap.stats().liveBytes, `round ${round}`).toBe(0);
      expect(carvedArenas(heap)).toBe(0);
      heap.check();
    }
    if (stoppedMidway === 0) console.log('every worker finished its drain before it was stopped: the interrupted path was not taken this time');
  });

  it('a reaper finishes the drain an agent left in its queue: the batches its allocation did not need', () => {
    // An allocation's drain reclaims batches only until its class has a block; the rest wait in the agent's queue.
    // The agent dies there (reaped without having detached): the reaper reclaims the queue.
    const heap = createArenaHeap({ maxBytes: 1 << 28 });
    const b = attachArenaHeap(heap.handle);
    const blocks = Array.from({ length: 64 }, () => b.malloc(4096)); // 16 slabs of 4 blocks, all full
    for (const p of blocks) heap.free(p);
    heap.flushCache();
    heap.flush(); // two batches of 32 in b's inbox
    const held = b.malloc(4096); // slab full: the drain takes the inbox, reclaims one batch onto the cache stack
    expect(blocks).toContain(held);
    const dw = (b.engine.agentArea + DRAIN_OFFSET) >>> 2;
    const queued = Atomics.load(heap.u32, dw + D_RUN);
    expect(queued).not.toBe(0); // the second batch, not begun
    expect(heap.u32[(queued >>> 2) + B_NEXT]).toBe(0);
    expect(b.stats().cacheBlocks[7]).toBe(31);
    const report = heap.reap(b.agentId);
    expect(report.drainedObjects).toBe(32);
    expect(report.cacheBlocks).toBe(31);
    expect(Atomics.load(heap.u32, dw + D_RUN)).toBe(0);
    heap.free(held);
    heap.flushCache();
    expect(heap.stats().liveBytes).toBe(0);
    heap.check();
  });

  it('refuses what is not a worker', () => {
    const heap = createArenaHeap({ maxBytes: 1 << 28 });
    expect(() => heap.watch({} as never)).toThrow(TypeError);
    expect(() => heap.watch(null as never)).toThrow(TypeError);
    expect(() => heap.watch({ threadId: -1, once() {} })).toThrow(RangeError);
  });
});

describe('close', () => {
  it('twice is harmless, and every use afterwards is refused with DETACHED', () => {
    const heap = createArenaHeap({ maxBytes: 1 << 28 });
    const other = attachArenaHeap(heap.handle);
    const p = other.malloc(64);
    const big = other.malloc(2 * MiB);
    other.close();
    other.close();
    expect(other.isDetached).toBe(true);
    const uses: [string, () => unknown][] = [
      ['malloc', () => other.malloc(64)],
      ['malloc large', () => other.malloc(4 * MiB)],
      ['calloc', () => other.calloc(2, 32)],
      ['realloc', () => other.realloc(p, 128)],
      ['realloc null', () => other.realloc(0, 128)],
      ['free', () => other.free(p)],
      ['free null', () => other.free(0)],
      ['free large', () => other.free(big)],
      ['usableSize', () => other.usableSize(p)],
      ['flush', () => other.flush()],
      ['drain', () => other.drain()],
      ['flushCache', () => other.flushCache()],
      ['purgeRetention', () => other.purgeRetention()],
      ['stats', () => other.stats()],
      ['check', () => other.check()],
      ['tick', () => other.tick()],
      ['startIdle', () => other.startIdle()],
      ['returnIdle', () => other.returnIdle()],
      ['wait', () => other.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0)],
      ['waitAsync', () => other.waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0)],
      ['reap', () => other.reap(1)],
      ['watch', () => other.watch({ threadId: 1, once() {} })],
      ['setProfile', () => other.setProfile(3)],
      ['u8', () => other.u8],
      ['u32', () => other.u32],
      ['view', () => other.view],
    ];
    for (const [what, use] of uses) {
      let caught: unknown;
      try {
        use();
      } catch (err) {
        caught = err;
      }
      expect(caught, what).toBeInstanceOf(HeapError);
      expect((caught as HeapError).code, what).toBe('DETACHED');
    }
    // Its blocks are still the heap's: another agent frees them.
    heap.free(p);
    heap.free(big);
    heap.flushCache();
    heap.flush();
    expect(heap.stats().liveBytes).toBe(0);
    heap.check();
  });

  it('a closed object finds no cache even after a new agent lays out its area again', () => {
    const heap = createArenaHeap({ maxBytes: 1 << 28 });
    const first = attachArenaHeap(heap.handle);
    first.free(first.malloc(64));
    first.close();
    const second = attachArenaHeap(heap.handle);
    expect(second.engine.agentArea).toBe(first.engine.agentArea);
    const q = second.malloc(64);
    second.free(q); // into the second agent's cache, in the area the first one left
    expect(() => first.malloc(64)).toThrow(HeapError); // it must not pop the second agent's block
    expect(() => first.free(heap.malloc(64))).toThrow(HeapError);
    expect(second.malloc(64)).toBe(q);
    second.close();
  });

  it('using closes the heap at the end of the block', () => {
    const heap = createArenaHeap({ maxBytes: 1 << 28 });
    let seen: ArenaBackedHeap | undefined;
    {
      using h = attachArenaHeap(heap.handle);
      seen = h;
      h.free(h.malloc(100));
    }
    expect(seen.isDetached).toBe(true);
  });
});
