// The bitmap's atomic operations raced by real worker_threads on one shared bitmap. Workers run the built
// dist/ (test/workers/bitmap-worker.mjs).
import { describe, expect, it } from 'vitest';
import { runWorkers } from '../../../tools/test-utils/workers.js';

const WORKERS = 4;
const script = new URL('./workers/bitmap-worker.mjs', import.meta.url);

function bitOf(words: Int32Array, b: number): boolean {
  return ((words[b >>> 5]! >>> (b & 31)) & 1) === 1;
}

describe('bitmap under contention', () => {
  it('atomic set and clear of interleaved runs never lose another worker\'s bits', async () => {
    const nbits = 2048;
    const run = 3; // runs of 3 bits: many straddle a word boundary, and every word holds several owners' runs
    const runs = Math.floor(nbits / run);
    const buffer = new SharedArrayBuffer(nbits / 8);
    const results = await runWorkers<{ wrong: number }>(script, WORKERS, () => ({ job: { kind: 'set-clear', buffer, runs, run, rounds: 20000 } }));
    expect(results.map((r) => r.wrong)).toEqual(new Array(WORKERS).fill(0));
    // Each worker left every other run it owns set: the bitmap holds exactly those bits.
    const words = new Int32Array(buffer);
    const wrongBits: number[] = [];
    for (let b = 0; b < nbits; b++) {
      const k = Math.floor(b / run);
      const expected = k < runs && Math.floor(k / WORKERS) % 2 === 0;
      if (bitOf(words, b) !== expected) wrongBits.push(b);
    }
    expect(wrongBits).toEqual([]);
  });

  it('racing claims of ranges and of single bits never give one bit to two workers, nor lose one', async () => {
    const nbits = 64; // two words: every claim competes with the others
    const buffer = new SharedArrayBuffer(nbits / 8);
    const owners = new SharedArrayBuffer(nbits * 4);
    const results = await runWorkers<{ collisions: number; won: number; lost: number; singles: number }>(script, WORKERS, () => ({
      job: { kind: 'claim-churn', buffer, owners, nbits, rounds: 300_000, longest: 16 },
    }));
    expect(results.map((r) => r.collisions)).toEqual(new Array(WORKERS).fill(0));
    expect([...new Int32Array(buffer)]).toEqual(new Array(nbits / 32).fill(0));
    expect(new Int32Array(owners).every((v) => v === 0)).toBe(true);
    // The race was real: ranges were won and lost, and single bits were taken.
    for (const r of results) {
      expect(r.won).toBeGreaterThan(0);
      expect(r.lost).toBeGreaterThan(0);
      expect(r.singles).toBeGreaterThan(0);
    }
  });
});
