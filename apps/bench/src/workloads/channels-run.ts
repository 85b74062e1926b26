/**
 * How the `channels` group runs a lane once: a fresh heap (and channel, or ring) per run, one worker of the
 * group's pool per agent, every agent ready before the clock starts, producers stopped after the run's
 * time, the rate taken from the start to the last consumer's end. And the wake-up runs: the main thread
 * waits in `recvAsync` (or on a MessagePort) while a worker sends.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { RingBuffer } from 'ringbuf.js';
import { errorText } from '../format.js';
import type { CreateHeap, PaddockHeap } from '../peers/paddock-heap.js';
import { runNative } from '../peers/native.js';
import {
  type BenchChannel,
  C_ARMED,
  C_GO,
  C_LEFT,
  C_READY,
  C_STOP,
  C_WORDS,
  CAPACITY,
  type ChannelJob,
  type ChannelJobResult,
  type ChannelModule,
  type ChannelWorkerData,
  clockUs,
  type Lane,
  WAKE_SENT_AT,
} from './channels-protocol.js';

/** Heap of a run: a cap, not a commitment (the buffer grows); room for a full window of 4 KiB messages. */
const HEAP_BYTES = 512 * 1024 * 1024;
/** A run that has not ended this long after its producers stopped has hung. */
const HANG_MS = 30_000;
/** Agents of the largest shape. */
export const POOL_SIZE = 5;

/** The built `@paddock/channel` (loaded at run time, like the allocator: the bench does not bundle it). */
export function channelDistUrl(): URL {
  // dist/main.js -> apps/bench/dist -> repository root
  return new URL('../../../packages/channel/dist/index.js', import.meta.url);
}

export async function loadChannelModule(url = channelDistUrl()): Promise<ChannelModule | string> {
  if (!existsSync(fileURLToPath(url))) return 'packages/channel/dist/index.js not found: @paddock/channel is not built';
  try {
    const mod = (await import(url.href)) as Partial<ChannelModule>;
    if (typeof mod.createChannel !== 'function' || typeof mod.openChannel !== 'function') return '@paddock/channel has no createChannel/openChannel';
    return mod as ChannelModule;
  } catch (err) {
    return `@paddock/channel failed to load: ${errorText(err)}`;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The group's workers, kept for all its runs; each takes one job at a time. */
export class AgentPool {
  private constructor(private readonly workers: Worker[]) {}

  /** `script`: the agents' bundle (`dist/channel-worker.js`, next to this module once built). */
  static async start(paddockUrl: string, channelUrl: string | null, script = new URL('./channel-worker.js', import.meta.url)): Promise<AgentPool> {
    const data: ChannelWorkerData = { paddockUrl, channelUrl };
    const workers = Array.from({ length: POOL_SIZE }, () => new Worker(script, { workerData: data }));
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            w.once('message', () => resolve());
            w.once('error', reject);
          }),
      ),
    );
    return new AgentPool(workers);
  }

  /** Gives worker `i` the job; resolves with its answer. */
  job(i: number, job: ChannelJob, port: MessagePort | null = null): Promise<ChannelJobResult> {
    const w = this.workers[i];
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      w.once('error', onError);
      w.once('message', (r: ChannelJobResult) => {
        w.off('error', onError);
        resolve(r);
      });
      w.postMessage({ job, port }, port !== null ? [port] : []);
    });
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** One run's figure: messages per second; or what went wrong. */
export type RunOutcome = { ok: true; rate: number; messages: number } | { ok: false; error: string };

export interface RunEnv {
  readonly pool: AgentPool | null;
  readonly createHeap: CreateHeap | null;
  readonly channels: ChannelModule | null;
  /** The C limit's binary (null: not built). */
  readonly bin: string | null;
  readonly ms: number;
}

