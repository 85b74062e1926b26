// What a worker pool leaves in memory, with the pool's default options (but for its size and idle timeout) and no
// Paddock call in the user's code beyond createHeap, attachHeap and startIdle: 50 tasks each return 512 result
// blocks of 1 KiB; the main thread reads and frees them (paddock), or the tasks return 512 ArrayBuffers of 1 KiB
// that the main thread reads and drops (plain: the same work without Paddock). Figures: resident memory (RSS) at
// the start, at the peak, 2 s into the pool's idle (its idle workers blocked in the pool's own wait: what they
// still hold then, cache and undrained inbox), after the pool retired its idle workers, and 1 s after destroy()
// or terminate(); the heap's committed bytes at each point. Prints one line of JSON.
//
//   node --expose-gc packages/allocator/test/scripts/pool-memory.mjs <piscina|tinypool|workerpool> <paddock|plain>
//        [minThreads|default] [event-loop] [scratch N]
//
// `minThreads` (piscina, tinypool): default the pool's own (half the cores, at least 1: one worker then idles
// for good until destroy()). `event-loop`: idle workers wait on their event loop (piscina `atomics: 'disabled'`,
// tinypool `useAtomics: false`) instead of the pool's blocking wait. `scratch N`: each task also allocates and
// frees N blocks of 32 B to 16 KiB first. Run each case in a fresh process: RSS is the process's.
import { createHeap } from '@paddock/allocator';
import { rss } from '@paddock/platform';

const [lib, mode, minOpt, ...rest] = process.argv.slice(2);
const minArg = minOpt === undefined || minOpt === 'default' ? undefined : minOpt;
const eventLoop = rest.includes('event-loop');
const scratch = rest.includes('scratch') ? Number(rest[rest.indexOf('scratch') + 1]) : 0;
if (!['piscina', 'tinypool', 'workerpool'].includes(lib) || !['paddock', 'plain'].includes(mode)) {
  console.error('usage: pool-memory.mjs <piscina|tinypool|workerpool> <paddock|plain> [minThreads]');
  process.exit(2);
}
const TASKS = 50;
const BLOCKS = 512;
const SIZE = 1024;
const IDLE_MS = 300;
const MiB = 1 << 20;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mib = (n) => Math.round((n / MiB) * 10) / 10;
const task = new URL(`../workers/pool-task${lib === 'piscina' ? '' : `-${lib}`}.mjs`, import.meta.url);
const sizing = { maxThreads: 2, idleTimeout: IDLE_MS, ...(minArg === undefined ? {} : { minThreads: Number(minArg) }) };
if (eventLoop && lib === 'piscina') sizing.atomics = 'disabled';
if (eventLoop && lib === 'tinypool') sizing.useAtomics = false;

globalThis.gc?.();
await sleep(200);
const heap = mode === 'paddock' ? createHeap({ maxBytes: 1 << 30 }) : null;
heap?.startIdle();
const workerData = { handle: heap?.handle ?? null, plain: mode === 'plain' };
let exited = 0;
let created = 0;
process.on('worker', (w) => {
  created++;
  w.once('exit', () => exited++);
});

let pool;
if (lib === 'piscina') {
  const { Piscina } = await import('piscina');
  const p = new Piscina({ filename: task.href, workerData, ...sizing });
  pool = { run: (t) => p.run(t), destroy: () => p.destroy(), threads: () => p.threads.length };
} else if (lib === 'tinypool') {
  const { Tinypool } = await import('tinypool');
  const p = new Tinypool({ filename: task.href, workerData, ...sizing });
  pool = { run: (t) => p.run(t), destroy: () => p.destroy(), threads: () => p.threads.length };
} else {
  const { default: workerpool } = await import('workerpool');
  const p = workerpool.pool(task.pathname, { workerType: 'thread', maxWorkers: 2, workerThreadOpts: { workerData } });
  pool = { run: (t) => p.exec('makeResults', [t]), destroy: () => p.terminate(), threads: () => p.stats().totalWorkers };
}

const out = { lib, mode, minThreads: minArg ?? 'default', eventLoop, scratch, rss: {}, committed: {}, idleWorkers: [] };
const committed = () => (heap === null ? 0 : mib(heap.space.committedBytes));
out.rss.start = mib(rss());
out.committed.start = committed();
const results = await Promise.all(Array.from({ length: TASKS }, (_, k) => pool.run({ count: BLOCKS, size: SIZE, tag: k * 100_000, scratch })));
out.rss.peak = mib(rss());
out.committed.peak = committed();
let bad = 0;
for (let k = 0; k < TASKS; k++) {
  for (let i = 0; i < BLOCKS; i++) {
    const r = results[k][i];
    if (heap === null) {
      if (new Uint32Array(r)[0] !== k * 100_000 + i) bad++;
    } else {
      if (heap.u32[r >>> 2] !== k * 100_000 + i) bad++;
      heap.free(r);
    }
  }
}
results.length = 0;
out.bad = bad;
await sleep(2000);
out.rss.idle2s = mib(rss());
out.committed.idle2s = committed();
if (heap !== null) {
  const s = heap.snapshot();
  for (const a of s.arena.agents) {
    if (a.self || a.state !== 'live') continue;
    const owner = s.arena.owners.find((o) => o.slot === a.ownerSlot);
    out.idleWorkers.push({ agentId: a.agentId, cacheBytes: a.cacheBytes, inboxPending: owner?.inboxPending ?? false, arenas: owner?.arenas ?? 0 });
  }
}
out.threadsIdle = pool.threads();
await pool.destroy();
const deadline = Date.now() + 10_000;
while (exited < created && Date.now() < deadline) await sleep(20);
await sleep(1000);
globalThis.gc?.();
out.rss.afterDestroy = mib(rss());
out.committed.afterDestroy = committed();
out.workers = { created, exited };
if (heap !== null) out.carvedArenas = heap.engine?.regions.carvedArenas().length ?? null;
console.log(JSON.stringify(out));
process.exit(0);
