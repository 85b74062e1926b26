// The hot paths under every runtime CI runs, side by side in one run (docs/PERFORMANCE.md, "Under each runtime"):
//   node apps/bench/scripts/runtimes.mjs [rounds]        (after `pnpm build` and `node tools/install-runtimes.mjs`)
// Each round starts every runtime once, in turn, on this same file with `--child`, which measures in its own process,
// on the built pool_arena bundle (packages/allocator/dist/pool-arena.js):
//   pair      malloc(32) + free, ns an op (the median of 7 timed passes of 1e6 after 3 warm-up passes);
//   churn-4k  4,096 live blocks of 16..4,096 B, each op frees a random one and mallocs a random size into its slot, ns an
//             op (the bench's churn-4k shape with its own seeded sequence; 7 passes of 1e6 after a warm-up);
//   getter    one `heap.i32` access with a write and a read through it, ns (7 passes of 1e7);
//   p-c       a worker mallocs 64 B blocks, writes them and hands their offsets over a shared ring in batches of 32; the
//             parent reads and frees them: M blocks a second over 1 s after a warm-up second.
// Prints, per figure, the median over the rounds and its ratio to Node 24's (the pair's and the getter's: lower is
// better; p-c: higher). The machine is shared: read the ratios, and run it on a quiet machine.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const bundle = pathToFileURL(join(root, 'packages', 'allocator', 'dist', 'pool-arena.js')).href;

// The ring between the producer and the parent: [written, read, stop] then RING offsets.
const RING = 1024;
const BATCH = 32;

const threads = await import('node:worker_threads');
if (!threads.isMainThread && threads.workerData?.producer === true) await producer(threads.workerData);
else if (process.argv[2] === '--child') await child();
else parent(Number(process.argv[2] ?? 3));

function parent(rounds) {
  const { runtimes } = JSON.parse(readFileSync(join(root, 'tools', 'runtimes.json'), 'utf8'));
  const all = [{ id: 'node20', label: `Node ${process.versions.node.split('.')[0]} (this)`, cmd: process.execPath, args: [] }];
  for (const r of runtimes) {
    const cmd = join(process.env.PADDOCK_RUNTIMES_DIR ?? join(root, '.runtimes'), r.id, r.bin);
    if (existsSync(cmd)) all.push({ id: r.id, label: `${r.label} ${r.version}`, cmd, args: r.args });
    else console.error(`${r.label}: not installed at ${cmd} (node tools/install-runtimes.mjs), left out`);
  }
  const got = new Map(all.map((r) => [r.id, []]));
  for (let k = 0; k < rounds; k++) {
    for (const r of all) {
      const out = spawnSync(r.cmd, [...r.args, fileURLToPath(import.meta.url), '--child'], { cwd: root, encoding: 'utf8', timeout: 300_000 });
      const line = (out.stdout ?? '').trim().split('\n').pop() ?? '';
      try {
        got.get(r.id).push(JSON.parse(line));
      } catch {
        console.error(`${r.label}: no figures (status ${out.status}): ${(out.stderr ?? '').slice(0, 400)}`);
      }
    }
  }
  const med = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length === 0 ? NaN : s[s.length >> 1];
  };
  const figures = ['pair', 'churn4k', 'getter', 'pc'];
  const rows = all.map((r) => ({ r, m: Object.fromEntries(figures.map((f) => [f, med(got.get(r.id).map((x) => x[f]))])) }));
  const base = rows.find((x) => x.r.id === 'node24')?.m;
  const cell = (f, v) => {
    const unit = f === 'pc' ? ` M/s` : ' ns';
    const ratio = base === undefined ? '' : ` (x${(v / base[f]).toFixed(2)})`;
    return `${v.toFixed(f === 'pc' ? 2 : 1)}${unit}${ratio}`;
  };
  console.log(`| runtime | pair | churn-4k | heap.i32 getter | producer-consumer |`);
  console.log(`|---|---|---|---|---|`);
  for (const { r, m } of rows) console.log(`| ${r.label} | ${figures.map((f) => cell(f, m[f])).join(' | ')} |`);
  console.log(`\n${rounds} rounds, medians; ratios against Node 24 (x1.00); command: node apps/bench/scripts/runtimes.mjs ${rounds}`);
}

