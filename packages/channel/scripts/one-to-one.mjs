// One producer and one consumer worker, 64 B blocks allocated and freed around the channel, batches of 32: blocks/s.
// Run after `pnpm build`: node packages/channel/scripts/one-to-one.mjs
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createHeap, attachHeap } from '@paddock/allocator';
import { createChannel, openChannel } from '@paddock/channel';
const N = 2_000_000, B = 32;
if (isMainThread) {
  const heap = createHeap({ maxBytes: 1 << 30 });
  const ch = createChannel(heap, { capacity: 256 });
  const go = new SharedArrayBuffer(4);
  const mk = (role) => new Worker(new URL(import.meta.url), { workerData: { role, heap: heap.handle, ch: ch.handle, go } });
  const ws = [mk('p'), mk('c')];
  const ready = ws.map((w) => new Promise((r) => w.once('message', r)));
  await Promise.all(ready);
  const t0 = performance.now();
  Atomics.store(new Int32Array(go), 0, 1); Atomics.notify(new Int32Array(go), 0);
  const done = await Promise.all(ws.map((w) => new Promise((r) => w.once('message', r))));
  const ms = performance.now() - t0;
  console.log(JSON.stringify({ blocks: N, ms: Math.round(ms), blocksPerSec: Math.round(N / (ms / 1000)), stats: ch.stats(), done }));
  await Promise.all(ws.map((w) => w.terminate()));
} else {
  const heap = attachHeap(workerData.heap);
  const ch = openChannel(heap, workerData.ch);
  parentPort.postMessage('ready');
  Atomics.wait(new Int32Array(workerData.go), 0, 0);
  if (workerData.role === 'p') {
    const ps = new Uint32Array(B);
    for (let n = 0; n < N; n += B) {
      for (let k = 0; k < B; k++) ps[k] = heap.malloc(64);
      ch.sendBatch(ps);
    }
    parentPort.postMessage('sent');
  } else {
    const out = new Uint32Array(B);
    let got = 0;
    while (got < N) { const n = ch.recvBatch(out, B); for (let k = 0; k < n; k++) heap.free(out[k]); got += n; }
    parentPort.postMessage(got);
  }
}
