// The heap's exchange: a full thread cache hands the top of its stack to a slot when it frees one more block, and
// an agent short of the class takes a slot onto its empty stack; the blocks go home when an agent goes
// idle, leaves or flushes its cache; a reaper finds a dead agent's move half done and puts the blocks in exactly
// one place. Two agents on one thread where the steps must be seen one by one, real workers for the protocol.
import { describe, expect, it } from 'vitest';
import type { Worker } from 'node:worker_threads';
import { CACHE_STACKS_OFFSET, CACHE_STRIDE, EXCHANGE_BATCH, EXCHANGE_OFFSET, EXCHANGE_SLOTS, G_CACHE_COUNT, G_ROUTING, XA_BASE, XA_SLOT, X_COUNT, X_EMPTY, X_ENTRIES, X_FULL, X_GIVING, X_TAKING, exchangeSlot } from '@paddock/arena';
import { HeapError } from '@paddock/platform';
import { DEFAULT_PROFILE, cacheDepth } from '@paddock/profile';
import { attachArenaHeap, createArenaHeap, type ArenaBackedHeap } from '../src/heap.js';
import { nextMessage, startWorker } from './workers.js';

const C4K = 7; // the class of 4 KiB blocks

/** Class `cls`'s cache depth in `h`. */
function depthOf(h: ArenaBackedHeap, cls: number): number {
  return h.threadCache.stats().depth[cls]!;
}

/** The 4 KiB class's cache depth at the default rung. */
const DEPTH = cacheDepth(DEFAULT_PROFILE, C4K);

/** Int32 index of word `i` of `h`'s cache stack of class `cls`. */
function stackWord(h: ArenaBackedHeap, cls: number, i: number): number {
  return ((h.engine.agentArea + CACHE_STACKS_OFFSET) >>> 2) + cls * CACHE_STRIDE + i;
}

/**
 * A heap `a` and a second agent `b`; `a` allocates `n` 4 KiB blocks (a multiple of 4: its slabs end full, so its
 * next allocation looks for blocks elsewhere) and `b` frees the first `freed` of them.
 */
function handOver(n: number, freed: number): { a: ArenaBackedHeap; b: ArenaBackedHeap; blocks: number[] } {
  const a = createArenaHeap({ maxBytes: 1 << 28 });
  const b = attachArenaHeap(a.handle);
  const blocks = Array.from({ length: n }, () => a.malloc(4096));
  for (const p of blocks.slice(0, freed)) b.free(p);
  return { a, b, blocks };
}

/** Frees what `a` still holds, sends everything home, and checks that nothing of the whole heap is live. */
function nothingLive(a: ArenaBackedHeap, held: number[]): void {
  for (const p of held) a.free(p);
  a.flushCache();
  a.flush();
  a.drain();
  expect(a.snapshot().liveBytes).toBe(0);
  expect(a.stats().exchangeBytes).toBe(0);
  a.check();
}