function jobFor(lane: Lane, size: number, role: ChannelJob['role'], index: number, control: SharedArrayBuffer, extra: Partial<ChannelJob>): ChannelJob {
  const kind = lane.kind === 'native' ? 'channel' : lane.kind;
  return { kind, role, index, size, batch: lane.batch, control, clock: new SharedArrayBuffer(8), heap: null, channel: null, ring: null, count: 0, ...extra };
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no end ${ms / 1000} s after the producers stopped`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

export async function runLane(env: RunEnv, lane: Lane, size: number): Promise<RunOutcome> {
  if (lane.kind === 'native') {
    if (env.bin === null) return { ok: false, error: 'the C limit is not built' };
    const r = runNative(env.bin, 'queue', { producers: lane.producers, consumers: lane.consumers, size, batch: lane.batch, ms: env.ms, capacity: CAPACITY });
    if (!r.ok) return { ok: false, error: r.error ?? 'failed' };
    if (r.bad !== 0) return { ok: false, error: `${r.bad} blocks bad or lost` };
    return { ok: true, rate: r.ops / r.seconds, messages: r.ops };
  }
  if (env.pool === null) return { ok: false, error: 'no agents' };
  if ((lane.kind === 'channel' || lane.kind === 'post-offsets') && env.createHeap === null) return { ok: false, error: 'the paddock peer does not run' };
  if (lane.kind === 'channel' && env.channels === null) return { ok: false, error: '@paddock/channel does not load' };
  const control = new SharedArrayBuffer(4 * C_WORDS);
  const ctl = new Int32Array(control);
  ctl[C_LEFT] = lane.producers;
  let heap: PaddockHeap | null = null;
  let ch: BenchChannel | null = null;
  try {
    const extra: { heap?: ChannelJob['heap']; channel?: unknown; ring?: SharedArrayBuffer } = {};
    if (lane.kind === 'channel' || lane.kind === 'post-offsets') {
      heap = env.createHeap!({ maxBytes: HEAP_BYTES });
      extra.heap = heap.handle;
    }
    if (lane.kind === 'channel') {
      ch = env.channels!.createChannel(heap, { capacity: CAPACITY });
      extra.channel = ch.handle;
    }
    if (lane.kind === 'ringbuf') extra.ring = RingBuffer.getStorageForCapacity(CAPACITY * size, Uint8Array);
    const posts = lane.kind.startsWith('post-');
    const link = posts ? new MessageChannel() : null;
    const agents = lane.producers + lane.consumers;
    const answers: Promise<ChannelJobResult>[] = [];
    for (let i = 0; i < lane.producers; i++) answers.push(env.pool.job(i, jobFor(lane, size, 'producer', i, control, extra), link?.port1 ?? null));
    for (let i = 0; i < lane.consumers; i++) answers.push(env.pool.job(lane.producers + i, jobFor(lane, size, 'consumer', i, control, extra), link?.port2 ?? null));
    // An agent that fails stops the producers and closes the channel, so the others finish and answer.
    const onFailure = (r: ChannelJobResult) => {
      if (r.ok) return;
      Atomics.store(ctl, C_STOP, 1);
      try {
        ch?.close();
      } catch {
        // already closed
      }
    };
    for (const a of answers) void a.then(onFailure, () => undefined);
    const all = Promise.all(answers);
    let failed: unknown = null;
    all.catch((err) => (failed = err));
    while (Atomics.load(ctl, C_READY) < agents && failed === null) await sleep(1);
    const t0 = clockUs();
    Atomics.store(ctl, C_GO, 1);
    Atomics.notify(ctl, C_GO);
    await sleep(env.ms);
    Atomics.store(ctl, C_STOP, 1);
    const results = await withTimeout(all, HANG_MS, lane.name);
    const bad = results.find((r) => !r.ok);
    if (bad !== undefined) return { ok: false, error: bad.error ?? 'an agent failed' };
    const sent = results.slice(0, lane.producers);
    const got = results.slice(lane.producers);
    const count = (rs: ChannelJobResult[]) => rs.reduce((n, r) => n + r.count, 0);
    const sum = (rs: ChannelJobResult[]) => rs.reduce((n, r) => (n + r.sum) >>> 0, 0);
    const corrupt = got.reduce((n, r) => n + r.bad, 0);
    if (count(sent) !== count(got) || sum(sent) !== sum(got)) return { ok: false, error: `sent ${count(sent)} blocks, received ${count(got)} (tag sums ${sum(sent)} / ${sum(got)})` };
    if (corrupt !== 0) return { ok: false, error: `${corrupt} blocks with words that disagree` };
    const t1 = Math.max(...got.map((r) => r.end));
    return { ok: true, rate: (count(got) * 1e6) / (t1 - t0), messages: count(got) };
  } catch (err) {
    return { ok: false, error: errorText(err) };
  } finally {
    try {
      ch?.drop();
    } catch {
      // the run's failure is the one reported
    }
    heap?.detach();
  }
}

/** The wake-up kinds: `recvAsync` on the main thread, a MessagePort message one way, a MessagePort round trip. */
export type WakeKind = 'recvAsync' | 'port one-way' | 'port round trip';
export const WAKE_KINDS: readonly WakeKind[] = ['recvAsync', 'port one-way', 'port round trip'];

/** One round of one wake-up kind: `count` latencies in µs. */
export async function runWake(env: RunEnv, kind: WakeKind, count: number): Promise<number[] | string> {
  if (env.pool === null) return 'no agents';
  const control = new SharedArrayBuffer(4 * C_WORDS);
  const ctl = new Int32Array(control);
  const clock = new SharedArrayBuffer(8);
  const sentAt = new Float64Array(clock);
  const out: number[] = [];
  let heap: PaddockHeap | null = null;
  let ch: BenchChannel | null = null;
  const arm = () => {
    Atomics.store(ctl, C_ARMED, 1);
    Atomics.notify(ctl, C_ARMED);
  };
  try {
    if (kind === 'recvAsync') {
      if (env.createHeap === null || env.channels === null) return 'the paddock peer or @paddock/channel does not run';
      heap = env.createHeap({ maxBytes: HEAP_BYTES });
      ch = env.channels.createChannel(heap, { capacity: CAPACITY });
      const job: ChannelJob = { kind: 'wake-channel', role: 'producer', index: 0, size: 64, batch: 1, control, clock, heap: heap.handle, channel: ch.handle, ring: null, count };
      const done = env.pool.job(0, job);
      for (let i = 0; i < count; i++) {
        arm();
        const p = await ch.recvAsync();
        const t = clockUs();
        if (p <= 0) return `recvAsync gave ${p}`;
        out.push(t - sentAt[WAKE_SENT_AT]);
        heap.free(p);
      }
      const r = await done;
      if (!r.ok) return r.error ?? 'the sender failed';
    } else {
      const { port1, port2 } = new MessageChannel();
      const next = () => new Promise<void>((resolve) => port2.once('message', () => resolve()));
      const roundTrip = kind === 'port round trip';
      const job: ChannelJob = { kind: roundTrip ? 'echo-port' : 'wake-port', role: 'producer', index: 0, size: 64, batch: 1, control, clock, heap: null, channel: null, ring: null, count };
      const done = env.pool.job(0, job, port1);
      for (let i = 0; i < count; i++) {
        if (roundTrip) {
          await sleep(1);
          const got = next();
          const t0 = clockUs();
          port2.postMessage(i);
          await got;
          out.push(clockUs() - t0);
        } else {
          const got = next();
          arm();
          await got;
          out.push(clockUs() - sentAt[WAKE_SENT_AT]);
        }
      }
      if (roundTrip) port2.postMessage(null);
      const r = await done;
      port2.close();
      if (!r.ok) return r.error ?? 'the sender failed';
    }
    return out;
  } catch (err) {
    return errorText(err);
  } finally {
    ch?.drop();
    heap?.detach();
  }
}
