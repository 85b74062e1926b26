// The idle-1g program's timeline, for the allocator note: agent A allocates 1 GiB in 512 KiB blocks (every page
// written) and goes idle (startIdle); agent B frees them all and goes idle. Resident memory is sampled every 5 ms
// from B's last free, and A's idle visits are timed: when the memory starts to come back, and how fast.
//   node apps/bench/scripts/idle-return.mjs [dist folder]
// Prints the resident MiB at the start, the ms until it fell by half the payload, the first samples
// ("ms:MiB"), and A's visits in ms from B's last free (negative: before it). Linux only (/proc/self/statm).
import { readFileSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const rssMiB = () => (Number(readFileSync('/proc/self/statm', 'utf8').split(' ')[1]) * 4096) / 2 ** 20;
const BLOCKS = 2048;
const BLOCK = 512 * 1024;

if (isMainThread) {
  const dist = process.argv[2] ?? new URL('../../../packages/allocator/dist', import.meta.url).pathname;
  const { createHeap } = await import(`${dist}/pool-arena.js`);
  const heap = createHeap({ maxBytes: 2 ** 31 });
  const list = new SharedArrayBuffer(BLOCKS * 4);
  const start = (id) => new Worker(new URL(import.meta.url), { workerData: { id, handle: heap.handle, list, dist } });
  const [a, b] = [start(0), start(1)];
  const message = (w) => new Promise((resolve) => w.once('message', resolve));
  await message(a); // A holds the payload
  const held = rssMiB();
  await new Promise((r) => setTimeout(r, 50));
  b.postMessage('free');
  const freedAt = await message(b);
  const t0 = performance.now();
  const samples = [];
  let half = null;
  while (performance.now() - t0 < 400) {
    const r = rssMiB();
    samples.push(`${(performance.now() - t0).toFixed(0)}:${r.toFixed(0)}`);
    if (half === null && held - r >= (BLOCKS * BLOCK) / 2 ** 21) half = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 5));
  }
  a.postMessage('end');
  b.postMessage('end');
  const visits = await message(a);
  console.log(`resident ${held.toFixed(0)} MiB held; half the payload back ${half === null ? 'not within 400' : half.toFixed(0)} ms after B's last free`);
  console.log(samples.slice(0, 24).join(' '));
  console.log(`A's visits: ${visits.map((t) => (t - freedAt).toFixed(0)).join(' ')} ms`);
  process.exit(0);
} else {
  const { attachHeap } = await import(`${workerData.dist}/pool-arena.js`);
  const heap = attachHeap(workerData.handle);
  const list = new Int32Array(workerData.list);
  const visits = [];
  const tick = heap.tick.bind(heap);
  heap.tick = () => {
    visits.push(performance.timeOrigin + performance.now());
    return tick();
  };
  if (workerData.id === 0) {
    for (let i = 0; i < BLOCKS; i++) {
      const p = heap.malloc(BLOCK);
      for (let o = 0; o < BLOCK; o += 4096) heap.u8[p + o] = 1;
      list[i] = p;
    }
    heap.startIdle();
    parentPort.postMessage('held');
  }
  parentPort.on('message', (m) => {
    if (m === 'free') {
      for (let i = 0; i < BLOCKS; i++) heap.free(list[i] >>> 0);
      heap.startIdle();
      parentPort.postMessage(performance.timeOrigin + performance.now());
    } else if (m === 'end') {
      heap.stopIdle();
      parentPort.postMessage(visits);
    }
  });
}
