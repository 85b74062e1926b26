/**
 * One side of the cross-agent free workload (`cross-32`), in a worker. The producer mallocs 32 B blocks
 * in batches and hands them over; the consumer frees them. See `cross-pair.ts` for the protocol.
 *
 * - `paddock`: both workers attach to one heap (the built `packages/allocator/dist`, loaded from the URL
 *   the main thread passes). The producer mallocs a batch, writes each block's serial into it and puts
 *   the pointers in a ring of Int32 slots in a SharedArrayBuffer, published with one Atomics store per
 *   batch; the consumer checks each serial and frees the block (a cross-agent free: into its cache while
 *   that has room, then chains home to the producer), then `flush()`es at every batch boundary; the
 *   producer `drain()`s its inbox before every batch.
 * - `js-transfer`: plain JS, one `ArrayBuffer` of batch x 32 B per batch, written the same way and
 *   transferred with `postMessage`; the consumer reads it and drops it (the GC frees it).
 * - `js-typed`: plain JS, one `Int32Array(8)` (32 B) per block, a batch posted as one message with
 *   every block's buffer transferred; the consumer reads them and drops them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AttachHeap } from '../peers/paddock-heap.js';
import {
  C_ABORT,
  C_DONE,
  C_END,
  C_EPOCH,
  C_HEAD,
  C_READY,
  C_TAIL,
  type CrossReport,
  type CrossRun,
  type CrossWorkerData,
} from './cross-protocol.js';

const BLOCK = 32;
const clock = (): number => performance.timeOrigin + performance.now();

const data = workerData as CrossWorkerData;
let attachHeap: AttachHeap | null = null;
if (data.mode === 'paddock') {
  const mod = (await import(data.paddockUrl as string)) as { attachHeap: AttachHeap };
  attachHeap = mod.attachHeap;
}

function aborted(ctl: Int32Array): void {
  if (Atomics.load(ctl, C_ABORT) !== 0) throw new Error('the other worker failed');
}

function ready(ctl: Int32Array, wait: boolean): void {
  Atomics.add(ctl, C_READY, 1);
  Atomics.notify(ctl, C_READY);
  if (!wait) return;
  for (let n = Atomics.load(ctl, C_READY); n < 2; n = Atomics.load(ctl, C_READY)) {
    aborted(ctl);
    Atomics.wait(ctl, C_READY, n, 1000);
  }
}

/** Waits until fewer than `slots` batches are in flight; returns the ms it waited. */
function room(ctl: Int32Array, k: number, slots: number): number {
  let tail = Atomics.load(ctl, C_TAIL);
  if (k - tail < slots) return 0;
  const t = clock();
  for (; k - tail >= slots; tail = Atomics.load(ctl, C_TAIL)) {
    aborted(ctl);
    Atomics.wait(ctl, C_TAIL, tail, 1000);
  }
  return clock() - t;
}

function publish(ctl: Int32Array, k: number): void {
  Atomics.store(ctl, C_HEAD, k);
  Atomics.add(ctl, C_EPOCH, 1);
  Atomics.notify(ctl, C_EPOCH);
}

function finish(ctl: Int32Array, k: number): void {
  Atomics.store(ctl, C_END, k);
  Atomics.add(ctl, C_EPOCH, 1);
  Atomics.notify(ctl, C_EPOCH);
}

function report(r: Partial<CrossReport> & Pick<CrossReport, 'round' | 't' | 'batches'>): void {
  parentPort!.postMessage({
    role: data.role,
    bad: 0,
    waitMs: 0,
    drained: null,
    liveBytesAfter: null,
    committedBytes: null,
    error: null,
    ...r,
  } satisfies CrossReport);
}

function paddockProducer(m: CrossRun): void {
  const heap = attachHeap!(m.handle!);
  const ctl = new Int32Array(m.ctl);
  const ring = new Int32Array(m.ring!);
  const { batch, slots } = m;
  ready(ctl, true);
  const t0 = clock();
  const deadline = t0 + m.durationMs;
  let drained = 0;
  let waitMs = 0;
  let k = 0;
  do {
    waitMs += room(ctl, k, slots);
    drained += heap.drain();
    const base = (k % slots) * batch;
    for (let i = 0; i < batch; i++) ring[base + i] = heap.malloc(BLOCK);
    const i32 = heap.i32;
    const serial = k * batch;
    for (let i = 0; i < batch; i++) i32[(ring[base + i] >>> 0) >>> 2] = serial + i;
    publish(ctl, ++k);
  } while (clock() < deadline);
  finish(ctl, k);
  while (Atomics.load(ctl, C_DONE) === 0) {
    aborted(ctl);
    Atomics.wait(ctl, C_DONE, 0, 1000);
  }
  drained += heap.drain();
  // A drain on the allocation path may have put delivered blocks on this agent's cache stack, where they count
  // as live in their slabs until popped: back to the slabs, so the figure below is what was never sent home.
  heap.flushCache();
  const st = heap.stats();
  report({ round: m.round, t: t0, batches: k, waitMs, drained, liveBytesAfter: st.liveBytes, committedBytes: st.committedBytes });
}

