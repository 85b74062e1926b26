// The swarm's end check allows a killed worker's unfinished malloc one block of at most `usableBound` bytes; a
// bound below what a backend really hands out fails a run that lost nothing. Checked against each built
// backend's `usableSize` for large requests on both sides of the 4 KiB and 16 KiB multiples where they round.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { usableBound } from '../src/swarm-stranded.js';

const dist = fileURLToPath(new URL('../../../packages/allocator/dist/', import.meta.url));
const MiB = 1 << 20;
const sizes: number[] = [];
for (const base of [MiB, 2 * MiB, 302 * 16384, 3 * MiB + 5 * 4096]) {
  for (const d of [-4096, -100, -64, -63, -1, 0, 1, 63, 64, 4095, 4096]) if (base + d > MiB) sizes.push(base + d);
}
sizes.push(4_947_950, 4_948_000); // the global pool maps these to 4,952,000 usable bytes

describe('usableBound', () => {
  for (const backend of ['pool-arena', 'pool-classic', 'pool-global']) {
    it(`bounds what ${backend} hands out for large requests`, async () => {
      const { createHeap } = (await import(`${dist}${backend}.js`)) as typeof import('@paddock/allocator');
      const heap = createHeap({ maxBytes: 256 * MiB });
      try {
        for (const size of sizes) {
          const p = heap.malloc(size);
          const usable = heap.usableSize(p);
          expect(usable, `${backend}: malloc(${size})`).toBeGreaterThanOrEqual(size);
          if (size <= heap.largeMax) expect(usable, `${backend}: malloc(${size})`).toBeLessThanOrEqual(usableBound(size, heap.largeMax));
          heap.free(p);
        }
      } finally {
        heap.detach();
      }
    });
  }
});