describe('the exchange', () => {
  it('a full cache hands the top of its stack over; an agent short of the class takes it, not its inbox', () => {
    const depth = DEPTH;
    const { a, b, blocks } = handOver(depth + 4, depth + 1);
    // depth blocks filled b's stack; the next free handed the top batch over and took the stack's top itself
    expect(b.stats().cacheBlocks[C4K]).toBe(depth - EXCHANGE_BATCH + 1);
    expect(b.stats().exchangeBytes).toBe(EXCHANGE_BATCH * 4096);
    expect(b.stats().pendingChainObjects).toBe(0); // nothing set off home
    // a's slabs are full: its next allocations take the batch, not its inbox (nothing came home)
    const got = Array.from({ length: EXCHANGE_BATCH }, () => a.malloc(4096));
    expect(new Set(got)).toEqual(new Set(blocks.slice(depth - EXCHANGE_BATCH, depth)));
    expect(a.stats().exchangeBytes).toBe(0);
    expect(a.drain()).toBe(0);
    b.flushCache();
    b.flush();
    nothingLive(a, [...got, ...blocks.slice(depth + 1)]);
  });

  it('an agent freeing its own blocks hands them over too, and takes them back before its slabs', () => {
    const a = createArenaHeap({ maxBytes: 1 << 28 });
    const depth = depthOf(a, 1);
    const n = depth + EXCHANGE_SLOTS * EXCHANGE_BATCH; // whole slabs of 64 B blocks: the stack, then every slot
    const ps = Array.from({ length: n }, () => a.malloc(64));
    for (const p of ps) a.free(p);
    expect(a.stats().cacheBlocks[1]).toBe(depth);
    expect(a.stats().exchangeBytes).toBe(EXCHANGE_SLOTS * EXCHANGE_BATCH * 64);
    // the stack empties, then the allocations take the exchange's batches: the same blocks, no slab touched
    const again = Array.from({ length: n }, () => a.malloc(64));
    expect(new Set(again)).toEqual(new Set(ps));
    expect(a.stats().exchangeBytes).toBe(0);
    nothingLive(a, again);
  });

  it('when every slot of the class is taken, the block goes home as before', () => {
    const a = createArenaHeap({ maxBytes: 1 << 28 });
    const b = attachArenaHeap(a.handle);
    const ps = Array.from({ length: 40_000 }, () => a.malloc(32));
    for (const p of ps) b.free(p);
    const held = b.stats().exchangeBytes / 32;
    expect(held).toBeGreaterThan(0);
    expect(held % EXCHANGE_BATCH).toBe(0);
    expect(held + b.stats().cacheBlocks[0]! + b.stats().pendingChainObjects).toBeLessThanOrEqual(40_000);
    b.flush();
    expect(a.drain()).toBe(40_000 - held - b.stats().cacheBlocks[0]!);
    b.flushCache();
    b.flush();
    nothingLive(a, []);
  });

  for (const [how, step] of [
    ['goes idle', (b: ArenaBackedHeap) => b.returnIdle()],
    ['flushes its cache', (b: ArenaBackedHeap) => void b.flushCache()],
    ['leaves', (b: ArenaBackedHeap) => b.detach()],
  ] as const) {
    it(`what waits in the exchange goes home when an agent ${how}`, () => {
      const depth = DEPTH;
      const { a, b, blocks } = handOver(depth + 4, depth + 1);
      const c = attachArenaHeap(a.handle); // a third agent: the exchange is the heap's, not b's
      expect(c.stats().exchangeBytes).toBe(EXCHANGE_BATCH * 4096);
      step(b);
      expect(c.stats().exchangeBytes).toBe(0);
      if (how !== 'leaves') {
        b.flushCache();
        b.flush();
      }
      nothingLive(a, blocks.slice(depth + 1));
    });
  }
});

