/**
 * One scenario of the departures program, in a process of its own so that its baseline is clean:
 * `node departures-scenario.js <scenario> [--mib N]`. It makes a heap with native page return, measures
 * resident memory before any worker, while the workers hold their payload, and after they are gone, and
 * prints one line: the result prefix and the figures as JSON. Exit 0 when it measured (the departures
 * program judges the figures), 1 when something went wrong (the line then carries the error).
 */
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { createHeap, type Heap } from '@paddock/allocator';
import { nativePageReturnError, rss } from '@paddock/platform';
import {
  POOL_BLOCK_BYTES,
  POOL_BLOCKS_PER_TASK,
  POOL_TASKS,
  RESULT_PREFIX,
  SCENARIOS,
  emptyResult,
  type DepartureJob,
  type DepartureMessage,
  type Scenario,
  type ScenarioResult,
} from './departures-protocol.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
/** Wait after the heap is made (and after the main thread starts idling) before the baseline. */
const BASELINE_SETTLE_MS = 300;
/** How long each scenario waits after the worker's exit before the last figure. */
const EXIT_SETTLE_MS = 1000;
const POOL_SETTLE_MS = 3000;
/** How long the pool may take to retire its idle workers (10 x its idleTimeout) before it is destroyed. */
const POOL_RETIRE_GRACE_MS = 3000;
/** The longest any one wait of a scenario may take. */
const WAIT_LIMIT_MS = 20_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function resident(): number {
  const r = rss();
  if (r === null) throw new Error('this host does not report resident memory');
  return r;
}

/** Arenas laid out in the whole heap, where the backend tells (the arena backend's engine does). */
function carvedArenas(heap: Heap): number | null {
  const engine = (heap as { engine?: { regions?: { carvedArenas?: () => number[] } } }).engine;
  const arenas = engine?.regions?.carvedArenas?.();
  return Array.isArray(arenas) ? arenas.length : null;
}

/** Rejects after `ms` with a message naming what was awaited. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done after ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** Fills in the main agent's view of the heap at the end. */
function finish(heap: Heap, r: ScenarioResult): void {
  const s = heap.stats();
  // Arenas, adopted slots and a thread cache are the arena backend's figures: 0 on another backend.
  const arena = s.backend === 'pool_arena' ? s : null;
  r.committedAfter = s.committedBytes;
  r.jsHeapAfter = process.memoryUsage().heapTotal;
  r.mainLiveBytes = s.liveBytes;
  r.mainArenas = arena?.arenas ?? 0;
  r.mainAdoptedSlots = arena?.adoptedSlots.length ?? 0;
  r.mainCacheBytes = arena?.cacheBytes ?? 0;
  r.carvedArenas = carvedArenas(heap);
}

/** Makes the heap (native page return or nothing) and measures the baseline. */
async function start(r: ScenarioResult, mainIdles: boolean): Promise<Heap> {
  let heap: Heap;
  try {
    heap = createHeap({ maxBytes: 2 * GiB, pageReturn: 'native' });
  } catch (e) {
    throw new Error(`native page return is needed and not available (${nativePageReturnError() ?? (e as Error).message}); build the addon with pnpm install, and do not set PADDOCK_PAGE_RETURN=none`);
  }
  const mode = heap.stats().pageReturn;
  if (mode !== 'native') throw new Error(`native page return is needed, and the heap reports pageReturn '${mode}'`);
  if (mainIdles) heap.startIdle();
  await sleep(BASELINE_SETTLE_MS);
  r.baseline = resident();
  r.committedBaseline = heap.stats().committedBytes;
  r.jsHeapBaseline = process.memoryUsage().heapTotal;
  return heap;
}

/** A worker that attaches, allocates `bytes` of mixed blocks, and then frees them and ends, or blocks. */
function departureWorker(heap: Heap, job: DepartureJob['job'], bytes: number): { worker: Worker; messages: DepartureMessage[]; exited: Promise<number> } {
  const data: DepartureJob = { handle: heap.handle, job, bytes };
  const worker = new Worker(new URL('./departures-worker.js', import.meta.url), { workerData: data });
  const messages: DepartureMessage[] = [];
  worker.on('message', (m: DepartureMessage) => messages.push(m));
  // Registered now: the messages a worker sends just before it ends arrive in the same task as its exit.
  const exited = new Promise<number>((resolve, reject) => {
    worker.once('exit', resolve);
    worker.once('error', (e) => reject(new Error(`the worker failed: ${e instanceof Error ? e.message : String(e)}`)));
  });
  return { worker, messages, exited };
}

/** exit-idle / exit-quiet: a worker frees its payload, goes idle, and ends by itself. */
async function exitScenario(r: ScenarioResult, mib: number, mainIdles: boolean): Promise<void> {
  const heap = await start(r, mainIdles);
  const w = departureWorker(heap, 'free-all-then-end', mib * MiB);
  r.workers = 1;
  await within(w.exited, WAIT_LIMIT_MS, 'the worker ending by itself');
  r.workersExited = 1;
  r.atExit = resident();
  const holding = w.messages.find((m) => m.kind === 'holding');
  if (holding?.kind === 'holding') {
    r.peak = holding.rss;
    r.committedPeak = holding.committed;
    r.payloadBytes = holding.bytes;
    r.blocks = holding.blocks;
  }
  if (!w.messages.some((m) => m.kind === 'freed')) throw new Error('the worker ended without saying it freed its blocks');
  await sleep(EXIT_SETTLE_MS);
  r.settleMs = EXIT_SETTLE_MS;
  r.after = resident();
  finish(heap, r);
}

