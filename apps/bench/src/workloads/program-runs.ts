/**
 * One run of a program on one peer, and what the runs add up to. A multi-agent program runs in workers
 * (`program-worker.ts`: a pool of them per Paddock backend and one for plain JavaScript, kept for all
 * rounds; each round a fresh heap made here and attached by every agent, or fresh ports); a single-agent
 * program runs on the main thread through the peer's adapter (`single.ts`); a native reference runs the
 * program as a process of its own. Each run gives the same figure: the program's rate (or time, or bytes),
 * its peak resident memory, and its extras.
 */
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { Adapter } from '../adapter.js';
import { errorText } from '../format.js';
import { collectGarbage, peakRss, resetPeak, rssNow, sample, settle } from '../memory.js';
import { runNative } from '../peers/native.js';
import type { CreateHeap, PaddockHeap } from '../peers/paddock-heap.js';
import { addSplit, type CpuSplit, emptySplit, startProfile, stopProfile } from './cpu-split.js';
import { K_GO, K_MAILBOX, K_STOP, K_WORDS, type ProgramReport, type ProgramRun, ringBytes, type WorkerMode } from './program-protocol.js';
import type { ProgramSpec } from './program-specs.js';
import { binaryTreesJs, buildThenFreeDraws, classNoReuseJs, type SingleLoops, type SingleResult } from './single.js';

const MiB = 1024 * 1024;

export interface ProgramSample {
  /** The figure: ops per second (rate), ms (idle: to return half the payload; null when it did not within the window), bytes. */
  readonly value: number | null;
  readonly seconds: number;
  readonly ops: number;
  readonly bad: number;
  /** Peak resident memory of the run above its level at the start, bytes. */
  readonly peakRssBytes: number;
  readonly extra: Record<string, number | null>;
  /** Where the agents' time went, summed over them (a profiled run only; `cpu-split.ts`). */
  readonly cpu?: CpuSplit;
}

export interface ProgramCell {
  readonly peer: string;
  readonly samples: ProgramSample[];
  readonly warmup: ProgramSample[];
  error: string | null;
  skipped: string | null;
  /** A Paddock peer: one profiled run after the measured ones, its rate and where its time went (null: none ran). */
  profiled?: { value: number; cpu: CpuSplit } | null;
}

export interface ProgramResult {
  readonly spec: ProgramSpec;
  readonly cells: ProgramCell[];
}

/** A worker per agent, per mode, kept for all rounds. */
export class Pool {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<Worker, (m: unknown) => void>();
  readonly events: ((m: { event: string; id: number; t: number }) => void)[] = [];

  constructor(
    private readonly mode: WorkerMode,
    private readonly url: string | null,
  ) {}

  get(n: number): Worker[] {
    while (this.workers.length < n) {
      const w = new Worker(new URL('./program-worker.js', import.meta.url), { workerData: { mode: this.mode, url: this.url } });
      w.on('message', (m: { event?: string }) => {
        if (m.event !== undefined) {
          for (const f of this.events) f(m as { event: string; id: number; t: number });
          return;
        }
        const f = this.waiting.get(w);
        this.waiting.delete(w);
        f?.(m);
      });
      w.on('error', (e) => {
        const f = this.waiting.get(w);
        this.waiting.delete(w);
        f?.({ error: `worker error: ${errorText(e)}` });
      });
      w.on('exit', (code) => {
        const f = this.waiting.get(w);
        this.waiting.delete(w);
        f?.({ error: `worker exited (${code})` });
        const i = this.workers.indexOf(w);
        if (i >= 0) this.workers.splice(i, 1);
      });
      this.workers.push(w);
    }
    return this.workers.slice(0, n);
  }