describe('a reaper finds a move to or from the exchange half done', () => {
  // Each case lays out the words a move leaves at one point (the agent area names the slot and the count before the
  // move; the slot is held in the dead agent's name) and reaps the agent: every block ends up in exactly one place,
  // which the final count of live bytes (0) and check() show; a block in two places would be freed twice.
  const point = (name: string, lay: (b: ArenaBackedHeap, s: number, batch: number[]) => void, expectInSlot: boolean) => {
    it(name, () => {
      const depth = DEPTH;
      const { a, b, blocks } = handOver(depth + 4, depth); // b's stack is full, nothing handed over yet
      const s = exchangeSlot(b.engine, C4K, 0);
      const batch = blocks.slice(depth - EXCHANGE_BATCH, depth);
      lay(b, s, batch);
      const report = a.reap(b.agentId);
      expect(Atomics.load(a.i32, s)).toBe(expectInSlot ? X_FULL : X_EMPTY);
      expect(a.stats().exchangeBytes).toBe(expectInSlot ? a.i32[s + X_COUNT]! * 4096 : 0);
      expect(report.lostBlocks).toBe(0);
      nothingLive(a, blocks.slice(depth));
    });
  };
  const xa = (b: ArenaBackedHeap) => (b.engine.agentArea + EXCHANGE_OFFSET) >>> 2;
  const cacheCount = (b: ArenaBackedHeap) => (b.engine.agentArea >>> 2) + G_CACHE_COUNT + C4K;
  /** The slot claimed by `b` for `state`, its words filled with `batch`. */
  const claim = (b: ArenaBackedHeap, s: number, state: number, batch: number[], base: number) => {
    const i32 = b.i32;
    i32[xa(b) + XA_SLOT] = s;
    i32[xa(b) + XA_BASE] = base;
    batch.forEach((p, i) => (i32[s + X_ENTRIES + i] = p));
    i32[s + X_COUNT] = batch.length;
    Atomics.store(i32, s, b.engine.exchangeTag | state);
  };

  point('giving: the slot claimed and filled, the cache count not moved yet (the blocks are the cache\'s)', (b, s, batch) => {
    claim(b, s, X_GIVING, batch, b.i32[cacheCount(b)]!);
  }, false);
  point('giving: the cache count moved, the slot not marked full yet (the blocks are the slot\'s)', (b, s, batch) => {
    const n = b.i32[cacheCount(b)]!;
    claim(b, s, X_GIVING, batch, n);
    b.i32[cacheCount(b)] = n - EXCHANGE_BATCH;
  }, true);
  point('taking: the slot claimed, the cache count not moved yet (the blocks are the slot\'s)', (b, s, batch) => {
    // b's stack gives its top batch back to the slot first (as another agent's give would have left it)
    const n = b.i32[cacheCount(b)]!;
    b.i32[cacheCount(b)] = n - EXCHANGE_BATCH;
    claim(b, s, X_TAKING, batch, n - EXCHANGE_BATCH);
    batch.forEach((p, i) => (b.i32[stackWord(b, C4K, n - EXCHANGE_BATCH + i)] = p)); // copied, not counted
  }, true);
  point('taking: the cache count moved, the slot not emptied yet (the blocks are the cache\'s)', (b, s, batch) => {
    const n = b.i32[cacheCount(b)]!;
    claim(b, s, X_TAKING, batch, n - EXCHANGE_BATCH);
  }, false);
  point('emptying: some blocks sent on, one named in the routing word, the rest still in the slot', (b, s, batch) => {
    const n = b.i32[cacheCount(b)]!;
    b.i32[cacheCount(b)] = n - EXCHANGE_BATCH;
    claim(b, s, X_TAKING, batch, -1);
    // from the top: 11 sent home (onto b's chain for a), the 12th off the slot and in the routing word
    for (let i = EXCHANGE_BATCH - 1; i > 20; i--) b.engine.freeValidated(batch[i]!);
    b.i32[s + X_COUNT] = 20;
    b.u32[(b.engine.agentArea >>> 2) + G_ROUTING] = batch[20]!;
  }, true);

  it('a block named in the routing word whose free set off a flush, pushed before the agent died, goes home once', () => {
    // b sends blocks of a home (a cache flush, or the exchange emptied): each is named in the routing word while it
    // is freed. The 32nd one's free sets the chain off to a's inbox, and b dies after the push, before it lets go
    // of the name (in the drain or the look that follow a push). The block waits in a's inbox, still held freed
    // and on no free list: the reaper must not free it again.
    const a = createArenaHeap({ maxBytes: 1 << 28 });
    const b = attachArenaHeap(a.handle);
    const blocks = Array.from({ length: 40 }, () => a.malloc(4096));
    const routing = (b.engine.agentArea >>> 2) + G_ROUTING;
    for (const p of blocks.slice(0, 32)) {
      b.engine.validateFree(p, undefined); // as its free did before it cached the block
      b.u32[routing] = p;
      b.engine.freeValidated(p);
    }
    expect(b.stats().pendingChainObjects).toBe(0); // the 32nd free pushed the chain: it waits in a's inbox
    expect(a.engine.registry.inboxHead(a.engine.slot)).toBe(blocks[31]);
    a.reap(b.agentId);
    nothingLive(a, blocks.slice(32));
  });

  it('a slot held by a live agent is left alone', () => {
    const depth = DEPTH;
    const { a, b, blocks } = handOver(depth + 4, depth + 1);
    const c = attachArenaHeap(a.handle);
    const s = exchangeSlot(b.engine, C4K, 0);
    expect(Atomics.load(a.i32, s)).toBe(X_FULL);
    // b names the slot as if it were in the middle of a move, but c holds it: the reaper must not touch it
    Atomics.store(a.i32, s, c.engine.exchangeTag | X_TAKING);
    b.i32[((b.engine.agentArea + EXCHANGE_OFFSET) >>> 2) + XA_SLOT] = s;
    b.i32[((b.engine.agentArea + EXCHANGE_OFFSET) >>> 2) + XA_BASE] = 0;
    a.reap(b.agentId);
    expect(Atomics.load(a.i32, s)).toBe(c.engine.exchangeTag | X_TAKING);
    Atomics.store(a.i32, s, X_FULL); // c "finishes" by handing it back
    nothingLive(a, blocks.slice(depth + 1));
  });
});