function timePasses(run, ops, passes = 7, warm = 3) {
  const xs = [];
  for (let r = 0; r < warm + passes; r++) {
    const t = performance.now();
    run();
    if (r >= warm) xs.push(((performance.now() - t) * 1e6) / ops);
  }
  xs.sort((a, b) => a - b);
  return xs[xs.length >> 1];
}

function mulberry32(a) {
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pairs(h, n) {
  for (let i = 0; i < n; i++) h.free(h.malloc(32));
}
function churn(h, n, victim, size, ptr) {
  for (let i = 0; i < n; i++) {
    const v = victim[i];
    h.free(ptr[v]);
    ptr[v] = h.malloc(size[i]);
  }
}
function getter(h, p, n) {
  let s = 0;
  for (let i = 0; i < n; i++) {
    const v = h.i32;
    v[p >>> 2] = i;
    s += v[p >>> 2];
  }
  return s;
}

async function child() {
  const { createHeap } = await import(bundle);
  const out = {};
  const one = createHeap({ maxBytes: 1 << 30 });
  out.pair = timePasses(() => pairs(one, 1e6), 1e6);
  const next = mulberry32(0x4b1d);
  const live = 4096;
  const ops = 1e6;
  const ptr = new Int32Array(live);
  for (let i = 0; i < live; i++) ptr[i] = one.malloc(16 + Math.floor(next() * 4081));
  const victim = new Int32Array(ops);
  const size = new Int32Array(ops);
  for (let i = 0; i < ops; i++) {
    victim[i] = Math.floor(next() * live);
    size[i] = 16 + Math.floor(next() * 4081);
  }
  out.churn4k = timePasses(() => churn(one, ops, victim, size, ptr), ops, 7, 1);
  const p = one.malloc(64);
  out.getter = timePasses(() => getter(one, p, 1e7), 1e7);
  out.pc = await producerConsumer();
  console.log(JSON.stringify(out));
  process.exit(0);
}

async function producerConsumer() {
  const { createHeap } = await import(bundle);
  const heap = createHeap({ maxBytes: 1 << 30 });
  const ring = new Int32Array(new SharedArrayBuffer((3 + RING) * 4));
  const w = new threads.Worker(fileURLToPath(import.meta.url), { workerData: { producer: true, handle: heap.handle, ring: ring.buffer } });
  let read = 0;
  let count = 0;
  let bad = 0;
  const drainFor = (ms) => {
    const end = performance.now() + ms;
    let n = 0;
    while (performance.now() < end) {
      const written = Atomics.load(ring, 0);
      if (written === read) continue;
      for (; read !== written; read++) {
        const p = ring[3 + (read & (RING - 1))];
        if (heap.u32[p >>> 2] !== p) bad++;
        heap.free(p);
        n++;
      }
      Atomics.store(ring, 1, read);
    }
    return n;
  };
  drainFor(1000); // warm-up, the worker starting
  const t = performance.now();
  count = drainFor(1000);
  const rate = count / ((performance.now() - t) * 1000);
  Atomics.store(ring, 2, 1);
  drainFor(50);
  await w.terminate();
  if (bad > 0) throw new Error(`${bad} blocks read back wrong`);
  return rate;
}

async function producer(workerData) {
  const { attachHeap } = await import(bundle);
  const heap = attachHeap(workerData.handle);
  const ring = new Int32Array(workerData.ring);
  let written = 0;
  while (Atomics.load(ring, 2) === 0) {
    if (written - Atomics.load(ring, 1) > RING - BATCH) continue;
    for (let i = 0; i < BATCH; i++) {
      const p = heap.malloc(64);
      heap.u32[p >>> 2] = p;
      ring[3 + ((written + i) & (RING - 1))] = p;
    }
    written += BATCH;
    Atomics.store(ring, 0, written);
  }
}
