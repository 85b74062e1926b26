/**
 * An agent of the `channels` group, in a worker kept for the whole group: it takes one job at a time from
 * the main thread (a role in one run of one lane, see `channels-protocol.ts`), runs it, and answers with
 * what it counted. Every producer tags its blocks (its index in the top byte, a serial below) and writes the
 * tag into every 32-bit word; every consumer reads every word, counts the blocks whose words disagree, and
 * sums the tags, so the main thread can tell that nothing was lost or duplicated.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { RingBuffer } from 'ringbuf.js';
import { errorText } from '../format.js';
import type { AttachHeap, PaddockHeap } from '../peers/paddock-heap.js';
import {
  type BenchChannel,
  C_ARMED,
  C_GO,
  C_LEFT,
  C_READY,
  C_RECEIVED,
  C_STOP,
  C_WAITING,
  type ChannelJob,
  type ChannelJobResult,
  type ChannelModule,
  type ChannelWorkerData,
  clockUs,
  POST_WINDOW,
  WAKE_SENT_AT,
} from './channels-protocol.js';

const data = workerData as ChannelWorkerData;
const { attachHeap } = (await import(data.paddockUrl)) as { attachHeap: AttachHeap };
const channels = data.channelUrl !== null ? ((await import(data.channelUrl)) as ChannelModule) : null;
const nap = new Int32Array(new SharedArrayBuffer(4));

/** Waits until the main thread says go (after every agent is ready). */
function ready(ctl: Int32Array): void {
  Atomics.add(ctl, C_READY, 1);
  Atomics.notify(ctl, C_READY);
  while (Atomics.load(ctl, C_GO) === 0) Atomics.wait(ctl, C_GO, 0, 50);
}

/** The producer's last act: the last one out closes the channel. Returns whether it was the last. */
function leave(ctl: Int32Array): boolean {
  return Atomics.sub(ctl, C_LEFT, 1) === 1;
}

function writeBlock(i32: Int32Array, p: number, words: number, tag: number): void {
  const base = p >>> 2;
  for (let k = 0; k < words; k++) i32[base + k] = tag;
}

/** 1 when the block's words disagree with its first. */
function readBlock(i32: Int32Array, base: number, words: number): number {
  const tag = i32[base];
  let diff = 0;
  for (let k = 1; k < words; k++) diff |= i32[base + k] ^ tag;
  return diff === 0 ? 0 : 1;
}

function result(count: number, sum: number, bad: number): ChannelJobResult {
  return { ok: true, count, sum: sum >>> 0, bad, end: clockUs() };
}

// --- channel ---

function channelProducer(job: ChannelJob, heap: PaddockHeap, ch: BenchChannel, ctl: Int32Array): ChannelJobResult {
  const words = job.size >>> 2;
  const ptrs = new Uint32Array(job.batch);
  let serial = 0;
  let sum = 0;
  let count = 0;
  const top = job.index << 24;
  ready(ctl);
  while (Atomics.load(ctl, C_STOP) === 0) {
    if (job.batch === 1) {
      const p = heap.malloc(job.size);
      const tag = top ^ ++serial;
      writeBlock(heap.i32, p, words, tag);
      sum = (sum + tag) | 0;
      ch.send(p);
      count++;
    } else {
      for (let j = 0; j < job.batch; j++) {
        const p = heap.malloc(job.size);
        const tag = top ^ ++serial;
        writeBlock(heap.i32, p, words, tag);
        sum = (sum + tag) | 0;
        ptrs[j] = p;
      }
      ch.sendBatch(ptrs, job.batch);
      count += job.batch;
    }
  }
  if (leave(ctl)) ch.close();
  return result(count, sum, 0);
}

function channelConsumer(job: ChannelJob, heap: PaddockHeap, ch: BenchChannel, ctl: Int32Array): ChannelJobResult {
  const words = job.size >>> 2;
  const out = new Uint32Array(job.batch);
  let sum = 0;
  let bad = 0;
  let count = 0;
  ready(ctl);
  for (;;) {
    if (job.batch === 1) {
      const p = ch.recv();
      if (p <= 0) break;
      const i32 = heap.i32;
      sum = (sum + i32[p >>> 2]) | 0;
      bad += readBlock(i32, p >>> 2, words);
      heap.free(p);
      count++;
    } else {
      const n = ch.recvBatch(out, job.batch);
      if (n <= 0) break;
      const i32 = heap.i32;
      for (let j = 0; j < n; j++) {
        const p = out[j];
        sum = (sum + i32[p >>> 2]) | 0;
        bad += readBlock(i32, p >>> 2, words);
        heap.free(p);
      }
      count += n;
    }
  }
  return result(count, sum, bad);
}

