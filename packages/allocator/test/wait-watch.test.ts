// The watch before a blocking wait sleeps (src/wait-watch.ts): the policy that decides when an agent watches its
// word, step by step, and heap.wait with it on real threads, where two workers take turns through one word.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createClassicHeap } from '../src/classic-heap.js';
import { createGlobalHeap } from '../src/global-heap.js';
import { createArenaHeap } from '../src/heap.js';
import type { Heap } from '../src/types.js';
import { SHORT_WAIT_MS, WAIT_SAMPLE_CAP_MS, WAIT_WATCH_MS, WATCH_PROBE_EVERY, WaitWatch } from '../src/wait-watch.js';

describe('when an agent watches its word before it sleeps', () => {
  it('not before its waits have been short: a new agent, or one whose waits are long, sleeps at once', () => {
    const w = new WaitWatch();
    expect(w.shouldWatch(500)).toBe(false); // nothing known yet: its waits count as long
    let waits = 0;
    while (!w.shouldWatch(500)) {
      w.waited(0.01);
      waits++;
    }
    expect(waits).toBeGreaterThan(5); // a moving average: several short waits before it watches
    expect(waits).toBeLessThan(40);
    for (let i = 0; i < 20; i++) w.waited(5); // long waits (an agent mostly idle)
    expect(w.typicalMs).toBeLessThanOrEqual(WAIT_SAMPLE_CAP_MS);
    expect(w.typicalMs).toBeGreaterThan(SHORT_WAIT_MS);
    expect(w.shouldWatch(500)).toBe(false);
  });

  it('not for a wait no longer than the watch itself', () => {
    const w = new WaitWatch();
    for (let i = 0; i < 40; i++) w.waited(0.005);
    expect(w.shouldWatch(500)).toBe(true);
    expect(w.shouldWatch(WAIT_WATCH_MS)).toBe(false);
    expect(w.shouldWatch(0)).toBe(false);
  });

  it('while watches fail it watches once in a while only, and again for good once they pay', () => {
    const w = new WaitWatch();
    for (let i = 0; i < 40; i++) w.waited(0.005);
    let failed = 0;
    while (w.hits >= 0.5) {
      expect(w.shouldWatch(500)).toBe(true);
      w.watched(false); // on one core: the agent waited for cannot run while this one watches
      failed++;
    }
    expect(failed).toBeGreaterThan(2); // a moving average: one failed watch does not stop them
    const watchedAt: number[] = [];
    for (let i = 1; i <= 3 * WATCH_PROBE_EVERY; i++) if (w.shouldWatch(500)) watchedAt.push(i);
    expect(watchedAt).toEqual([WATCH_PROBE_EVERY, 2 * WATCH_PROBE_EVERY, 3 * WATCH_PROBE_EVERY]);
    let probes = 0;
    while (w.hits < 0.5) {
      if (w.shouldWatch(500)) {
        w.watched(true); // the probes see the word change: watching pays again
        probes++;
      }
    }
    expect(probes).toBeGreaterThan(0);
    expect(w.shouldWatch(500)).toBe(true);
    expect(w.shouldWatch(500)).toBe(true);
  });
});

const backends: [string, () => Heap][] = [
  ['pool_arena', () => createArenaHeap({ maxBytes: 1 << 28 })],
  ['pool_classic', () => createClassicHeap({ maxBytes: 1 << 28 })],
  ['pool_global', () => createGlobalHeap({ maxBytes: 1 << 28 })],
];

describe.each(backends)('heap.wait between two workers taking turns: %s', (backend, create) => {
  it('20,000 turns, each waited for with heap.wait alone: every turn in order, every block sent intact and freed', async () => {
    const heap = create();
    const rounds = 10_000;
    const turns = new SharedArrayBuffer(8);
    const sides = [0, 1].map(
      (side) =>
        new Worker(new URL('./workers/ping-pong.mjs', import.meta.url), {
          workerData: { handle: heap.handle, turns, side, rounds },
          execArgv: [`--conditions=paddock-${backend.replace('_', '-')}`],
        }),
    );
    const reports = await Promise.all(
      sides.map((w) => new Promise<{ taken: number; bad: number; results: Record<string, number> }>((resolve, reject) => (w.once('message', resolve), w.once('error', reject)))),
    );
    await Promise.all(sides.map((w) => w.terminate()));
    for (const r of reports) {
      expect(r.taken).toBe(rounds);
      expect(r.bad).toBe(0);
      expect(r.results['timed-out']).toBe(0); // every wait ended by the other side's turn, none by its bound
    }
    const t = new Int32Array(turns);
    expect(Atomics.load(t, 0)).toBe(2 * rounds);
    heap.free(Atomics.load(t, 1)); // the last block sent
    heap.flushCache();
    heap.tick();
    expect(heap.stats().liveBytes).toBe(0);
    heap.check();
  }, 60_000);
});
