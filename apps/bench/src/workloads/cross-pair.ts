/**
 * Cross-agent free of 32 B blocks between two workers (`cross-32`), the main thread's side. A pair of
 * workers (`cross-worker.js`: a producer and a consumer) is started once per mode and kept for every
 * round, so the warm-up rounds warm their code up. Each round: a fresh ring (and, for Paddock, a fresh
 * heap the main thread creates and both workers attach to), both sides meet at a barrier, the producer
 * hands over batches for `durationMs`, then marks the end; the figure is blocks per second from the
 * producer's start to the consumer's last free, on a clock both share.
 *
 * At most `slots` batches are in flight (the producer waits on the consumer), so memory stays bounded.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import { C_END, C_WORDS, type CrossMode, type CrossReport, type CrossRun, type CrossWorkerData } from './cross-protocol.js';
import { errorText } from '../format.js';
import type { CreateHeap, PaddockHeap } from '../peers/paddock-heap.js';

export const CROSS_BLOCK = 32;
export const CROSS_BATCH = 1024;
export const CROSS_SLOTS = 16;
/** The Paddock heap here: 1 GiB, as in the churn (32 B blocks do not care about the geometry). */
export const CROSS_HEAP_BYTES = 1024 * 1024 * 1024;

export interface CrossSample {
  readonly blocksPerSecond: number;
  readonly blocks: number;
  readonly seconds: number;
  /** Serials that did not match on the consumer's side (must be 0). */
  readonly bad: number;
  /** Share of the run the producer spent blocked on a full ring (the consumer is the bottleneck when high). */
  readonly producerWaitShare: number;
  /** Share of the run the consumer spent blocked on an empty ring (paddock only; the JS consumer idles in its event loop, unmeasured). */
  readonly consumerWaitShare: number | null;
  /** Paddock only: objects the producer's explicit drains reclaimed (its malloc path drains too, uncounted). */
  readonly drained: number | null;
  /** Paddock only: the producer's live bytes once the consumer flushed its cache and chains and the producer drained (must be 0). */
  readonly liveBytesAfter: number | null;
  /** Paddock only: the heap's committed bytes at the end. */
  readonly committedBytes: number | null;
}

export type CrossResult = { ok: true; sample: CrossSample } | { ok: false; error: string };

/** Where the worker script sits: next to the bundle that imports this (dist/main.js). */
const WORKER_URL = new URL('./cross-worker.js', import.meta.url);

export class CrossPair {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<Worker, (r: CrossReport | Error) => void>();

  constructor(
    readonly mode: CrossMode,
    private readonly paddockUrl: string | null,
    private readonly createHeap: CreateHeap | null,
  ) {
    const ch = mode === 'paddock' ? null : new MessageChannel();
    for (const role of ['producer', 'consumer'] as const) {
      const port = ch === null ? null : role === 'producer' ? ch.port1 : ch.port2;
      const wd: CrossWorkerData = { role, mode, paddockUrl, port };
      const w = new Worker(WORKER_URL, { workerData: wd, transferList: port ? [port] : [] });
      w.on('message', (m: CrossReport) => this.settle(w, m));
      w.on('error', (e) => this.settle(w, e));
      w.on('exit', (code) => this.settle(w, new Error(`worker exited with code ${code}`)));
      this.workers.push(w);
    }
  }

  private settle(w: Worker, r: CrossReport | Error): void {
    const f = this.pending.get(w);
    if (f) {
      this.pending.delete(w);
      f(r);
    }
  }

  async run(round: number, durationMs: number): Promise<CrossResult> {
    let heap: PaddockHeap | null = null;
    try {
      if (this.mode === 'paddock') heap = this.createHeap!({ maxBytes: CROSS_HEAP_BYTES });
    } catch (err) {
      return { ok: false, error: `createHeap threw: ${errorText(err)}` };
    }
    const ctl = new SharedArrayBuffer(C_WORDS * 4);
    new Int32Array(ctl)[C_END] = -1;
    const ring = this.mode === 'paddock' ? new SharedArrayBuffer(CROSS_BATCH * CROSS_SLOTS * 4) : null;
    const msg: CrossRun = {
      cmd: 'run',
      round,
      handle: heap?.handle ?? null,
      ctl,
      ring,
      batch: CROSS_BATCH,
      slots: CROSS_SLOTS,
      durationMs,
    };
    const replies = this.workers.map(
      (w) =>
        new Promise<CrossReport | Error>((resolve) => {
          this.pending.set(w, resolve);
          w.postMessage(msg);
        }),
    );
    const timeout = new Promise<Error>((resolve) => {
      const t = setTimeout(() => resolve(new Error(`no answer within ${durationMs + 30_000} ms`)), durationMs + 30_000);
      t.unref();
    });
    const [prod, cons] = await Promise.race([Promise.all(replies), timeout.then((e) => [e, e] as const)]);
    heap = null;
    if (prod instanceof Error) return { ok: false, error: `producer: ${prod.message}` };
    if (cons instanceof Error) return { ok: false, error: `consumer: ${cons.message}` };
    if (prod.error !== null) return { ok: false, error: `producer: ${prod.error}` };
    if (cons.error !== null) return { ok: false, error: `consumer: ${cons.error}` };
    const blocks = cons.batches * CROSS_BATCH;
    const seconds = (cons.t - prod.t) / 1000;
    if (cons.batches !== prod.batches) {
      return { ok: false, error: `the consumer freed ${cons.batches} batches of the producer's ${prod.batches}` };
    }
    return {
      ok: true,
      sample: {
        blocksPerSecond: blocks / seconds,
        blocks,
        seconds,
        bad: cons.bad,
        producerWaitShare: prod.waitMs / 1000 / seconds,
        consumerWaitShare: this.mode === 'paddock' ? cons.waitMs / 1000 / seconds : null,
        drained: prod.drained,
        liveBytesAfter: prod.liveBytesAfter,
        committedBytes: prod.committedBytes,
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
