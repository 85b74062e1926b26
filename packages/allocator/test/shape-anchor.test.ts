import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** V8's optimization status bit "optimized" (%GetOptimizationStatus). */
const OPTIMIZED = 1 << 4;
const script = fileURLToPath(new URL('./scripts/shape-anchor.mjs', import.meta.url));

function statuses(file: string, which: 'pair' | 'oversized'): { before: { pair: number; control: number }; after: { pair: number; control: number } } {
  const dist = new URL(`../dist/${file}`, import.meta.url).href;
  const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', script, dist, which], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').pop()!);
}

describe('a dropped heap leaves the optimized malloc/free code in place (the shape anchor)', () => {
  // `oversized`: a 2 GiB heap made after a smaller one, 16 MiB blocks. Its maxBytes is past the small-integer
  // range, so its objects would move to maps with that field widened, which would die with it (see
  // shape-anchor.ts: the anchor is made first, at 2 GiB, so that every heap shares its maps).
  for (const which of ['pair', 'oversized'] as const) {
    for (const file of ['pool-arena.js', 'pool-classic.js', 'pool-global.js']) {
      it(`${file}, ${which}`, () => {
        const { before, after } = statuses(file, which);
        expect(before.pair & OPTIMIZED).toBe(OPTIMIZED);
        expect(before.control & OPTIMIZED).toBe(OPTIMIZED);
        // The control shows the collection really dropped the classes of a dead object (its code went)...
        expect(after.control & OPTIMIZED).toBe(0);
        // ...while the loop over the heap's classes stays optimized.
        expect(after.pair & OPTIMIZED).toBe(OPTIMIZED);
      });
    }
  }
});