  reply(w: Worker): Promise<ProgramReport & { error: string | null }> {
    return new Promise((resolve) => this.waiting.set(w, resolve as (m: unknown) => void));
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers.length = 0;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function jsPorts(program: string, agents: number): { ports: ProgramRun['ports'][]; transfer: MessagePort[][] } {
  const ports: ProgramRun['ports'][] = [];
  const transfer: MessagePort[][] = [];
  for (let k = 0; k < agents; k++) {
    ports.push({ in: null, out: null });
    transfer.push([]);
  }
  const link = (from: number, to: number): void => {
    const ch = new MessageChannel();
    (ports[from] as { out: MessagePort | null }).out = ch.port1;
    transfer[from].push(ch.port1);
    const cur = ports[to].in;
    if (program === 'producer-consumer') (ports[to] as { in: MessagePort[] }).in = [...((cur as MessagePort[] | null) ?? []), ch.port2];
    else (ports[to] as { in: MessagePort }).in = ch.port2;
    transfer[to].push(ch.port2);
  };
  if (program === 'producer-consumer') for (let k = 0; k < agents - 1; k++) link(k, agents - 1);
  else if (program === 'message-ubench' || program === 'mixed-churn') for (let k = 0; k < agents; k++) link(k, (k + 1) % agents);
  else if (program === 'idle') link(0, 1);
  return { ports, transfer };
}

export type RunOutcome = { ok: true; sample: ProgramSample } | { ok: false; error: string };

/** One run of a worker program (paddock or js); with `profile`, each agent records where its time went. */
export async function runWorkers(spec: ProgramSpec, pool: Pool, mode: WorkerMode, createHeap: CreateHeap | null, profile = false): Promise<RunOutcome> {
  const agents = spec.agents;
  let heap: PaddockHeap | null = null;
  const ctl = new SharedArrayBuffer(K_WORDS * 4 + 64);
  const ctlI32 = new Int32Array(ctl);
  const rings = mode === 'paddock' ? spec.rings.map((c) => new SharedArrayBuffer(ringBytes(c))) : [];
  const shared = spec.sharedBytes > 0 ? new SharedArrayBuffer(spec.sharedBytes) : null;
  if (mode === 'paddock') {
    try {
      heap = createHeap!({ maxBytes: spec.heapBytes });
    } catch (err) {
      return { ok: false, error: `createHeap threw: ${errorText(err)}` };
    }
    if (spec.program === 'cache-scratch') {
      const v = new Int32Array(shared!);
      for (let k = 0; k < agents; k++) v[k] = heap!.malloc(spec.params.objsize);
    }
  }
  if (spec.program === 'larson') Atomics.store(ctlI32, K_MAILBOX, agents);
  const wiring = mode === 'js' ? jsPorts(spec.program, agents) : null;
  const workers = pool.get(agents);
  settle(collectGarbage);
  const rss0 = resetPeak();
  const replies = workers.map((w) => pool.reply(w));
  // idle: phases driven from here
  let held = 0;
  let freedAt = 0;
  const events: { event: string; t: number }[] = [];
  const onEvent = (e: { event: string; id: number; t: number }) => events.push(e);
  pool.events.push(onEvent);
  try {
    workers.forEach((w, id) => {
      const msg: ProgramRun = {
        cmd: 'run',
        program: spec.program,
        id,
        agents,
        params: spec.params,
        handle: heap?.handle ?? null,
        ctl,
        rings,
        shared,
        ports: wiring ? wiring.ports[id] : { in: null, out: null },
        profile,
      };
      w.postMessage(msg, wiring ? wiring.transfer[id] : []);
    });
    const deadline = Date.now() + (spec.params.ms ?? 0) + 120_000;
    let idleExtra: Record<string, number | null> = {};
    if (spec.program === 'idle') {
      const waitEvent = async (name: string): Promise<number> => {
        for (;;) {
          const e = events.find((x) => x.event === name);
          if (e) return e.t;
          if (Date.now() > deadline) throw new Error(`no ${name} event`);
          await sleep(1);
        }
      };
      held = await waitEvent('held');
      void held;
      const rssHeld = rssNow();
      sample();
      workers.forEach((w) => w.postMessage({ cmd: 'signal', what: 'free' }));
      freedAt = await waitEvent('freed');
      const bytes = spec.params.bytes;
      let half: number | null = null;
      let ninety: number | null = null;
      let rssEnd = rssNow();
      const clock = () => performance.timeOrigin + performance.now();
      while (clock() - freedAt < spec.params.window) {
        const r = rssNow();
        const fell = rssHeld - r;
        const t = clock() - freedAt;
        if (half === null && fell >= bytes * 0.5) half = t;
        if (ninety === null && fell >= bytes * 0.9) ninety = t;
        rssEnd = r;
        if (ninety !== null) break;
        await sleep(spec.params.sample);
      }
      workers.forEach((w) => w.postMessage({ cmd: 'signal', what: 'end' }));
      idleExtra = {
        rssHeld: rssHeld - rss0,
        rssAfter: rssEnd - rss0,
        returnedFraction: (rssHeld - rssEnd) / bytes,
        halfMs: half,
        ninetyMs: ninety,
      };
    } else if (spec.timed) {
      const go = Atomics.waitAsync(ctlI32, K_GO, 0, 60_000);
      if (go.async) await go.value;
      await sleep(spec.params.ms);
      Atomics.store(ctlI32, K_STOP, 1);
      for (let i = 0; i < K_WORDS; i++) Atomics.notify(ctlI32, i);
    }
    const timeout = sleep(Math.max(0, deadline - Date.now())).then(() => null);
    const reports = await Promise.race([Promise.all(replies), timeout]);
    if (reports === null) {
      await pool.close();
      return { ok: false, error: 'no answer within the time limit (workers terminated)' };
    }
    const peak = peakRss();
    const failed = reports.find((r) => r.error);
    if (failed) return { ok: false, error: `agent ${failed.id ?? '?'}: ${failed.error}` };
    const t0 = Math.min(...reports.map((r) => r.t0));
    const t1 = Math.max(...reports.map((r) => r.t1));
    const ops = spec.opsFrom === 'last' ? reports[agents - 1].ops : reports.reduce((n, r) => n + r.ops, 0);
    const bad = reports.reduce((n, r) => n + r.bad, 0);
    const extra: Record<string, number | null> = { ...idleExtra };
    for (const r of reports) for (const [k, v] of Object.entries(r.extra)) extra[k] = v;
    if (spec.program === 'idle') {
      extra.holdSeconds = (reports[0].t1 - reports[0].t0) / 1000;
      extra.freeSeconds = (reports[1].t1 - reports[1].t0) / 1000;
      return { ok: true, sample: { value: extra.halfMs ?? null, seconds: extra.freeSeconds, ops: spec.params.count, bad, peakRssBytes: peak - rss0, extra } };
    }
    const seconds = (t1 - t0) / 1000;
    let cpu: CpuSplit | undefined;
    if (profile) {
      cpu = emptySplit();
      for (const r of reports) if (r.cpu !== null) addSplit(cpu, r.cpu);
    }
    return { ok: true, sample: { value: ops / seconds, seconds, ops, bad, peakRssBytes: peak - rss0, extra, cpu } };
  } catch (err) {
    return { ok: false, error: errorText(err) };
  } finally {
    pool.events.splice(pool.events.indexOf(onEvent), 1);
    heap = null;
  }
}

export function runNativeProgram(spec: ProgramSpec, bin: string): RunOutcome {
  const params: Record<string, number> = { ...spec.params, agents: Math.max(1, spec.agents) };
  const r = runNative(bin, spec.program, params, (spec.params.ms ?? 0) + 120_000);
  if (!r.ok) return { ok: false, error: r.error ?? 'failed' };
  const peakRssBytes = Math.max(0, r.maxrss - r.rss0);
  if (spec.program === 'idle') {
    const held = r.rssHeld as number;
    const after = r.rssAfter as number;
    const extra = {
      rssHeld: held - r.rss0,
      rssAfter: after - r.rss0,
      returnedFraction: (held - after) / spec.params.bytes,
      halfMs: (r.halfMs as number | null) ?? null,
      ninetyMs: (r.ninetyMs as number | null) ?? null,
      holdSeconds: r.holdSeconds as number,
      freeSeconds: r.freeSeconds as number,
    };
    return { ok: true, sample: { value: extra.halfMs, seconds: r.seconds, ops: r.ops, bad: r.bad, peakRssBytes, extra } };
  }
  const extra: Record<string, number | null> = {};
  for (const k of ['distinctAddresses', 'rssPhasePeak', 'rssAfter', 'mallocNs', 'freeNs']) if (typeof r[k] === 'number') extra[k] = (r[k] as number) - (k.startsWith('rss') ? r.rss0 : 0);
  if (spec.metric === 'bytes') {
    return { ok: true, sample: { value: peakRssBytes, seconds: r.seconds, ops: r.ops, bad: r.bad, peakRssBytes, extra: { ...extra, opsPerSecond: r.ops / r.seconds } } };
  }
  return { ok: true, sample: { value: r.ops / r.seconds, seconds: r.seconds, ops: r.ops, bad: r.bad, peakRssBytes, extra } };
}

/**
 * A single-agent run of a Paddock peer (`runSingle`) recorded by the CPU profiler on this thread: the run's
 * figure and where its time went. `allocatorUrl` is the allocator module the adapter's heap comes from.
 */
export async function runSingleProfiled(spec: ProgramSpec, peer: string, adapter: Adapter, loops: SingleLoops, allocatorUrl: string): Promise<RunOutcome> {
  const rec = await startProfile();
  let out: RunOutcome;
  try {
    out = runSingle(spec, peer, adapter, loops);
  } catch (err) {
    rec.session.disconnect();
    throw err;
  }
  const cpu = await stopProfile(rec, allocatorUrl, singleWindow.t0, singleWindow.t1);
  return out.ok ? { ok: true, sample: { ...out.sample, cpu } } : out;
}

/** The last single-agent run's start and end, ms on the shared clock (what a profiled run splits). */
const singleWindow = { t0: 0, t1: 0 };
const clockMs = (): number => performance.timeOrigin + performance.now();

export function runSingle(spec: ProgramSpec, peer: string, adapter: Adapter | null, loops: SingleLoops | null): RunOutcome {
  const p = spec.params;
  // build-then-free draws its sizes and its order before the clock starts, as its C twin does.
  const draws = spec.program === 'build-then-free' ? buildThenFreeDraws(p.blocks, p.min, p.max, p.seed) : null;
  settle(collectGarbage);
  const rss0 = resetPeak();
  let res: SingleResult;
  singleWindow.t0 = clockMs();
  const t0 = process.hrtime.bigint();
  try {
    if (adapter === null || loops === null) {
      if (spec.program === 'build-then-free') throw new Error('no plain-JS form');
      res =
        spec.program === 'binary-trees'
          ? binaryTreesJs(p.depth)
          : classNoReuseJs(p.bytes, [p.a, p.b, p.c], sample);
    } else {
      adapter.setup(spec.program === 'binary-trees' ? 256 * MiB : spec.program === 'build-then-free' ? spec.heapBytes : 1024 * MiB);
      res =
        spec.program === 'binary-trees'
          ? loops['binary-trees'](adapter, p.depth)
          : spec.program === 'build-then-free'
            ? loops['build-then-free'](adapter, draws!.sizes, draws!.order, p.rounds)
            : loops['class-no-reuse'](adapter, p.bytes, [p.a, p.b, p.c], sample);
    }
  } catch (err) {
    return { ok: false, error: `${peer} threw: ${errorText(err)}` };
  } finally {
    try {
      adapter?.teardown();
    } catch {
      // nothing to add
    }
  }
  const t1 = process.hrtime.bigint();
  singleWindow.t1 = clockMs();
  const peak = peakRss() - rss0;
  if (res.error) return { ok: false, error: res.error };
  const seconds = res.seconds ?? Number(t1 - t0) / 1e9;
  if (spec.metric === 'bytes') {
    return { ok: true, sample: { value: peak, seconds, ops: res.ops, bad: res.bad, peakRssBytes: peak, extra: { opsPerSecond: res.ops / seconds } } };
  }
  return { ok: true, sample: { value: res.ops / seconds, seconds, ops: res.ops, bad: res.bad, peakRssBytes: peak, extra: { ...res.extra } } };
}