function paddockConsumer(m: CrossRun): void {
  const heap = attachHeap!(m.handle!);
  const ctl = new Int32Array(m.ctl);
  const ring = new Int32Array(m.ring!);
  const { batch, slots } = m;
  ready(ctl, true);
  let tail = 0;
  let bad = 0;
  let waitMs = 0;
  for (;;) {
    const epoch = Atomics.load(ctl, C_EPOCH);
    const head = Atomics.load(ctl, C_HEAD);
    if (head === tail) {
      if (Atomics.load(ctl, C_END) === tail) break;
      aborted(ctl);
      const t = clock();
      Atomics.wait(ctl, C_EPOCH, epoch, 1000);
      waitMs += clock() - t;
      continue;
    }
    const i32 = heap.i32;
    const base = (tail % slots) * batch;
    const serial = tail * batch;
    for (let i = 0; i < batch; i++) {
      const p = ring[base + i] >>> 0;
      if (i32[p >>> 2] !== serial + i) bad++;
      heap.free(p);
    }
    heap.flush();
    Atomics.store(ctl, C_TAIL, ++tail);
    Atomics.notify(ctl, C_TAIL);
  }
  const t1 = clock();
  heap.flushCache();
  heap.flush();
  Atomics.store(ctl, C_DONE, 1);
  Atomics.notify(ctl, C_DONE);
  report({ round: m.round, t: t1, batches: tail, bad, waitMs });
}

function jsProducer(m: CrossRun): void {
  const ctl = new Int32Array(m.ctl);
  const port = data.port!;
  const { batch, slots } = m;
  const words = BLOCK >> 2;
  ready(ctl, true);
  const t0 = clock();
  const deadline = t0 + m.durationMs;
  let k = 0;
  let waitMs = 0;
  do {
    waitMs += room(ctl, k, slots);
    const serial = k * batch;
    if (data.mode === 'js-transfer') {
      const buf = new ArrayBuffer(batch * BLOCK);
      const v = new Int32Array(buf);
      for (let i = 0; i < batch; i++) v[i * words] = serial + i;
      port.postMessage({ round: m.round, k, buf }, [buf]);
    } else {
      const blocks = new Array<Int32Array>(batch);
      const bufs = new Array<ArrayBuffer>(batch);
      for (let i = 0; i < batch; i++) {
        const b = new Int32Array(words);
        b[0] = serial + i;
        blocks[i] = b;
        bufs[i] = b.buffer as ArrayBuffer;
      }
      port.postMessage({ round: m.round, k, blocks }, bufs);
    }
    k++;
  } while (clock() < deadline);
  port.postMessage({ round: m.round, end: k });
  report({ round: m.round, t: t0, batches: k, waitMs });
}

function jsConsumer(m: CrossRun): void {
  const ctl = new Int32Array(m.ctl);
  const port = data.port!;
  const { batch } = m;
  const words = BLOCK >> 2;
  let tail = 0;
  let bad = 0;
  const onMessage = (msg: { round: number; k?: number; end?: number; buf?: ArrayBuffer; blocks?: Int32Array[] }) => {
    if (msg.round !== m.round) return;
    if (msg.end !== undefined) {
      const t1 = clock();
      port.off('message', onMessage);
      report({ round: m.round, t: t1, batches: tail, bad: bad + (msg.end === tail ? 0 : 1) });
      return;
    }
    const serial = tail * batch;
    if (msg.buf) {
      const v = new Int32Array(msg.buf);
      for (let i = 0; i < batch; i++) if (v[i * words] !== serial + i) bad++;
    } else {
      const blocks = msg.blocks!;
      for (let i = 0; i < batch; i++) if (blocks[i][0] !== serial + i) bad++;
    }
    Atomics.store(ctl, C_TAIL, ++tail);
    Atomics.notify(ctl, C_TAIL);
  };
  port.on('message', onMessage);
  ready(ctl, false);
}

parentPort!.on('message', (m: CrossRun | { cmd: 'exit' }) => {
  if (m.cmd === 'exit') {
    data.port?.close();
    parentPort!.close();
    return;
  }
  try {
    if (data.mode === 'paddock') {
      if (data.role === 'producer') paddockProducer(m);
      else paddockConsumer(m);
    } else if (data.role === 'producer') jsProducer(m);
    else jsConsumer(m);
  } catch (err) {
    // Unblock the other side, then say what happened.
    const ctl = new Int32Array(m.ctl);
    Atomics.store(ctl, C_ABORT, 1);
    Atomics.add(ctl, C_EPOCH, 1);
    for (const w of [C_READY, C_TAIL, C_EPOCH, C_DONE]) Atomics.notify(ctl, w);
    data.port?.postMessage({ round: m.round, end: -1 });
    report({ round: m.round, t: 0, batches: 0, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
});