describe('the exchange between real workers', () => {
  const KiB = 1024;
  const sizes = [32, 64, 256, 4 * KiB, 48, 1 * KiB];

  /** Starts `pairs` producer-consumer pairs on `heap`, `count` blocks per producer; returns the workers and rings. */
  function start(heap: ArenaBackedHeap, pairs: number, count: number, tell?: SharedArrayBuffer) {
    const table = new SharedArrayBuffer(heap.space.maxBytes >>> 5);
    const rings: Int32Array[] = [];
    const producers: Worker[] = [];
    const consumers: Worker[] = [];
    for (let k = 0; k < pairs; k++) {
      const ring = new SharedArrayBuffer((3 + 256) * 4);
      rings.push(new Int32Array(ring));
      producers.push(startWorker('exchange.mjs', { handle: heap.handle, role: 'producer', ring, table, count, sizes }));
      consumers.push(startWorker('exchange.mjs', { handle: heap.handle, role: 'consumer', ring, table, count, sizes, tell: k === 0 ? tell : undefined }));
    }
    return { producers, consumers, rings, table: new Uint8Array(table) };
  }

  const exited = (w: Worker) => new Promise<number>((resolve) => w.once('exit', resolve));

  it('producers and consumers at once: no block handed out twice, foreign blocks reach producers, nothing lost', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30 });
    const { producers, consumers } = start(heap, 2, 30_000);
    const ends = [...producers, ...consumers].map(exited);
    // Every listener first: a message that arrives before its listener is attached is not seen.
    const producing = producers.map((w) => nextMessage<{ kind: string; duplicates: number; foreign: number }>(w, (m) => m.kind === 'produced'));
    const consuming = consumers.map((w) => nextMessage<{ kind: string; bad: number }>(w, (m) => m.kind === 'consumed'));
    const produced = await Promise.all(producing);
    const consumed = await Promise.all(consuming);
    await Promise.all(ends); // each agent left the heap as its thread ended (and emptied the exchange)
    for (const r of produced) expect(r.duplicates).toBe(0);
    for (const r of consumed) expect(r.bad).toBe(0);
    expect(produced.reduce((n, r) => n + r.foreign, 0)).toBeGreaterThan(0);
    nothingLive(heap, []);
  }, 60_000);

  it('a consumer terminated while its full cache hands blocks on: reaped, nothing lost or freed twice', async () => {
    for (let round = 0; round < 3; round++) {
      const heap = createArenaHeap({ maxBytes: 1 << 30 });
      const tell = new SharedArrayBuffer(4);
      const told = new Int32Array(tell);
      const { producers, consumers, rings, table } = start(heap, 1, 40_000, tell);
      const [producer, consumer] = [producers[0]!, consumers[0]!];
      heap.watch(consumer);
      const producing = nextMessage<{ kind: string; duplicates: number }>(producer, (m) => m.kind === 'produced');
      const producerEnd = exited(producer);
      const consumerEnd = exited(consumer);
      // stop it part way: its caches are full by then and every few frees hand a batch over
      const at = 2000 + Math.floor(Math.random() * 20_000);
      while (Atomics.load(told, 0) < at) await new Promise((r) => setTimeout(r, 0));
      await consumer.terminate();
      await consumerEnd; // the watch reaped it as it ended
      expect(heap.snapshot().arena!.agents.filter((x) => x.state === 'live' && !x.self).length).toBe(1); // the producer's
      // This agent consumes the rest of the ring. The block the consumer was freeing may be freed already: its free
      // here is refused (or, if the producer has had it again since, this frees that and the later one is refused).
      const ring = rings[0]!;
      const slots = ring.length - 3;
      let twice = 0;
      for (let t = Atomics.load(ring, 1); ; ) {
        for (const head = Atomics.load(ring, 0); t !== head; t++) {
          const p = ring[3 + (t % slots)]! >>> 0;
          Atomics.store(table, p >>> 5, 0);
          try {
            heap.free(p);
          } catch (err) {
            if (!(err instanceof HeapError) || err.code !== 'DOUBLE_FREE') throw err;
            twice++;
          }
          Atomics.store(ring, 1, t + 1);
        }
        if (Atomics.load(ring, 2) === 1 && Atomics.load(ring, 0) === t) break;
        await new Promise((r) => setTimeout(r, 1));
      }
      expect((await producing).duplicates).toBe(0);
      await producerEnd;
      expect(twice).toBeLessThanOrEqual(1);
      nothingLive(heap, []);
    }
  }, 120_000);
});
