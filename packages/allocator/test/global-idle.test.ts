// The global pool's idle return through the Heap interface: returnIdle gives every empty slab back now; the
// idle tick and a wait that timed out give back the empty slabs of the classes that stayed quiet since the
// previous look, and leave a class in use alone.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createGlobalHeap } from '../src/global-heap.js';

const MiB = 1 << 20;

/** Fills `slabs` whole 1 KiB-class slabs and frees every block; returns the committed bytes before it. */
function fillAndFree(heap: ReturnType<typeof createGlobalHeap>, slabs: number, size = 1024): number {
  const base = heap.stats().committedBytes;
  const blocks = Array.from({ length: (slabs * MiB) / size }, () => heap.malloc(size));
  for (const p of blocks) heap.free(p);
  return base;
}

describe('pool_global idle return', () => {
  it('returnIdle gives every empty slab back at once', () => {
    const heap = createGlobalHeap({ maxBytes: 256 * MiB });
    const base = fillAndFree(heap, 3);
    expect(heap.stats().committedBytes).toBe(base + 3 * MiB);
    heap.returnIdle();
    expect(heap.stats().committedBytes).toBe(base);
    expect(heap.pool.returnedSlabs).toBe(3);
    heap.check();
  });

  it('the idle tick gives a class back once its list was the same at two looks, and a class in use keeps its slabs', () => {
    const heap = createGlobalHeap({ maxBytes: 256 * MiB });
    const base = fillAndFree(heap, 2); // class 5: quiet from now on
    fillAndFree(heap, 1, 4096); // class 7: used again between the ticks
    const busy = heap.malloc(4096);
    heap.tick(); // the lists changed since the heap was made: a first look only
    expect(heap.pool.returnedSlabs).toBe(0);
    heap.free(busy);
    heap.free(heap.malloc(4096));
    heap.tick(); // class 5 quiet since the last look: back; class 7 was used: it waits
    expect(heap.pool.returnedSlabs).toBe(2);
    expect(heap.stats().committedBytes).toBe(base + MiB);
    heap.tick(); // class 7 quiet now: back; class 5 is not walked again
    expect(heap.pool.returnedSlabs).toBe(3);
    expect(heap.stats().committedBytes).toBe(base);
    heap.tick();
    expect(heap.pool.returnedSlabs).toBe(3);
  });

  it('a wait that timed out looks the way the tick does; one woken by a notify does not', () => {
    const heap = createGlobalHeap({ maxBytes: 256 * MiB });
    const base = fillAndFree(heap, 2);
    const word = new Int32Array(new SharedArrayBuffer(4));
    expect(heap.wait(word, 0, 0, 1)).toBe('timed-out'); // the first look
    expect(heap.wait(word, 0, 1, 1)).toBe('not-equal'); // no look
    expect(heap.pool.returnedSlabs).toBe(0);
    expect(heap.wait(word, 0, 0, 1)).toBe('timed-out'); // quiet since the first look: back
    expect(heap.pool.returnedSlabs).toBe(2);
    expect(heap.stats().committedBytes).toBe(base);
  });

  it('a worker never returns slabs (it may be terminated half way through); the main thread does', async () => {
    const heap = createGlobalHeap({ maxBytes: 256 * MiB });
    const base = fillAndFree(heap, 2);
    const worker = new Worker(new URL('./workers/global-idle.mjs', import.meta.url), { workerData: { handle: heap.handle } });
    const report = await new Promise<{ returnedSlabs: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(report.returnedSlabs).toBe(0);
    expect(heap.stats().committedBytes).toBe(base + 2 * MiB);
    heap.returnIdle();
    expect(heap.pool.returnedSlabs).toBe(2);
    expect(heap.stats().committedBytes).toBe(base);
  });
});
