// mixed-churn's steps on real threads, counting the waits, for the design notes on waiting: two workers hand
// bursts of BURST 4 KiB blocks to each other through two rings of three bursts (two in flight each way), each
// allocating SCRATCH blocks of its own between bursts and freeing them after, as the bench's mixed-churn does.
// An agent whose ring is not ready looks at it SPIN times (200, as the bench's agents do) and then blocks in
// heap.wait.
//   node apps/bench/scripts/mixed-churn-waits.mjs [pool-arena|pool-classic|pool-global] [burst] [scratch] [ms] [dist folder]
// Prints blocks/s and, per agent: blocks, heap.wait calls, waits its spin ended, CPU ms (/proc/thread-self/stat,
// Linux only), the mean ns of work a burst, and how many bursts' work took over 5 and over 20 µs.
// Environment: SPIN=<looks> before heap.wait; PLAIN_WAIT=1 blocks in a plain Atomics.wait instead of heap.wait;
// PAD=<µs> of busy work added to each burst.
import { readFileSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

/** This thread's CPU time so far, ms. */
function cpuMs() {
  const f = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

const STOP = 0;
const READY = 1;
const BELL = 8;
const HEAD = 0;
const TAIL = 1;
const SLOTS = 2;

if (isMainThread) {
  const [backend = 'pool-arena', burst = '16', scratch = '8', ms = '1000', dist = new URL('../../../packages/allocator/dist', import.meta.url).pathname] = process.argv.slice(2);
  const url = `${dist}/${backend}.js`;
  const { createHeap } = await import(url);
  const heap = createHeap({ maxBytes: 1 << 30 });
  const ctl = new SharedArrayBuffer(64 * 4);
  const cap = 3 * Number(burst);
  const rings = [0, 1].map(() => new SharedArrayBuffer((cap + SLOTS) * 4));
  const data = (id) => ({ id, handle: heap.handle, url, ctl, rings, cap, burst: Number(burst), scratch: Number(scratch), ms: Number(ms) });
  const workers = [0, 1].map((id) => new Worker(new URL(import.meta.url), { workerData: data(id) }));
  const res = await Promise.all(workers.map((w) => new Promise((resolve, reject) => (w.once('message', resolve), w.once('error', reject)))));
  const blocks = res[0].ops + res[1].ops;
  const agent = (r) => `blocks ${r.ops} waits ${r.waits} spun ${r.spun} cpu ${r.cpu} ms, work ${(r.workNs / r.bursts).toFixed(0)} ns a burst (${r.over5} over 5 µs, ${r.over20} over 20)`;
  console.log(`${backend} ${burst}/${scratch}: ${(blocks / res[0].secs / 1e6).toFixed(2)} M blocks/s; ${res.map(agent).join(' | ')}`);
  process.exit(0);
} else {
  const { id, handle, url, ctl: ctlBuffer, rings, cap, burst, scratch, ms } = workerData;
  const plainWait = process.env.PLAIN_WAIT === '1';
  const spin = Number(process.env.SPIN ?? 200);
  const pad = Number(process.env.PAD ?? 0) / 1000;
  const { attachHeap } = await import(url);
  const h = attachHeap(handle);
  const ctl = new Int32Array(ctlBuffer);
  const inRing = new Int32Array(rings[id]);
  const outRing = new Int32Array(rings[1 - id]);
  let waits = 0;
  let spun = 0;
  const bell = (k) => {
    Atomics.add(ctl, BELL + k, 1);
    Atomics.notify(ctl, BELL + k);
  };
  const waitUntil = (ready) => {
    for (let s = 0; s < spin; s++) {
      if (ready()) {
        spun++;
        return true;
      }
    }
    for (;;) {
      const seen = Atomics.load(ctl, BELL + id);
      if (ready()) return true;
      if (Atomics.load(ctl, STOP)) return false;
      waits++;
      if (plainWait) Atomics.wait(ctl, BELL + id, seen, 500);
      else h.wait(ctl, BELL + id, seen);
    }
  };
  let workNs = 0;
  let over5 = 0;
  let over20 = 0;
  const work = (since) => {
    const d = performance.now() - since;
    workNs += d * 1e6;
    if (d > 0.005) over5++;
    if (d > 0.02) over20++;
  };
  Atomics.add(ctl, READY, 1);
  while (Atomics.load(ctl, READY) < 2);
  const kept = new Array(scratch).fill(0);
  let head = 0;
  let tail = 0;
  let ops = 0;
  let bursts = 0;
  const t0 = performance.now();
  const c0 = cpuMs();
  for (let b = 0; b < 2; b++) {
    for (let i = 0; i < burst; i++) {
      const p = h.malloc(4096);
      h.i32[p >>> 2] = id;
      outRing[SLOTS + (head++ % cap)] = p;
    }
  }
  Atomics.store(outRing, HEAD, head);
  bell(1 - id);
  for (;;) {
    if (id === 0 && performance.now() - t0 > ms) {
      Atomics.store(ctl, STOP, 1);
      bell(1);
    }
    if (!waitUntil(() => Atomics.load(inRing, HEAD) - tail >= burst)) break;
    const a0 = performance.now();
    let v = h.i32;
    for (let i = 0; i < burst; i++, tail++) {
      const p = inRing[SLOTS + (tail % cap)];
      if (v[p >>> 2] !== 1 - id) throw new Error(`block ${p} does not hold the sender's mark`);
      h.free(p);
    }
    Atomics.store(inRing, TAIL, tail);
    bell(1 - id);
    for (let s = 0; s < scratch; s++) {
      const p = h.malloc(4096);
      h.i32[p >>> 2] = s;
      kept[s] = p;
    }
    work(a0);
    if (!waitUntil(() => head + burst - Atomics.load(outRing, TAIL) <= cap)) break;
    const a1 = performance.now();
    for (let i = 0; i < burst; i++) {
      const p = h.malloc(4096);
      v = h.i32;
      v[p >>> 2] = id;
      outRing[SLOTS + (head++ % cap)] = p;
    }
    Atomics.store(outRing, HEAD, head);
    bell(1 - id);
    for (let s = 0; s < scratch; s++) h.free(kept[s]);
    if (pad > 0) {
      const t = performance.now();
      while (performance.now() - t < pad);
    }
    work(a1);
    ops += burst;
    bursts++;
  }
  const secs = (performance.now() - t0) / 1000;
  parentPort.postMessage({ ops, waits, spun, cpu: cpuMs() - c0, secs, bursts, workNs, over5, over20 });
}
