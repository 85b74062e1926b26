// The allocator contract, one backend's cases: registered by contract.test.ts under vitest in Node and by the
// browser suite's page in Chromium (the same cases, against the test interface in tools/test-utils/suite.ts).
import { HeapError } from '@paddock/platform';
import { createClassicHeap } from '../../src/classic-heap.js';
import { createGlobalHeap } from '../../src/global-heap.js';
import { createArenaHeap } from '../../src/heap.js';
import type { Heap, HeapOptions } from '../../src/types.js';
import type { AgentHost, Suite } from '../../../../tools/test-utils/suite.js';
import { runRandomOps } from '../model.js';

const MiB = 1 << 20;

export const backends: [string, (o: HeapOptions) => Heap][] = [
  ['pool_arena', (o) => createArenaHeap(o)],
  ['pool_classic', (o) => createClassicHeap(o)],
  ['pool_global', (o) => createGlobalHeap(o)],
];

type Message = { kind: string };
const kind = (k: string) => (m: Message) => m.kind === k;

/** Registers the contract's cases for `backend`; `agents` starts the cross-agent case's agent (test/agents). */
export function contractCases(t: Suite, backend: string, create: (o: HeapOptions) => Heap, agents: AgentHost): void {
  t.it('every class and a ladder to 3 MiB: non-zero, aligned, non-overlapping, usable size covers the request', () => {
    const heap = create({ maxBytes: 2 ** 31 });
    t.expect(heap.backend).toBe(backend);
    const got: [number, number][] = [];
    const sizes: number[] = [0, 1];
    for (let s = 32; s <= MiB; s *= 2) sizes.push(s - 1, s, s + 1);
    for (let s = 1; s <= 3 * MiB; s = Math.ceil(s * 1.41) + 3) sizes.push(s);
    for (const size of sizes) {
      const p = heap.malloc(size);
      t.expect(p).toBeGreaterThan(0);
      const usable = heap.usableSize(p);
      t.expect(usable).toBeGreaterThanOrEqual(size);
      t.expect(p % 16).toBe(0);
      if (size <= 4096 && size > 0) t.expect(p % Math.min(2 ** Math.floor(Math.log2(Math.max(32, usable))), 4096)).toBe(0);
      const end = p + Math.max(size, 1);
      for (const [q, n] of got) t.expect(end <= q || q + n <= p).toBe(true);
      got.push([p, Math.max(size, 1)]);
      heap.u8[p] = 1;
    }
    heap.check();
    for (const [p] of got) heap.free(p);
    heap.check();
  });

  t.it('freed memory is reused', () => {
    const heap = create({ maxBytes: 2 ** 30 });
    for (const size of [32, 100, 4096, 60_000]) {
      const p = heap.malloc(size);
      heap.free(p);
      t.expect(heap.malloc(size)).toBe(p);
    }
  });

  t.it('realloc: null acts as malloc, same class keeps the pointer, contents move, shrink from large into a class', () => {
    const heap = create({ maxBytes: 2 ** 31 });
    const p = heap.realloc(0, 40);
    t.expect(p).toBeGreaterThan(0);
    t.expect(heap.realloc(p, 60)).toBe(p);
    heap.u8.set([7, 8, 9], p);
    const q = heap.realloc(p, 5000);
    t.expect([...heap.u8.subarray(q, q + 3)]).toEqual([7, 8, 9]);
    const big = heap.realloc(q, 2 * MiB + 5);
    t.expect([...heap.u8.subarray(big, big + 3)]).toEqual([7, 8, 9]);
    t.expect(heap.realloc(big, 2 * MiB + 100)).toBe(big); // same rounded large size
    const small = heap.realloc(big, 48);
    t.expect([...heap.u8.subarray(small, small + 3)]).toEqual([7, 8, 9]);
    t.expect(() => heap.free(big)).toThrow(HeapError); // the old block went back with its real size
    heap.free(small);
    heap.check();
  });

  t.it('100k seeded operations against an independent record of live memory', () => {
    const heap = create({ maxBytes: 2 ** 32 - 65536 });
    // The classic pool never merges large blocks nor returns address space, so random sizes up to 20 MiB
    // exhaust 4 GiB of it (its documented weakness); it gets large blocks up to 4 MiB and no oversized ones.
    const counts = backend === 'pool_classic' ? runRandomOps(heap, 0xc0ffee, 100_000, 4 * MiB, false) : runRandomOps(heap, 0xc0ffee, 100_000);
    t.expect(counts.frees).toBeGreaterThan(30_000);
    heap.check();
  });

  t.it('bad input: RangeError for sizes, HeapError for pointers, and the heap keeps serving', () => {
    const heap = create({ maxBytes: 2 ** 30 });
    const live = heap.malloc(100);
    for (const size of [-1, Number.NaN, 1.5, Number.POSITIVE_INFINITY, 2 ** 33]) t.expect(() => heap.malloc(size)).toThrow(RangeError);
    t.expect(() => heap.calloc(2 ** 20, 2 ** 20)).toThrow(RangeError);
    for (const ptr of [live + 1, live + 8, 2 ** 31 + 64, 4096]) t.expect(() => heap.free(ptr)).toThrow(HeapError);
    heap.free(0);
    const freed = heap.malloc(64);
    heap.malloc(64);
    heap.free(freed);
    t.expect(() => heap.free(freed)).toThrow(HeapError);
    heap.check();
    t.expect(heap.usableSize(live)).toBeGreaterThanOrEqual(100);
  });

  t.it('out of memory is HeapError OUT_OF_MEMORY on every path (malloc, calloc, realloc, scope), and the heap keeps serving', () => {
    const maxBytes = 256 * MiB;
    const heap = create({ maxBytes });
    const outOfMemory = (f: () => unknown) => {
      let err: unknown = null;
      try {
        f();
      } catch (e) {
        err = e;
      }
      t.expect(err instanceof HeapError).toBe(true);
      t.expect((err as HeapError).code).toBe('OUT_OF_MEMORY');
    };
    // Sizes within maxBytes that no heap of maxBytes can hold (a header or a rounding takes it past the space).
    for (const size of [maxBytes, maxBytes - 1, maxBytes - 4096]) outOfMemory(() => heap.malloc(size));
    outOfMemory(() => heap.calloc(1, maxBytes));
    outOfMemory(() => heap.calloc(2, maxBytes / 2));
    const kept = heap.malloc(100);
    heap.u8.set([1, 2, 3], kept);
    outOfMemory(() => heap.realloc(kept, maxBytes));
    t.expect([...heap.u8.subarray(kept, kept + 3)]).toEqual([1, 2, 3]); // the block stays live, untouched
    const scope = heap.scope();
    try {
      outOfMemory(() => scope.malloc(maxBytes));
      outOfMemory(() => scope.calloc(1, maxBytes));
      t.expect(scope.malloc(64)).toBeGreaterThan(0); // the scope stays open and serves what fits
    } finally {
      scope.close();
    }
    t.expect(() => heap.malloc(maxBytes + 1)).toThrow(RangeError); // above maxBytes: a bad size, not a full heap
    heap.check();
    // Filled with 1 MiB blocks to the first refusal: every further malloc is served or refused with OUT_OF_MEMORY.
    const live: number[] = [kept];
    for (;;) {
      let p = 0;
      try {
        p = heap.malloc(MiB);
      } catch (e) {
        t.expect((e as HeapError).code).toBe('OUT_OF_MEMORY');
        break;
      }
      t.expect(p).toBeGreaterThan(0);
      live.push(p);
    }
    for (const size of [MiB, 32, 4096, 3 * MiB, 16 * MiB, maxBytes / 2]) {
      try {
        live.push(heap.malloc(size));
      } catch (e) {
        t.expect(e instanceof HeapError).toBe(true);
        t.expect((e as HeapError).code).toBe('OUT_OF_MEMORY');
      }
    }
    outOfMemory(() => heap.realloc(kept, 128 * MiB));
    t.expect([...heap.u8.subarray(kept, kept + 3)]).toEqual([1, 2, 3]);
    heap.check();
    for (const p of live) heap.free(p);
    heap.check();
    const again = heap.malloc(MiB);
    t.expect(again).toBeGreaterThan(0);
    heap.free(again);
  });

  t.it('cross-agent frees with real workers (started under the export condition of this backend)', async () => {
    const heap = create({ maxBytes: 2 ** 30 });
    const w = agents('contract-agent', backend, { handle: heap.handle });
    const ready = await w.next<Message & { backend: string }>(kind('ready'));
    t.expect(ready.backend).toBe(backend);
    const blocks = Array.from({ length: 500 }, (_, i) => {
      const p = heap.malloc(32 + (i % 40) * 24);
      heap.u32[p >>> 2] = i;
      return [p, i];
    });
    const freed = w.next<Message & { bad: number }>(kind('freed'));
    w.post({ kind: 'free', blocks });
    t.expect((await freed).bad).toBe(0);
    heap.drain();
    const allocated = w.next<Message & { blocks: [number, number][] }>(kind('allocated'));
    w.post({ kind: 'alloc', count: 300, size: 200 });
    const theirs = (await allocated).blocks;
    for (const [p, tag] of theirs) {
      t.expect(heap.u32[p >>> 2]).toBe(tag);
      heap.free(p);
    }
    heap.flushCache();
    heap.flush();
    const stopped = w.next(kind('stopped'));
    w.post({ kind: 'stop' });
    await stopped;
    await w.terminate();
    heap.tick();
    heap.check();
  });
}
