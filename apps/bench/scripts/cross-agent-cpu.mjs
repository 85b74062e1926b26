// CPU per handed-over block on real threads, for the cross-agent design note: the bench's producer-consumer
// shape (2 producers malloc SIZE-byte payloads and hand them over in batches of 32 through a ring each; 1
// consumer checks and frees them; an agent with nothing to do waits on its doorbell with heap.wait) for MS ms:
//   node apps/bench/scripts/cross-agent-cpu.mjs [pool-arena|pool-classic|pool-global] [size] [ms] [dist folder]
// SIZE may be a range, LO-HI, drawn per block as the bench draws it (`8-64` with PRODUCERS=1 is xmalloc-test's shape).
// Prints payloads/s; each side's CPU per payload (utime + stime of each worker thread from /proc/thread-self/stat,
// 10 ms ticks; Linux only): the producers' summed, over all payloads, and the consumer's; and each side's work per
// payload: the time inside its malloc or free loops, waits left out.
// Run it under `perf stat -e page-faults,context-switches` or `strace -f -c -e trace=madvise` for the counts.
// Environment: PRODUCERS=1|2 (default 2); PLAIN_WAIT=1 blocks in a plain `Atomics.wait` instead of `heap.wait`
// (no flush before, no drain after), to see what the heap's wait costs the shape; FLOOR=1 runs the same loops with
// no allocator, the harness's own cost (each payload is written at the next of its producer's 8,192 fixed 64-byte
// places in a buffer of their own and not freed; sizes up to 64); HOLD_VIEW=1 has the consumer take the heap's view
// once a batch, as the bench's programs do, instead of through the `i32` getter for every payload (a getter call in
// the loop costs the arena's inlined free more than the classic pool's; docs/design/cross-agent.md has figures).
import { readFileSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { mulberry32 } from '../../../tools/test-utils/prng.mjs';

const PRODUCERS = Number(process.env.PRODUCERS ?? 2);
if (PRODUCERS !== 1 && PRODUCERS !== 2) throw new Error(`PRODUCERS=${process.env.PRODUCERS}: 1 or 2`);

/** This thread's CPU time so far, ms. */
function cpuMs() {
  const f = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

if (isMainThread) {
  const [backend = 'pool-arena', size = '4096', ms = '1500', dist = new URL('../../../packages/allocator/dist', import.meta.url).pathname] = process.argv.slice(2);
  const url = `${dist}/${backend}.js`;
  const { createHeap } = await import(url);
  const heap = createHeap({ maxBytes: 1 << 30 });
  const ctl = new SharedArrayBuffer(64 * 4);
  const rings = [0, 1].map(() => new SharedArrayBuffer((1024 + 2) * 4));
  const floorBuf = new SharedArrayBuffer(64 + PRODUCERS * 8192 * 64);
  const start = (role, id) => new Worker(new URL(import.meta.url), { workerData: { role, id, handle: heap.handle, url, ctl, rings, floorBuf, size, ms: Number(ms) } });
  const workers = [...Array.from({ length: PRODUCERS }, (_, k) => start('producer', k)), start('consumer', PRODUCERS)];
  const res = await Promise.all(workers.map((w) => new Promise((resolve, reject) => (w.once('message', resolve), w.once('error', reject)))));
  const consumer = res[PRODUCERS];
  const producers = res.slice(0, PRODUCERS);
  const n = consumer.ops;
  const perPayload = (ms) => ((ms * 1e6) / n).toFixed(0);
  const sum = (key) => producers.reduce((t, r) => t + r[key], 0);
  console.log(
    `${process.env.FLOOR === '1' ? 'no allocator' : backend} ${size} B, ${PRODUCERS} producer(s): ${(n / consumer.secs / 1e6).toFixed(2)} M payloads/s; CPU ns per payload: producers ${perPayload(sum('cpuMs'))}, consumer ${perPayload(consumer.cpuMs)}; work ns per payload: producers ${perPayload(sum('workMs'))}, consumer ${perPayload(consumer.workMs)}`,
  );
  process.exit(0);
} else {
  const { role, id, handle, url, ctl: ctlBuffer, rings: ringBuffers, floorBuf, size: sizeArg, ms } = workerData;
  const plainWait = process.env.PLAIN_WAIT === '1';
  const floor = process.env.FLOOR === '1';
  const holdView = process.env.HOLD_VIEW === '1';
  const [lo, hi = lo] = String(sizeArg).split('-').map(Number);
  if (!(lo >= 4 && hi >= lo) || (floor && hi > 64)) throw new Error(`size ${sizeArg}: a number or LO-HI, at least 4${floor ? ', at most 64 with FLOOR=1' : ''}`);
  const next = mulberry32(0x9c0ffee ^ id);
  const floorView = new Int32Array(floorBuf);
  const sizeOf = () => (lo === hi ? lo : lo + Math.floor((next() / 4294967296) * (hi - lo + 1)));
  const { attachHeap } = await import(url);
  const h = attachHeap(handle);
  const ctl = new Int32Array(ctlBuffer);
  const rings = ringBuffers.map((b) => new Int32Array(b)); // [0] head, [1] tail, then 1024 slots
  const STOP = 0;
  const READY = 1;
  const BELL = 8;
  const bell = (k) => {
    Atomics.add(ctl, BELL + k, 1);
    Atomics.notify(ctl, BELL + k);
  };
  const waitUntil = (ready) => {
    for (let s = 0; s < 200; s++) if (ready()) return true;
    for (;;) {
      const seen = Atomics.load(ctl, BELL + id);
      if (ready()) return true;
      if (Atomics.load(ctl, STOP)) return false;
      if (plainWait) Atomics.wait(ctl, BELL + id, seen, 500);
      else h.wait(ctl, BELL + id, seen);
    }
  };
  Atomics.add(ctl, READY, 1);
  while (Atomics.load(ctl, READY) < PRODUCERS + 1);
  const t0 = performance.now();
  const c0 = cpuMs();
  let ops = 0;
  let workMs = 0;
  if (role === 'producer') {
    const r = rings[id];
    let head = 0;
    while (!Atomics.load(ctl, STOP)) {
      if (!waitUntil(() => head + 32 - Atomics.load(r, 1) <= 1024)) break;
      const w0 = performance.now();
      for (let i = 0; i < 32; i++) {
        const size = sizeOf();
        const p = floor ? 64 + ((id * 8192 + ((ops + i) & 8191)) << 6) : h.malloc(size);
        const v = floor ? floorView : h.i32;
        v[p >>> 2] = ops + i;
        v[((p + size) >>> 2) - 1] = size;
        r[2 + ((head + i) & 1023)] = p;
      }
      workMs += performance.now() - w0;
      head += 32;
      ops += 32;
      Atomics.store(r, 0, head);
      bell(PRODUCERS);
    }
  } else {
    const tails = new Array(PRODUCERS).fill(0);
    const any = () => {
      for (let k = 0; k < PRODUCERS; k++) if (Atomics.load(rings[k], 0) !== tails[k]) return true;
      return false;
    };
    while (performance.now() - t0 < ms) {
      if (!waitUntil(any)) break;
      for (let k = 0; k < PRODUCERS; k++) {
        const r = rings[k];
        const hd = Atomics.load(r, 0);
        const w0 = performance.now();
        const held = holdView ? (floor ? floorView : h.i32) : null;
        for (; tails[k] !== hd; tails[k]++) {
          const p = r[2 + (tails[k] & 1023)] >>> 0;
          // A fixed size: the payload's last word, as this probe has always checked it; a range: its first word.
          const v = held ?? (floor ? floorView : h.i32);
          if (lo === hi ? v[((p + lo) >>> 2) - 1] !== lo : v[p >>> 2] !== tails[k]) throw new Error(`payload at ${p} damaged`);
          if (!floor) h.free(p);
          ops++;
        }
        workMs += performance.now() - w0;
        Atomics.store(r, 1, tails[k]);
        bell(k);
      }
    }
    Atomics.store(ctl, STOP, 1);
    for (let k = 0; k < PRODUCERS; k++) bell(k);
  }
  parentPort.postMessage({ ops, secs: (performance.now() - t0) / 1000, cpuMs: cpuMs() - c0, workMs });
}
