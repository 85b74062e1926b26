// The waits on every backend: `waitAsync` does what `wait` does around the wait (flush first, drain after, the
// idle return after one that timed out, bounded at 500 ms) without blocking, and both refuse bad arguments
// before anything changes. (That `wait` refuses on a browser window's main thread is tested in Chromium.)
import { describe, expect, it } from 'vitest';
import { HeapError } from '@paddock/platform';
import { attachClassicHeap, createClassicHeap } from '../src/classic-heap.js';
import { attachGlobalHeap, createGlobalHeap } from '../src/global-heap.js';
import { attachArenaHeap, createArenaHeap } from '../src/heap.js';
import { TICK_MAX_MS, type Heap, type HeapHandle, type HeapOptions } from '../src/types.js';

const GiB = 1 << 30;

const backends: [string, (o: HeapOptions) => Heap, (h: HeapHandle) => Heap][] = [
  ['pool_arena', (o) => createArenaHeap(o), (h) => attachArenaHeap(h)],
  ['pool_classic', (o) => createClassicHeap(o), (h) => attachClassicHeap(h)],
  ['pool_global', (o) => createGlobalHeap(o), (h) => attachGlobalHeap(h)],
];

function caught(use: () => unknown): unknown {
  try {
    use();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('waitAsync on the arena', () => {
  it('flushes first, drains after waking (before it resolves), and runs the idle return once', async () => {
    const owner = createArenaHeap({ maxBytes: GiB });
    const other = attachArenaHeap(owner.handle);
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const ps = Array.from({ length: 40 }, () => other.malloc(256));
    for (const p of ps) owner.free(p); // cached by the freeing agent
    const runs: number[] = [];
    const original = owner.returnIdle.bind(owner);
    owner.returnIdle = () => {
      runs.push(Date.now());
      original();
    };
    // The other agent waits: the flush sends nothing (it holds nothing foreign) and its inbox is empty.
    const waiting = other.waitAsync(flag, 0, 0, 10_000);
    // Meanwhile the owner sends the blocks home (its own timed-out wait runs its idle return once).
    expect(await owner.waitAsync(flag, 0, 0, 5)).toBe('timed-out');
    expect(runs).toHaveLength(1);
    expect(owner.stats().cacheBytes).toBe(0);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    expect(await waiting).toBe('ok');
    expect(other.drain()).toBe(0); // taken in before the promise resolved
    // Woken (not timed out), it goes on working: what arrived is on its cache stacks, its next mallocs' blocks.
    expect(other.stats().cacheBlocks[3]).toBe(40);
    expect(other.stats().liveBytes).toBe(other.stats().cacheBytes);
    other.flushCache();
    expect(other.stats().liveBytes).toBe(0);
    expect(await owner.waitAsync(flag, 0, 1, 5)).toBe('timed-out');
    expect(runs).toHaveLength(1); // nothing allocated since the last idle return
    owner.malloc(32);
    expect(await owner.waitAsync(flag, 0, 0, 5)).toBe('not-equal'); // resolved at once, no idle return
    expect(runs).toHaveLength(1);
    owner.check();
  });

  it('a waiting agent gets what arrived during the wait, as wait does', async () => {
    const owner = createArenaHeap({ maxBytes: GiB });
    const other = attachArenaHeap(owner.handle);
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const ps = Array.from({ length: 64 }, () => owner.malloc(4096));
    const waiting = owner.waitAsync(flag, 0, 0, 10_000);
    for (const p of ps) other.free(p);
    other.flushCache();
    other.flush(); // the blocks wait in the owner's inbox
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    expect(await waiting).toBe('ok');
    expect(owner.drain()).toBe(0);
    expect(owner.stats().cacheBlocks[7]).toBe(64); // onto the cache stack of its class, for its next mallocs
    expect(owner.stats().liveBytes).toBe(owner.stats().cacheBytes);
    owner.flushCache();
    expect(owner.stats().liveBytes).toBe(0);
    owner.check();
  });

  it('is bounded at 500 ms', async () => {
    const heap = createArenaHeap({ maxBytes: GiB });
    const t0 = Date.now();
    expect(await heap.waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000)).toBe('timed-out');
    expect(Date.now() - t0).toBeLessThan(TICK_MAX_MS + 400);
  });

  it('an agent closed while it waits resolves without touching the heap', async () => {
    const owner = createArenaHeap({ maxBytes: GiB });
    const other = attachArenaHeap(owner.handle);
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const waiting = other.waitAsync(flag, 0, 0, 50);
    other.close();
    expect(await waiting).toBe('timed-out');
    owner.check();
  });
});

describe.each(backends)('the waits on %s', (backend, create, attach) => {
  it('waitAsync resolves ok on a notify, not-equal at once, timed-out when bounded', async () => {
    const heap = create({ maxBytes: GiB });
    expect(heap.backend).toBe(backend);
    const flag = new Int32Array(new SharedArrayBuffer(8));
    const p = heap.malloc(100);
    const waiting = heap.waitAsync(flag, 1, 0);
    setTimeout(() => {
      Atomics.store(flag, 1, 7);
      Atomics.notify(flag, 1);
    }, 10);
    expect(await waiting).toBe('ok');
    expect(await heap.waitAsync(flag, 1, 0)).toBe('not-equal');
    expect(await heap.waitAsync(flag, 1, 7, 1)).toBe('timed-out');
    heap.free(p);
    heap.check();
  });

  it('both waits refuse bad arguments before anything changes', () => {
    const heap = create({ maxBytes: GiB });
    const other = attach(heap.handle);
    const shared = new Int32Array(new SharedArrayBuffer(8));
    const p = heap.malloc(64);
    other.free(p);
    const before = heldState(other);
    const bad: [string, unknown[], new (...a: never[]) => Error][] = [
      ['an unshared array', [new Int32Array(2), 0, 0, 1], TypeError],
      ['a Uint32Array', [new Uint32Array(new SharedArrayBuffer(8)), 0, 0, 1], TypeError],
      ['an index past the end', [shared, 2, 0, 1], RangeError],
      ['a negative index', [shared, -1, 0, 1], RangeError],
      ['a fractional index', [shared, 0.5, 0, 1], RangeError],
      ['a negative timeout', [shared, 0, 0, -1], RangeError],
      ['a NaN timeout', [shared, 0, 0, Number.NaN], RangeError],
    ];
    for (const [what, args, type] of bad) {
      const call = args as [Int32Array, number, number, number];
      expect(caught(() => other.wait(...call)), `wait with ${what}`).toBeInstanceOf(type);
      expect(caught(() => other.waitAsync(...call)), `waitAsync with ${what}`).toBeInstanceOf(type);
    }
    expect(heldState(other)).toBe(before); // nothing was flushed
    other.close();
    for (const use of [() => other.wait(shared, 0, 1, 0), () => other.waitAsync(shared, 0, 1, 0)]) {
      const err = caught(use);
      expect(err).toBeInstanceOf(HeapError);
      expect((err as HeapError).code).toBe('DETACHED');
    }
  });
});

/** What an agent holds, as text: its stats without the process's resident bytes (which move by themselves). */
function heldState(heap: Heap): string {
  return JSON.stringify({ ...heap.stats(), residentBytes: 0 });
}
