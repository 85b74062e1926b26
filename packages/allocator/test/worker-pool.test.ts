// The worker-pool pattern with real pools (piscina, tinypool, workerpool's thread workers), each with its default
// options but for its size and idle timeout, and with nothing of Paddock in the user's code but createHeap,
// attachHeap and startIdle (no watch, no pool option): tasks attach once per worker and return pointers, the main
// thread reads and frees them, the pool retires idle workers (terminates them) and finally is destroyed. The main
// thread's heap object watches every worker its thread creates by default, so each worker's exit reaps what it
// left. Checked at each exit, not after some time: the test's own exit listener comes after the heap object's (its
// `worker` listener was registered first), so when it runs the reap has run.
import { describe, expect, it } from 'vitest';
import { Piscina } from 'piscina';
import { Tinypool } from 'tinypool';
import workerpool from 'workerpool';
import { AGENT_AREA_COMMIT } from '@paddock/arena';
import { createArenaHeap, type ArenaBackedHeap } from '../src/heap.js';
import type { HeapHandle } from '../src/types.js';

const TASKS = 50;
const BLOCKS = 512;
const SIZE = 200;
const IDLE_MS = 300;
const RETIRE_WAIT_MS = 5_000;
const EXIT_WAIT_MS = 20_000;

interface Task {
  count: number;
  size: number;
  tag: number;
}

/** One pool library behind what the test needs of it. */
interface PoolCase {
  name: string;
  /** Whether the pool retires idle workers by itself (workerpool keeps them until terminate()). */
  retires: boolean;
  make(handle: HeapHandle): { run(task: Task): Promise<number[]>; destroy(): Promise<unknown> };
}

const worker = (file: string) => new URL(`./workers/${file}`, import.meta.url);

const CASES: PoolCase[] = [
  {
    name: 'piscina 5.3.2',
    retires: true,
    make(handle) {
      const pool = new Piscina({ filename: worker('pool-task.mjs').href, workerData: { handle }, minThreads: 0, maxThreads: 2, idleTimeout: IDLE_MS });
      return { run: (task) => pool.run(task) as Promise<number[]>, destroy: () => pool.destroy() };
    },
  },
  {
    name: 'tinypool 2.2.0',
    retires: true,
    make(handle) {
      const pool = new Tinypool({ filename: worker('pool-task-tinypool.mjs').href, workerData: { handle }, minThreads: 0, maxThreads: 2, idleTimeout: IDLE_MS });
      return { run: (task) => pool.run(task) as Promise<number[]>, destroy: () => pool.destroy() };
    },
  },
  {
    name: 'workerpool 10.0.3 (thread workers)',
    retires: false,
    make(handle) {
      const pool = workerpool.pool(worker('pool-task-workerpool.mjs').pathname, { workerType: 'thread', maxWorkers: 2, workerThreadOpts: { workerData: { handle } } });
      const run = async (task: Task) => (await pool.exec('makeResults', [task])) as number[];
      return { run, destroy: async () => void (await pool.terminate()) };
    },
  },
];

/** Counts the Workers this thread creates and, at each one's exit, what its thread left live in `heap`. */
function countWorkers(heap: ArenaBackedHeap) {
  const seen = { created: 0, exited: 0, strandedAgents: 0 };
  const onWorker = (w: { threadId: number; once(e: 'exit', l: () => void): void }) => {
    const thread = w.threadId + 1;
    seen.created++;
    w.once('exit', () => {
      seen.exited++;
      seen.strandedAgents += heap.engine.agentsOnThread(thread).length;
    });
  };
  process.on('worker', onWorker);
  return { seen, stop: () => process.off('worker', onWorker) };
}

async function until(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return done();
}

/**
 * Everything the main thread holds goes home; then nothing of the pool's work may be left in the heap: no live
 * byte, no arena, and committed bytes at the baseline but for the agent table (one area per agent slot the pool's
 * workers used at once, kept for the next agent to claim: at most AGENT_AREA_COMMIT each).
 */
function expectBaseline(heap: ArenaBackedHeap, committed: number): void {
  heap.flushCache(); // the main thread's cache held freed blocks of the workers' arenas
  heap.flush();
  heap.drain();
  expect(heap.stats().liveBytes).toBe(0);
  expect(heap.engine.regions.carvedArenas()).toHaveLength(0); // every arena went back
  const slots = heap.engine.agentAreas().length - 1;
  expect(slots).toBeLessThanOrEqual(4);
  expect(heap.space.committedBytes - committed).toBeLessThanOrEqual(slots * AGENT_AREA_COMMIT);
  heap.check();
}

describe.each(CASES)('a $name pool over one heap, default options, no watch call', (c) => {
  it('tasks return pointers, the main thread frees them; retired and destroyed workers strand nothing', async () => {
    const heap = createArenaHeap({ maxBytes: 1 << 30 });
    const committed = heap.space.committedBytes;
    const { seen, stop } = countWorkers(heap); // after createHeap: the heap object's exit listeners come first
    const pool = c.make(heap.handle);
    try {
      for (let round = 0; round < 2; round++) {
        const tasks = Array.from({ length: TASKS }, (_, k) => pool.run({ count: BLOCKS, size: SIZE, tag: round * 1e6 + k * 1000 }));
        const results = await Promise.all(tasks);
        let blocks = 0;
        results.forEach((ptrs, k) =>
          ptrs.forEach((p, i) => {
            expect(heap.u32[p >>> 2]).toBe(round * 1e6 + k * 1000 + i);
            heap.free(p);
            blocks++;
          }),
        );
        expect(blocks).toBe(TASKS * BLOCKS);
        if (!c.retires) continue;
        // The pool retires its idle workers after IDLE_MS. piscina may keep one past it (a timer it clears too
        // late): the heap is then checked after destroy() only; every worker that did retire was reaped at its exit.
        const allRetired = await until(() => seen.exited === seen.created, RETIRE_WAIT_MS);
        expect(seen.strandedAgents).toBe(0);
        if (allRetired) expectBaseline(heap, committed);
      }
      expect(seen.created).toBeGreaterThanOrEqual(c.retires ? 2 : 1);
      if (c.retires) expect(seen.exited).toBeGreaterThan(0); // some worker was retired (reaped) before destroy()
    } finally {
      await pool.destroy();
    }
    expect(await until(() => seen.exited === seen.created, EXIT_WAIT_MS)).toBe(true);
    stop();
    expect(seen.strandedAgents).toBe(0);
    expectBaseline(heap, committed);
    heap.close();
  });
});
