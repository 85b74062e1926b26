// One producer or consumer of the channel tests, on the built packages (the backend is the one of the worker's
// --conditions). Every block carries [producer, seq, id, check]; a ledger in shared memory holds one word per id:
// 1 while its producer is in the send, 2 once the send returned, 3 once a consumer received it (a consumer that
// finds 3 already counts a duplicate). Errors go to shared words, so a consumer that is killed still reports them.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';
import { openChannel } from '@paddock/channel';

const { heapHandle, channelHandle, role, mode, producer, count, ids, ledger, shared } = workerData;
const heap = attachHeap(heapHandle);
const ch = openChannel(heap, channelHandle);
const book = new Int32Array(ledger);
// shared: [next id, stop, duplicates, order errors, bad contents, phantoms, received, producers done]
const w = new Int32Array(shared);
const NEXT = 0, STOP = 1, DUP = 2, ORDER = 3, BAD = 4, PHANTOM = 5, RECEIVED = 6;
const check = (producerId, seq, id) => (Math.imul(producerId, 0x9e3779b1) ^ Math.imul(seq, 0x85ebca6b) ^ id) | 0;

function make(seq) {
  const id = ids === 'shared' ? Atomics.add(w, NEXT, 1) : producer * count + seq;
  if (id >= book.length) return 0;
  const p = heap.malloc(64);
  const i = heap.i32;
  i[p >>> 2] = producer;
  i[(p >>> 2) + 1] = seq;
  i[(p >>> 2) + 2] = id;
  i[(p >>> 2) + 3] = check(producer, seq, id);
  Atomics.store(book, id, 1);
  return p;
}
const sentOne = (p) => Atomics.compareExchange(book, heap.i32[(p >>> 2) + 2], 1, 2);

async function produce() {
  const batch = [];
  for (let seq = 0; count === 0 || seq < count; seq++) {
    if (Atomics.load(w, STOP) !== 0) break;
    const p = make(seq);
    if (p === 0) break;
    if (mode === 'send') ch.send(p);
    else if (mode === 'async') await ch.sendAsync(p);
    else if (mode === 'try') while (!ch.trySend(p)) await new Promise((r) => setImmediate(r));
    else {
      batch.push(p);
      if (batch.length < 7 && seq + 1 !== count) continue;
      if (mode === 'batch') ch.sendBatch(batch);
      else await ch.sendBatchAsync(batch);
      for (const q of batch) sentOne(q);
      batch.length = 0;
      continue;
    }
    sentOne(p);
  }
  return { sent: true };
}

const last = new Map();
function take(p) {
  const i = heap.i32;
  const prod = i[p >>> 2], seq = i[(p >>> 2) + 1], id = i[(p >>> 2) + 2];
  if (id < 0 || id >= book.length || i[(p >>> 2) + 3] !== check(prod, seq, id)) Atomics.add(w, BAD, 1);
  else {
    const was = Atomics.exchange(book, id, 3);
    if (was === 3) Atomics.add(w, DUP, 1);
    if (was === 0) Atomics.add(w, PHANTOM, 1);
    const before = last.get(prod);
    if (before !== undefined && seq <= before) Atomics.add(w, ORDER, 1);
    last.set(prod, seq);
  }
  heap.free(p);
  Atomics.add(w, RECEIVED, 1);
}

async function consume() {
  let n = 0;
  if (mode === 'recv') for (let p = ch.recv(); p !== 0; p = ch.recv()) take(p), n++;
  else if (mode === 'iterate') for (const p of ch) take(p), n++;
  else if (mode === 'async') for await (const p of ch) take(p), n++;
  else if (mode === 'batch' || mode === 'batch-async') {
    const out = new Uint32Array(16);
    for (;;) {
      const got = mode === 'batch' ? ch.recvBatch(out, 16, 1000) : await ch.recvBatchAsync(out, 16, 1000);
      if (got === 0) break;
      for (let k = 0; k < got; k++) take(out[k]), n++;
    }
  } else if (mode === 'try') {
    for (;;) {
      const p = ch.tryRecv();
      if (p !== 0) take(p), n++;
      else if (ch.done) break;
      else await new Promise((r) => setImmediate(r));
    }
  }
  return { received: n };
}

const result = role === 'producer' ? await produce() : await consume();
heap.flush();
parentPort.postMessage(result);
