// CPU per handed-over block on real threads, for the cross-agent design note: the bench's producer-consumer
// shape (2 producers malloc SIZE-byte payloads and hand them over in batches of 32 through a ring each; 1
// consumer checks and frees them; an agent with nothing to do waits on its doorbell with heap.wait) for MS ms:
//   node apps/bench/scripts/cross-agent-cpu.mjs [pool-arena|pool-classic|pool-global] [size] [ms] [dist folder]
// Prints payloads/s and each side's CPU per payload (utime + stime of each worker thread from
// /proc/thread-self/stat, 10 ms ticks): the producers' CPU summed, over all payloads; the consumer's. Linux only.
// Run it under `perf stat -e page-faults,context-switches` or `strace -f -c -e trace=madvise` for the counts.
// With PLAIN_WAIT=1 in the environment the agents block in a plain `Atomics.wait` instead of `heap.wait` (no
// flush before, no drain after), to see what the heap's wait costs the shape.
import { readFileSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

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
  const start = (role, id) => new Worker(new URL(import.meta.url), { workerData: { role, id, handle: heap.handle, url, ctl, rings, size: Number(size), ms: Number(ms) } });
  const workers = [start('producer', 0), start('producer', 1), start('consumer', 2)];
  const res = await Promise.all(workers.map((w) => new Promise((resolve, reject) => (w.once('message', resolve), w.once('error', reject)))));
  const n = res[2].ops;
  const perPayload = (ms) => ((ms * 1e6) / n).toFixed(0);
  console.log(
    `${backend} ${size} B: ${(n / res[2].secs / 1e6).toFixed(2)} M payloads/s; CPU ns per payload: producers ${perPayload(res[0].cpuMs + res[1].cpuMs)}, consumer ${perPayload(res[2].cpuMs)}`,
  );
  process.exit(0);
} else {
  const { role, id, handle, url, ctl: ctlBuffer, rings: ringBuffers, size, ms } = workerData;
  const plainWait = process.env.PLAIN_WAIT === '1';
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
  while (Atomics.load(ctl, READY) < 3);
  const t0 = performance.now();
  const c0 = cpuMs();
  let ops = 0;
  if (role === 'producer') {
    const r = rings[id];
    let head = 0;
    while (!Atomics.load(ctl, STOP)) {
      if (!waitUntil(() => head + 32 - Atomics.load(r, 1) <= 1024)) break;
      for (let i = 0; i < 32; i++) {
        const p = h.malloc(size);
        const v = h.i32;
        v[p >>> 2] = ops + i;
        v[((p + size) >>> 2) - 1] = size;
        r[2 + ((head + i) & 1023)] = p;
      }
      head += 32;
      ops += 32;
      Atomics.store(r, 0, head);
      bell(2);
    }
  } else {
    const tails = [0, 0];
    const any = () => Atomics.load(rings[0], 0) !== tails[0] || Atomics.load(rings[1], 0) !== tails[1];
    while (performance.now() - t0 < ms) {
      if (!waitUntil(any)) break;
      for (let k = 0; k < 2; k++) {
        const r = rings[k];
        const hd = Atomics.load(r, 0);
        for (; tails[k] !== hd; tails[k]++) {
          const p = r[2 + (tails[k] & 1023)] >>> 0;
          if (h.i32[((p + size) >>> 2) - 1] !== size) throw new Error(`payload at ${p} damaged`);
          h.free(p);
          ops++;
        }
        Atomics.store(r, 1, tails[k]);
        bell(k);
      }
    }
    Atomics.store(ctl, STOP, 1);
    bell(0);
    bell(1);
  }
  parentPort.postMessage({ ops, secs: (performance.now() - t0) / 1000, cpuMs: cpuMs() - c0 });
}
