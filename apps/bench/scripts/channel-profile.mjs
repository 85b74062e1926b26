// The channels group's 1->1 64 B lane outside the harness, for `node --cpu-prof`: a producer worker mallocs,
// writes and sends (BATCH=32: sendBatch of 32), a consumer worker receives, reads and frees, for 1.5 s; prints
// the rate and the channel's stats (`wakes`: how often one side woke the other).
//   node --cpu-prof --cpu-prof-dir=/tmp/prof apps/bench/scripts/channel-profile.mjs   (then cpuprofile-top.mjs on each file)
import { Worker, isMainThread, workerData } from 'node:worker_threads';
const { attachHeap, createHeap } = await import(new URL('../../../packages/allocator/dist/pool-arena.js', import.meta.url).href);
const { createChannel, openChannel } = await import(new URL('../../../packages/channel/dist/index.js', import.meta.url).href);
const BATCH = Number(process.env.BATCH ?? 1);
if (isMainThread) {
  const heap = createHeap({ maxBytes: 512 << 20 });
  const ch = createChannel(heap, { capacity: 256 });
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const ws = ['producer', 'consumer'].map((role) => new Worker(new URL(import.meta.url), { workerData: { role, heap: heap.handle, ch: ch.handle, stop: stop.buffer } }));
  const got = new Promise((r) => ws[1].once('message', r));
  const t0 = performance.now();
  setTimeout(() => Atomics.store(stop, 0, 1), 1500);
  const n = await got;
  console.log(`${(n / ((performance.now() - t0) / 1000) / 1e3).toFixed(0)} k/s`, ch.stats());
} else {
  const heap = attachHeap(workerData.heap);
  const ch = openChannel(heap, workerData.ch);
  const stop = new Int32Array(workerData.stop);
  const { parentPort } = await import('node:worker_threads');
  if (workerData.role === 'producer') {
    const ptrs = new Uint32Array(BATCH);
    while (Atomics.load(stop, 0) === 0) {
      for (let j = 0; j < BATCH; j++) { const p = heap.malloc(64); for (let k = 0; k < 16; k++) heap.i32[(p >>> 2) + k] = j; ptrs[j] = p; }
      if (BATCH === 1) ch.send(ptrs[0]); else ch.sendBatch(ptrs, BATCH);
    }
    ch.close();
  } else {
    let n = 0; const out = new Uint32Array(BATCH);
    for (;;) {
      if (BATCH === 1) { const p = ch.recv(); if (p <= 0) break; let s = 0; for (let k = 0; k < 16; k++) s |= heap.i32[(p >>> 2) + k]; heap.free(p); n++; }
      else { const m = ch.recvBatch(out, BATCH); if (m <= 0) break; for (let j = 0; j < m; j++) heap.free(out[j]); n += m; }
    }
    parentPort.postMessage(n);
  }
  heap.detach();
}
