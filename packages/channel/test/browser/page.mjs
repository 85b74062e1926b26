// The page of the channel's browser test: on a window's main thread the blocking calls are refused with
// CANNOT_BLOCK before anything is queued; two module Web Workers send 500 blocks each with blocking sendBatch into a
// small ring, and the page takes them with `for await` (Atomics.waitAsync), each once and in order per worker.
import { createHeap, HeapError } from '@paddock/allocator';
import { createChannel } from '../../dist/index.js';

const step = (s) => {
  window.__step = s;
};

async function main() {
  step('create');
  const heap = createHeap({ maxBytes: 256 << 20 });
  const ch = createChannel(heap, { capacity: 16 });
  const p = heap.malloc(64);
  const refused = [];
  for (const call of [() => ch.send(p), () => ch.sendBatch([p]), () => ch.recv(), () => ch.recvBatch(new Uint32Array(4)), () => [...ch]]) {
    try {
      call();
      refused.push('none');
    } catch (err) {
      refused.push(err instanceof HeapError ? err.code : String(err));
    }
  }
  const queuedAfterRefusals = ch.stats().queued;
  heap.free(p);

  step('workers');
  const workers = [0, 1].map((producer) => {
    const w = new Worker('/agent.js', { type: 'module' });
    w.onerror = (e) => {
      window.__done = { error: `worker: ${e.message}` };
    };
    w.postMessage({ heap: heap.handle, channel: ch.handle, producer, count: 500 });
    return w;
  });
  let finished = 0;
  for (const w of workers) {
    w.onmessage = () => {
      if (++finished === workers.length) ch.close();
    };
  }

  step('receive');
  const last = [-1, -1];
  let received = 0;
  let outOfOrder = 0;
  for await (const q of ch) {
    const i = heap.i32;
    const producer = i[q >>> 2];
    const seq = i[(q >>> 2) + 1];
    if (seq <= last[producer]) outOfOrder++;
    last[producer] = seq;
    heap.free(q);
    received++;
  }
  for (const w of workers) w.terminate();
  window.__done = { refused, queuedAfterRefusals, received, outOfOrder, last, done: ch.done };
}

main().catch((err) => {
  window.__done = { error: String(err && err.stack ? err.stack : err) };
});