// --- postMessage: the producer's window over the consumer's count ---

function windowWait(ctl: Int32Array, sent: number): void {
  for (;;) {
    const taken = Atomics.load(ctl, C_RECEIVED);
    if (sent - taken < POST_WINDOW) return;
    Atomics.store(ctl, C_WAITING, 1);
    Atomics.wait(ctl, C_RECEIVED, taken, 1);
  }
}

function windowTake(ctl: Int32Array, n: number): void {
  Atomics.add(ctl, C_RECEIVED, n);
  if (Atomics.load(ctl, C_WAITING) !== 0) {
    Atomics.store(ctl, C_WAITING, 0);
    Atomics.notify(ctl, C_RECEIVED);
  }
}

function postProducer(job: ChannelJob, heap: PaddockHeap | null, port: MessagePort, ctl: Int32Array): ChannelJobResult {
  const words = job.size >>> 2;
  let serial = 0;
  let sum = 0;
  let count = 0;
  const top = job.index << 24;
  const ptrs = new Uint32Array(job.batch);
  ready(ctl);
  while (Atomics.load(ctl, C_STOP) === 0) {
    windowWait(ctl, count);
    if (job.kind === 'post-offsets') {
      for (let j = 0; j < job.batch; j++) {
        const p = heap!.malloc(job.size);
        const tag = top ^ ++serial;
        writeBlock(heap!.i32, p, words, tag);
        sum = (sum + tag) | 0;
        ptrs[j] = p;
      }
      if (job.batch === 1) port.postMessage(ptrs[0]);
      else port.postMessage(ptrs.slice());
      count += job.batch;
    } else {
      const tag = top ^ ++serial;
      const body = new Int32Array(words);
      body.fill(tag);
      sum = (sum + tag) | 0;
      if (job.kind === 'post-transfer') port.postMessage(body.buffer, [body.buffer]);
      else port.postMessage(body);
      count++;
    }
  }
  port.postMessage(null);
  leave(ctl);
  return result(count, sum, 0);
}

function postConsumer(job: ChannelJob, heap: PaddockHeap | null, port: MessagePort, ctl: Int32Array): Promise<ChannelJobResult> {
  const words = job.size >>> 2;
  let sum = 0;
  let bad = 0;
  let count = 0;
  return new Promise((resolve) => {
    port.on('message', (m: unknown) => {
      if (m === null) {
        port.close();
        resolve(result(count, sum, bad));
        return;
      }
      if (typeof m === 'number') {
        const i32 = heap!.i32;
        sum = (sum + i32[m >>> 2]) | 0;
        bad += readBlock(i32, m >>> 2, words);
        heap!.free(m);
        count++;
        windowTake(ctl, 1);
      } else if (m instanceof Uint32Array) {
        const i32 = heap!.i32;
        for (let j = 0; j < m.length; j++) {
          const p = m[j];
          sum = (sum + i32[p >>> 2]) | 0;
          bad += readBlock(i32, p >>> 2, words);
          heap!.free(p);
        }
        count += m.length;
        windowTake(ctl, m.length);
      } else {
        const body = m instanceof ArrayBuffer ? new Int32Array(m) : (m as Int32Array);
        sum = (sum + body[0]) | 0;
        bad += readBlock(body, 0, words);
        count++;
        windowTake(ctl, 1);
      }
    });
    Atomics.add(ctl, C_READY, 1);
    Atomics.notify(ctl, C_READY);
  });
}

// --- ringbuf.js: the bytes through its ring (SPSC) ---

/** Spins a little, then naps 50 µs: ringbuf.js has no wait of its own. */
function idle(spins: number): number {
  if (spins < 100) return spins + 1;
  Atomics.wait(nap, 0, 0, 0.05);
  return spins;
}

function ringProducer(job: ChannelJob, ctl: Int32Array): ChannelJobResult {
  const ring = new RingBuffer(job.ring!, Uint8Array);
  const words = job.size >>> 2;
  const bytes = job.size * job.batch;
  const msg = new Uint8Array(bytes);
  const msg32 = new Int32Array(msg.buffer);
  let serial = 0;
  let sum = 0;
  let count = 0;
  const top = job.index << 24;
  ready(ctl);
  while (Atomics.load(ctl, C_STOP) === 0) {
    for (let j = 0; j < job.batch; j++) {
      const tag = top ^ ++serial;
      writeBlock(msg32, j * job.size, words, tag);
      sum = (sum + tag) | 0;
    }
    let spins = 0;
    while (ring.availableWrite() < bytes) spins = idle(spins);
    ring.push(msg, bytes);
    count += job.batch;
  }
  leave(ctl);
  return result(count, sum, 0);
}

