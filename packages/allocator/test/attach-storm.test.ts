// Many workers attach at once to a heap whose main thread idles: their agent areas, registry segments and arenas
// grow the buffer past the main agent's views while its idle tick walks the agents, adopts the slots they leave
// behind and waits on its inbox. Each worker hands its blocks to the main thread and exits by itself; once all have
// exited, the main thread checks and frees the blocks. Each round on a fresh heap (on one heap, later rounds reuse
// the areas the first left and grow nothing). Ten rounds in a row with PADDOCK_STORM_ROUNDS=10 (about 2 minutes on
// two cores, almost all of it starting 1,500 threads); three in the suite.
import { describe, expect, it } from 'vitest';
import type { Worker } from 'node:worker_threads';
import { createArenaHeap as createHeap } from '../src/heap.js';
import { startWorker } from './workers.js';

const WORKERS = 150;
const BLOCKS = 200;
const ROUNDS = Number(process.env.PADDOCK_STORM_ROUNDS ?? 3);

describe('an attach storm on an idling heap', () => {
  it(`${WORKERS} workers attach at once, hand ${BLOCKS} blocks each over and exit; ${ROUNDS} rounds, no crash`, async () => {
    const started = Date.now();
    for (let round = 0; round < ROUNDS; round++) {
      const heap = createHeap({ maxBytes: 1 << 30 });
      const errors: unknown[] = [];
      heap.onError = (err) => errors.push(err);
      heap.startIdle();
      const exits: Promise<number>[] = [];
      const handed: { agentId: number; blocks: number[] }[] = [];
      for (let i = 0; i < WORKERS; i++) {
        const w: Worker = startWorker('old-views.mjs', { handle: heap.handle, job: 'hand-over', count: BLOCKS });
        w.on('message', (m: { kind: string; agentId: number; blocks: number[] }) => handed.push(m));
        exits.push(new Promise((resolve, reject) => {
          w.once('error', reject);
          w.once('exit', resolve);
        }));
      }
      expect(await Promise.all(exits)).toEqual(new Array(WORKERS).fill(0));
      // The main thread has not touched the workers' blocks yet: its views are the ones it had before they came,
      // while its tick walked their areas and took over the slots they left.
      await new Promise((r) => setTimeout(r, 30));
      expect(handed).toHaveLength(WORKERS);
      let freed = 0;
      for (const m of handed) {
        const u32 = heap.u32;
        for (let k = 0; k < m.blocks.length; k += 2) {
          const p = m.blocks[k]!;
          expect(u32[p >>> 2], `round ${round}: block ${k / 2} of agent ${m.agentId}`).toBe(m.agentId);
          expect(u32[(p >>> 2) + 1]).toBe(k / 2);
          heap.free(p, m.blocks[k + 1]);
          freed++;
        }
      }
      expect(freed).toBe(WORKERS * BLOCKS);
      await new Promise((r) => setTimeout(r, 20)); // a visit or two of the idle tick
      heap.stopIdle();
      expect(errors).toEqual([]);
      heap.flushCache();
      heap.flush();
      heap.tick(); // adopts every slot the workers left
      heap.check();
      expect(heap.stats().liveBytes).toBe(0);
      heap.close();
    }
    console.log(`attach storm: ${ROUNDS} rounds of ${WORKERS} workers in ${Date.now() - started} ms`);
  }, 300_000);
});
