// The watch before a blocking wait sleeps (src/wait-watch.ts): how long it is, and heap.wait with it on real
// threads, where two workers take turns through one word, waiting with heap.wait alone.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createClassicHeap } from '../src/classic-heap.js';
import { createGlobalHeap } from '../src/global-heap.js';
import { createArenaHeap } from '../src/heap.js';
import type { Heap } from '../src/types.js';
import { availableCores } from '@paddock/platform';
import { WAIT_WATCH_MS, watchFor } from '../src/wait-watch.js';

describe('how long a wait watches its word before it sleeps', () => {
  it('20 µs where two threads can run at once; on one core not at all (the agent waited for could not run)', () => {
    expect(watchFor(1)).toBe(0);
    expect(watchFor(2)).toBe(WAIT_WATCH_MS);
    expect(watchFor(16)).toBe(WAIT_WATCH_MS);
    expect(WAIT_WATCH_MS).toBe(0.02);
  });

  it('the cores are read from the host: os.availableParallelism() in Node', async () => {
    const os = await import('node:os');
    expect(availableCores()).toBe(os.availableParallelism());
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
      // Every wait ends by the other side's turn: a wake lost for good would end waits by their 500 ms bound, turn
      // after turn (a few may end so on a machine loaded enough to keep a worker off the CPU that long).
      expect(r.results['timed-out']).toBeLessThan(5);
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
