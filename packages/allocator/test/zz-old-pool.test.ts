// The worker-pool pattern with a real piscina pool: tasks attach once per worker and return pointers, the
// main thread reads and frees them, idle workers are retired by the pool (terminated) and come back for the
// next round; `watch` reaps each retired worker, so nothing stays stranded.
import { describe, expect, it } from 'vitest';
import { Piscina } from 'piscina';
import type { Worker } from 'node:worker_threads';
import { createArenaHeap } from '../src/heap.js';

describe('a piscina pool over one heap', () => {
  it('tasks return pointers, the main thread frees them, retired workers strand nothing, round after round', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30, watchWorkers: false });
    const pool = new Piscina({
      filename: new URL('./workers/zz-old-task.mjs', import.meta.url).href,
      workerData: { handle: heap.handle },
      minThreads: 0,
      maxThreads: 2,
      idleTimeout: 300,
      // Idle workers then wait for tasks on their event loop, so their idle tick runs; and the pool retires
      // every one (with the default, 'sync', one worker in about six kept running past its idle timeout here).
      atomics: 'disabled',
    });
    let created = 0;
    let gone = 0;
    const seen = new WeakSet<Worker>();
    pool.on('workerCreate', () => {
      for (const t of pool.threads) {
        if (seen.has(t)) continue;
        seen.add(t);
        created++;
        heap.watch(t); // registered before ours below: the reap has run when `gone` counts it
        t.once('exit', () => gone++);
      }
    });
    try {
      for (let round = 0; round < 2; round++) {
        const tasks = Array.from({ length: 50 }, (_, k) => pool.run({ count: 512, size: 200, tag: round * 1e6 + k * 1000 }));
        const results = (await Promise.all(tasks)) as number[][];
        let blocks = 0;
        results.forEach((ptrs, k) =>
          ptrs.forEach((p, i) => {
            expect(heap.u32[p >>> 2]).toBe(round * 1e6 + k * 1000 + i);
            heap.free(p);
            blocks++;
          }),
        );
        expect(blocks).toBe(25_600);
        // The pool retires its idle workers (terminate) after 300 ms.
        const deadline = Date.now() + 10_000;
        while ((created === 0 || gone < created) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(gone).toBe(created);
        expect(pool.threads.length).toBe(0);
        heap.flushCache(); // the main thread's cache held freed blocks of the workers' arenas
        heap.flush();
        expect(heap.stats().liveBytes).toBe(0);
        const carved = heap.engine.regions.carvedArenas();
        if (carved.length > 0) {
          const e = heap.engine;
          console.log('FLAKE round', round, 'created', created, 'gone', gone, 'carved', carved.map((a) => ({ a, owner: e.arenaOwnerOf(a), state: e.registry.slotState(e.arenaOwnerOf(a)) })), 'agents', e.agentAreas().map((ar) => [ar, e.i32[(ar >>> 2)]]), JSON.stringify(heap.snapshot().arena?.agents));
        }
        expect(carved).toHaveLength(0); // every arena went back
        heap.check();
      }
      expect(created).toBeGreaterThanOrEqual(2); // the second round started new workers
    } finally {
      await pool.destroy();
    }
  });
});