function ringConsumer(job: ChannelJob, ctl: Int32Array): ChannelJobResult {
  const ring = new RingBuffer(job.ring!, Uint8Array);
  const words = job.size >>> 2;
  const msg = new Uint8Array(job.size * job.batch);
  const msg32 = new Int32Array(msg.buffer);
  let sum = 0;
  let bad = 0;
  let count = 0;
  ready(ctl);
  let spins = 0;
  for (;;) {
    const n = Math.min(job.batch, Math.floor(ring.availableRead() / job.size));
    if (n === 0) {
      if (Atomics.load(ctl, C_LEFT) === 0 && ring.availableRead() === 0) break;
      spins = idle(spins);
      continue;
    }
    spins = 0;
    ring.pop(msg, n * job.size);
    for (let j = 0; j < n; j++) {
      const base = (j * job.size) >>> 2;
      sum = (sum + msg32[base]) | 0;
      bad += readBlock(msg32, base, words);
    }
    count += n;
  }
  return result(count, sum, bad);
}

// --- wake-up: the main thread waits (recvAsync, or a MessagePort), this agent sends ---

function sleepMs(ms: number): void {
  Atomics.wait(nap, 0, 0, ms);
}

function wakeSender(job: ChannelJob, heap: PaddockHeap | null, ch: BenchChannel | null, port: MessagePort | null, ctl: Int32Array): ChannelJobResult {
  const sentAt = new Float64Array(job.clock);
  for (let i = 0; i < job.count; i++) {
    while (Atomics.load(ctl, C_ARMED) === 0) Atomics.wait(ctl, C_ARMED, 0, 50);
    Atomics.store(ctl, C_ARMED, 0);
    sleepMs(1); // the main thread is parked in its event loop by now
    if (ch !== null) {
      const p = heap!.malloc(job.size);
      sentAt[WAKE_SENT_AT] = clockUs();
      ch.send(p);
    } else {
      sentAt[WAKE_SENT_AT] = clockUs();
      port!.postMessage(i);
    }
  }
  port?.close();
  return result(job.count, 0, 0);
}

/** Answers every message on the port with the same message, until told null. */
function echo(port: MessagePort): Promise<ChannelJobResult> {
  let count = 0;
  return new Promise((resolve) => {
    port.on('message', (m: unknown) => {
      if (m === null) {
        port.close();
        resolve(result(count, 0, 0));
        return;
      }
      count++;
      port.postMessage(m);
    });
  });
}

async function runJob(job: ChannelJob, port: MessagePort | null): Promise<ChannelJobResult> {
  const ctl = new Int32Array(job.control);
  const heap = job.heap !== null ? attachHeap(job.heap) : null;
  try {
    const ch = job.channel !== null ? channels!.openChannel(heap, job.channel) : null;
    switch (job.kind) {
      case 'channel':
        return job.role === 'producer' ? channelProducer(job, heap!, ch!, ctl) : channelConsumer(job, heap!, ch!, ctl);
      case 'post-offsets':
      case 'post-clone':
      case 'post-transfer':
        return job.role === 'producer' ? postProducer(job, heap, port!, ctl) : await postConsumer(job, heap, port!, ctl);
      case 'ringbuf':
        return job.role === 'producer' ? ringProducer(job, ctl) : ringConsumer(job, ctl);
      case 'wake-channel':
        return wakeSender(job, heap, ch, null, ctl);
      case 'wake-port':
        return wakeSender(job, null, null, port, ctl);
      case 'echo-port':
        return await echo(port!);
      default:
        throw new Error(`unknown job ${String(job.kind)}`);
    }
  } finally {
    heap?.detach();
  }
}

parentPort!.on('message', (m: { job: ChannelJob; port: MessagePort | null }) => {
  runJob(m.job, m.port).then(
    (r) => parentPort!.postMessage(r),
    (err) => {
      // A failed agent lets the others finish: producers stop, and it counts as a producer gone.
      const ctl = new Int32Array(m.job.control);
      Atomics.store(ctl, C_STOP, 1);
      parentPort!.postMessage({ ok: false, error: errorText(err), count: 0, sum: 0, bad: 0, end: clockUs() } satisfies ChannelJobResult);
    },
  );
});
parentPort!.postMessage('loaded');
