// 100k seeded random operations on the arena backend against an independent record of live memory.
import { describe, expect, it } from 'vitest';
import { createHeap } from '../src/index.js';
import { runRandomOps } from './model.js';

describe('100k seeded random operations against a record of live memory', () => {
  it.each([[0x5eed], [20261129]])('seed %i', (seed) => {
    const heap = createHeap({ maxBytes: 4 * 2 ** 30 });
    const counts = runRandomOps(heap, seed, 100_000);
    expect(counts.mallocs + counts.frees + counts.reallocs + counts.callocs).toBe(100_000);
    expect(counts.reallocs).toBeGreaterThan(5000);
    heap.flushCache();
    heap.check();
    expect(heap.stats().liveBytes).toBe(0);
  });
});