/** terminate: a worker holds its payload and blocks; the parent watches it (releaseLive) and terminates it. */
async function terminateScenario(r: ScenarioResult, mib: number): Promise<void> {
  const heap = await start(r, false);
  const w = departureWorker(heap, 'hold-then-block', mib * MiB);
  if (!heap.watch(w.worker, { releaseLive: true })) throw new Error(`heap.watch returned false: the ${heap.backend} backend cannot reap`);
  r.workers = 1;
  const holding = await within(
    new Promise<Extract<DepartureMessage, { kind: 'holding' }>>((resolve, reject) => {
      const look = () => {
        const m = w.messages.find((x) => x.kind === 'holding');
        if (m?.kind === 'holding') resolve(m);
        else setTimeout(look, 5);
      };
      look();
      w.exited.then(() => reject(new Error('the worker exited before it held its blocks')), reject);
    }),
    WAIT_LIMIT_MS,
    'the worker holding its blocks',
  );
  r.peak = holding.rss;
  r.committedPeak = holding.committed;
  r.payloadBytes = holding.bytes;
  r.blocks = holding.blocks;
  await w.worker.terminate();
  await within(w.exited, WAIT_LIMIT_MS, 'the terminated worker exiting');
  r.workersExited = 1;
  r.atExit = resident();
  await sleep(EXIT_SETTLE_MS);
  r.settleMs = EXIT_SETTLE_MS;
  r.after = resident();
  finish(heap, r);
}

/** piscina: a pool's tasks return result blocks, the main thread frees them, the pool retires its workers. */
async function piscinaScenario(r: ScenarioResult): Promise<void> {
  const heap = await start(r, false);
  const pool = new Piscina({
    filename: new URL('./departures-task.js', import.meta.url).href,
    workerData: { handle: heap.handle },
    minThreads: 0,
    maxThreads: 2,
    idleTimeout: 300,
    // Nothing else, as the worker-pools guide says: piscina's default blocking wait, and no watch call (the heap
    // object watches every worker this thread creates).
  });
  const seen = new WeakSet<object>();
  pool.on('workerCreate', () => {
    for (const t of pool.threads) {
      if (seen.has(t)) continue;
      seen.add(t);
      r.workers++;
      t.once('exit', () => r.workersExited++); // after the heap object's: the reap has run when the exit is counted
    }
  });
  let destroyed = false;
  try {
    const tasks = Array.from({ length: POOL_TASKS }, (_, k) => pool.run({ count: POOL_BLOCKS_PER_TASK, size: POOL_BLOCK_BYTES, tag: k * 100_000 }) as Promise<number[]>);
    const results = await within(Promise.all(tasks), WAIT_LIMIT_MS, 'the pool tasks');
    r.peak = resident();
    r.committedPeak = heap.stats().committedBytes;
    for (let k = 0; k < results.length; k++) {
      const ptrs = results[k]!;
      for (let i = 0; i < ptrs.length; i++) {
        const p = ptrs[i]!;
        if (heap.u32[p >>> 2] !== k * 100_000 + i) r.damaged++;
        heap.free(p);
        r.blocks++;
        r.payloadBytes += POOL_BLOCK_BYTES;
      }
    }
    heap.startIdle();
    // The pool retires a worker once it has idled for idleTimeout. piscina 5.3.2 can leave an idle worker
    // with no idle timer, for good: postTask clears the worker's timer in a microtask, and when the task's
    // reply was handled before that microtask ran, it clears the timer armed as the task finished (seen in
    // a trace of its timers, most often with very short tasks). After the grace, destroy the pool, which
    // terminates the worker the same way, and say so.
    const retired = () => r.workers > 0 && r.workersExited >= r.workers && pool.threads.length === 0;
    const graceEnd = performance.now() + POOL_RETIRE_GRACE_MS;
    while (!retired() && performance.now() < graceEnd) await sleep(20);
    if (!retired()) {
      r.poolKept = pool.threads.length;
      destroyed = true;
      await within(pool.destroy(), WAIT_LIMIT_MS, 'destroying the pool');
      await within(
        (async () => {
          while (!retired()) await sleep(20);
        })(),
        WAIT_LIMIT_MS,
        'the pool workers exiting',
      );
    }
    r.atExit = resident();
    await sleep(POOL_SETTLE_MS);
    r.settleMs = POOL_SETTLE_MS;
    r.after = resident();
    finish(heap, r);
  } finally {
    if (!destroyed) await pool.destroy();
  }
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!SCENARIOS.includes(name as Scenario)) {
    console.error(`usage: node departures-scenario.js <${SCENARIOS.join('|')}> [--mib N]`);
    return 2;
  }
  const scenario = name as Scenario;
  let mib = 100;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--mib') mib = Number(rest[++i]);
    else {
      console.error(`unknown argument ${JSON.stringify(rest[i])}`);
      return 2;
    }
  }
  const r = emptyResult(scenario);
  try {
    if (scenario === 'exit-idle') await exitScenario(r, mib, true);
    else if (scenario === 'exit-quiet') await exitScenario(r, mib, false);
    else if (scenario === 'terminate') await terminateScenario(r, mib);
    else await piscinaScenario(r);
  } catch (e) {
    r.error = e instanceof Error ? e.message : String(e);
  }
  process.stdout.write(RESULT_PREFIX + JSON.stringify(r) + '\n');
  return r.error === null ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
