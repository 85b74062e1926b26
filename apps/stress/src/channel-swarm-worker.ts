/**
 * One producer or consumer of the channel-swarm program (see channel-swarm.ts), on the backend of its
 * `--conditions`. A producer sends blocks of 64 B carrying [incarnation, seq, id, check]; a consumer checks them,
 * marks the ledger and frees them. Ledger word per id: 1 while its producer is in the send, 2 once the send
 * returned, 3 once received. Findings go to shared words, so a worker that is killed still reports them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap, type HeapHandle } from '@paddock/allocator';
import { openChannel, type ChannelHandle } from '@paddock/channel';
import { W_BAD, W_DEPART, W_DUPLICATES, W_NEXT_ID, W_ORDER, W_PHANTOMS, W_RECEIVED, W_STOP, checkWord, type ChannelSwarmWorkerData } from './channel-swarm-protocol.js';

const data = workerData as ChannelSwarmWorkerData;
const heap = attachHeap(data.heap as HeapHandle);
const ch = openChannel(heap, data.channel as ChannelHandle);
const book = new Int32Array(data.ledger);
const w = new Int32Array(data.shared);
const departWord = W_DEPART + data.slot;

/** Whether this worker should stop: the run is over, or it was told to depart. */
const stopping = () => Atomics.load(w, W_STOP) !== 0 || Atomics.load(w, departWord) === data.incarnation;

async function produce(): Promise<void> {
  const batch: number[] = [];
  for (let seq = 0; !stopping(); seq++) {
    const id = Atomics.add(w, W_NEXT_ID, 1);
    if (id >= book.length) break;
    const p = heap.malloc(64);
    const i32 = heap.i32;
    i32[p >>> 2] = data.incarnation;
    i32[(p >>> 2) + 1] = seq;
    i32[(p >>> 2) + 2] = id;
    i32[(p >>> 2) + 3] = checkWord(data.incarnation, seq, id);
    Atomics.store(book, id, 1);
    if (data.mode === 'send') ch.send(p);
    else if (data.mode === 'async') await ch.sendAsync(p);
    else {
      batch.push(p);
      if (batch.length < 5) continue;
      ch.sendBatch(batch);
      for (const q of batch) Atomics.compareExchange(book, heap.i32[(q >>> 2) + 2]!, 1, 2);
      batch.length = 0;
      continue;
    }
    Atomics.compareExchange(book, id, 1, 2);
  }
  if (batch.length > 0) {
    ch.sendBatch(batch);
    for (const q of batch) Atomics.compareExchange(book, heap.i32[(q >>> 2) + 2]!, 1, 2);
  }
}

const last = new Map<number, number>();
function take(p: number): void {
  const i32 = heap.i32;
  const from = i32[p >>> 2]!;
  const seq = i32[(p >>> 2) + 1]!;
  const id = i32[(p >>> 2) + 2]!;
  if (id < 0 || id >= book.length || i32[(p >>> 2) + 3] !== checkWord(from, seq, id)) Atomics.add(w, W_BAD, 1);
  else {
    const was = Atomics.exchange(book, id, 3);
    if (was === 3) Atomics.add(w, W_DUPLICATES, 1);
    if (was === 0) Atomics.add(w, W_PHANTOMS, 1);
    const before = last.get(from);
    if (before !== undefined && seq <= before) Atomics.add(w, W_ORDER, 1);
    last.set(from, seq);
  }
  heap.free(p);
  Atomics.add(w, W_RECEIVED, 1);
}

async function consume(): Promise<void> {
  const out = new Uint32Array(8);
  for (;;) {
    // A departing consumer stops between blocks; at the end of the run every consumer drains to the end.
    if (Atomics.load(w, departWord) === data.incarnation) return;
    if (data.mode === 'recv') {
      const p = ch.recv(50); // 0: closed and empty; TIMED_OUT (-1): look at the depart word again
      if (p === 0) return;
      if (p > 0) take(p);
      continue;
    }
    const got = data.mode === 'batch' ? ch.recvBatch(out, 8, 50) : await ch.recvBatchAsync(out, 8, 50);
    if (got === 0) return;
    for (let k = 0; k < got; k++) take(out[k]!);
  }
}

if (data.role === 'producer') await produce();
else await consume();
if (data.leave) ch.leave(); // else the record is taken back once this thread is gone
heap.flush();
parentPort!.postMessage('done');
