/**
 * The programs: the Pony arena's own programs re-created, the classic pool's pathologies, and the
 * standard allocator workloads (mimalloc-bench's shapes) re-implemented for workers, each run by every
 * peer that can run it, in interleaved rounds (the order of the peers rotates round by round), with the
 * same figure kept per run: the program's rate (or time), its peak resident memory, and its extras.
 *
 * Peers: both Paddock backends (`paddock` = pool_arena, `paddock-classic` = pool_classic), plain
 * JavaScript where the program has a plain-JS form (`js`), and the native references (`glibc`,
 * `mimalloc`: the same program in C, `native/programs.c`). The single-agent programs also run the
 * in-process peers: the floor, @thi.ng/malloc, AssemblyScript's TLSF and wasi-libc's dlmalloc.
 */
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { Adapter } from './adapter.js';
import { runNative } from './native-run.js';
import { peakRss, resetPeak, rssNow, sample, settle } from './peak.js';
import type { CreateHeap } from './peers.js';
import { errorText } from './peers.js';
import { K_GO, K_MAILBOX, K_STOP, K_WORDS, type ProgramReport, type ProgramRun, ringBytes, type WorkerMode } from './program-protocol.js';
import { collectGarbage } from './runner.js';
import { binaryTreesJs, binaryTreesLoop, classNoReuseJs, classNoReuseLoop, type SingleResult } from './single.js';
import { recompile } from './workloads.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

export type Metric = 'rate' | 'ms' | 'bytes';

export interface ProgramSpec {
  readonly name: string;
  /** The program the worker and the C file know it by. */
  readonly program: string;
  readonly group: 'pony' | 'pathology' | 'standard';
  /** 0: single-agent (main thread, adapters). */
  readonly agents: number;
  readonly params: Readonly<Record<string, number>>;
  /** Main sets the stop word after params.ms; otherwise the program does a fixed amount of work. */
  readonly timed: boolean;
  /** What the figure is: a rate (higher is better), a time in ms or bytes (lower is better). */
  readonly metric: Metric;
  readonly unit: string;
  /** Which agents' ops count: all, or the last one (the consumer). */
  readonly opsFrom: 'all' | 'last';
  readonly js: boolean;
  readonly heapBytes: number;
  readonly rings: readonly number[];
  readonly sharedBytes: number;
  readonly what: string;
}

export interface ModeSizes {
  readonly ms: number;
  readonly full: boolean;
}

/** The programs, sized for this machine (2 cores: 2 agents, 3 for producer-consumer). */
export function programSpecs(m: ModeSizes): ProgramSpec[] {
  const ms = m.ms;
  const f = m.full;
  const base = { timed: true, metric: 'rate' as Metric, opsFrom: 'all' as const, js: false, heapBytes: GiB, rings: [] as number[], sharedBytes: 0 };
  const specs: ProgramSpec[] = [
    {
      ...base,
      name: 'binary-trees',
      program: 'binary-trees',
      group: 'pony',
      agents: 2,
      timed: false,
      js: true,
      params: { depth: f ? 16 : 13 },
      unit: 'nodes/s',
      what: 'build and hold a deep tree of 32 B nodes: agent 0 builds a stretch tree of depth D+1 and a long-lived one of depth D; the 2^(D-d+4) trees of each depth d = 4..D (step 2) are shared out between the agents, each built, walked and freed',
    },
    {
      ...base,
      name: 'binary-trees-1',
      program: 'binary-trees',
      group: 'pony',
      agents: 0,
      timed: false,
      js: true,
      params: { depth: f ? 12 : 10 },
      unit: 'nodes/s',
      what: 'binary-trees with one agent, every in-process peer',
    },
    {
      ...base,
      name: 'producer-consumer',
      program: 'producer-consumer',
      group: 'pony',
      agents: 3,
      opsFrom: 'last',
      js: true,
      params: { producers: 2, batch: 32, min: 4096, max: 4096, ms },
      rings: [1024, 1024],
      unit: 'payloads/s',
      what: '2 producers allocate 4 KiB payloads (first and last word written) and hand them over in batches of 32 through a ring each; 1 consumer checks and frees them',
    },
    {
      ...base,
      name: 'message-ubench',
      program: 'message-ubench',
      group: 'pony',
      agents: 2,
      js: true,
      params: { window: 64, size: 64, ms },
      rings: [128, 128],
      unit: 'messages/s',
      what: '2 agents ping-pong 64 B messages, 64 in flight: each message received is read and freed, and answered with a new one',
    },
    ...[
      [16, 8],
      [128, 32],
      [512, 64],
    ].map(
      ([burst, scratch]): ProgramSpec => ({
        ...base,
        name: `mixed-churn-${burst}/${scratch}`,
        program: 'mixed-churn',
        group: 'pony',
        agents: 2,
        js: true,
        params: { burst, scratch, inflight: 2, ms },
        rings: [3 * burst, 3 * burst],
        unit: 'blocks/s',
        what: `a ring of 2 agents: each frees an incoming burst of ${burst} of the other's 4 KiB blocks, allocates ${scratch} 4 KiB scratch blocks, sends a burst of ${burst} new blocks on, then frees its scratch (2 bursts in flight per agent)`,
      }),
    ),
    ...[
      ['idle-100m', 100 * MiB, GiB],
      ['idle-1g', GiB, 2 * GiB],
    ].map(
      ([name, bytes, heap]): ProgramSpec => ({
        ...base,
        name: name as string,
        program: 'idle',
        group: 'pony',
        agents: 2,
        timed: false,
        js: true,
        metric: 'ms',
        heapBytes: heap as number,
        params: { bytes: bytes as number, block: 512 * KiB, count: (bytes as number) / (512 * KiB), window: f ? 5000 : 2000, sample: 10 },
        sharedBytes: ((bytes as number) / (512 * KiB)) * 4,
        unit: 'ms to return half',
        what: `agent A allocates ${(bytes as number) >= GiB ? '1 GiB' : '100 MiB'} in 512 KiB blocks and writes every page; agent B frees them all; both go idle (Paddock: startIdle, the idle tick; C: the threads sleep; JS: nothing to do). Resident memory is sampled every 10 ms from B's last free: the time until it fell by half the payload, and by 90%`,
      }),
    ),
    {
      ...base,
      name: 'large-cross-free',
      program: 'large-cross-free',
      group: 'pathology',
      agents: 2,
      timed: false,
      heapBytes: 2 * GiB,
      params: { rounds: 100, size: 4 * MiB },
      rings: [2],
      unit: 'rounds/s',
      what: 'a large block freed on another agent: 100 rounds of A allocating 4 MiB and writing every page, B freeing it (Paddock: and flush()ing), at most 2 in flight; distinct addresses and peak memory are the point',
    },
    {
      ...base,
      name: 'class-no-reuse',
      program: 'class-no-reuse',
      group: 'pathology',
      agents: 0,
      timed: false,
      js: true,
      metric: 'bytes',
      params: { bytes: f ? 64 * MiB : 32 * MiB, a: 64, b: 1024, c: 16384 },
      unit: 'peak RSS',
      what: 'memory of one size class never serving another: the same bytes allocated (every page written) and freed in 64 B blocks, then 1 KiB, then 16 KiB; peak resident memory against the bytes',
    },
    ...[4096, 16384, 65536].map(
      (live): ProgramSpec => ({
        ...base,
        name: `mixed-sizes-${live / 1024}k`,
        program: 'mixed-sizes',
        group: 'pathology',
        agents: 2,
        js: true,
        heapBytes: live >= 65536 ? 2 * GiB : GiB,
        params: { live, min: 16, max: 65536, seed: 0x5eed, ms },
        unit: 'ops/s',
        what: `mixed sizes at ${live / 1024}k blocks: ${live / 1024}k live blocks (half per agent) of log-uniform sizes 16 B..64 KiB, each step frees a random one of the agent's blocks and allocates a new size`,
      }),
    ),
    {
      ...base,
      name: 'larson',
      program: 'larson',
      group: 'standard',
      agents: 2,
      params: { slots: 1000, min: 8, max: 1000, round: 10000, ms },
      sharedBytes: 3 * 1000 * 4,
      unit: 'ops/s',
      what: 'larson (bench.sh: larson 5 8 1000 5000 100 4141 N), scaled: each agent replaces random blocks (8..1000 B) in an array of 1,000; every 10,000 steps it swaps its array for the one in a mailbox (3 arrays, 2 agents), so most frees are of another agent\'s blocks',
    },
    {
      ...base,
      name: 'xmalloc-test',
      program: 'xmalloc-test',
      group: 'standard',
      agents: 2,
      opsFrom: 'last',
      params: { producers: 1, batch: 32, min: 8, max: 64, ms },
      rings: [1024],
      unit: 'blocks/s',
      what: 'xmalloc-test (bench.sh: xmalloc-test -w N -t 5 -s 64), scaled: one agent allocates blocks of 8..64 B in batches of 32, the other frees them',
    },
    {
      ...base,
      name: 'mstress',
      program: 'mstress',
      group: 'standard',
      agents: 2,
      timed: false,
      params: { scale: f ? 100 : 50, iterations: f ? 20 : 8 },
      sharedBytes: 1000 * 4,
      unit: 'ops/s',
      what: 'mimalloc-bench stress (bench.sh: mstress N 50 25), scaled: per iteration each agent allocates 100*scale*(id+1) objects of 8..128 B (1% 10x larger, rare 32 KiB), retains half of as many more, frees 66% of the time, and swaps a random object with a 1,000-slot shared transfer array 25% of the time',
    },
    {
      ...base,
      name: 'rptest',
      program: 'rptest',
      group: 'standard',
      agents: 2,
      params: { count: 1000, opcount: 100, cross: 8, min: 16, max: 16000, ms },
      rings: [4096, 4096],
      unit: 'ops/s',
      what: 'rptest (bench.sh: rptest N 0 1 2 500 1000 100 8 16000), scaled: each loop allocates 1,000 blocks of 16..16000 B (log-uniform), replaces 100 at random, then frees them, except every 8th loop hands the set to the next agent to free',
    },
    {
      ...base,
      name: 'glibc-thread',
      program: 'glibc-thread',
      group: 'standard',
      agents: 2,
      js: true,
      params: { live: 8000, min: 4, max: 32768, seed: 0x5eed, ms },
      unit: 'ops/s',
      what: 'glibc bench-malloc-thread (bench.sh: glibc-thread N), scaled: each agent keeps 4,000 blocks of 4 B..32 KiB (log-uniform) and replaces a random one per step; no cross-agent frees',
    },
    {
      ...base,
      name: 'cache-scratch',
      program: 'cache-scratch',
      group: 'standard',
      agents: 2,
      timed: false,
      params: { iterations: 1000, objsize: 8, reps: f ? 20000 : 4000 },
      sharedBytes: 2 * 4,
      unit: 'objects/s',
      what: 'cache-scratch (bench.sh: cache-scratch 1 1000 1 2000000 N), scaled: the main thread allocates one 8 B object per agent; each agent frees it, then 1,000 times allocates an 8 B object, writes it reps times and frees it (passive false sharing)',
    },
  ];
  return specs;
}

// --- peers -----------------------------------------------------------------------------------------

export interface PaddockBackendPeer {
  readonly name: 'paddock' | 'paddock-classic';
  readonly url: string;
  readonly createHeap: CreateHeap;
}

export interface ProgramPeers {
  readonly paddock: PaddockBackendPeer[];
  /** glibc / mimalloc binaries (null: skipped, with the reason in `skipped`). */
  readonly native: { name: 'glibc' | 'mimalloc'; bin: string }[];
  /** In-process adapters for the single-agent programs: floor, thi.ng, as-tlsf, wasi-dlmalloc, paddock, paddock-classic. */
  readonly adapters: Adapter[];
  readonly js: boolean;
  /** Peers left out of the whole suite, and why. */
  readonly skipped: Record<string, string>;
}

export interface ProgramSample {
  /** The figure: ops per second (rate), ms (idle: to return half the payload; null when it did not within the window), bytes. */
  readonly value: number | null;
  readonly seconds: number;
  readonly ops: number;
  readonly bad: number;
  /** Peak resident memory of the run above its level at the start, bytes. */
  readonly peakRssBytes: number;
  readonly extra: Record<string, number | null>;
}

export interface ProgramCell {
  readonly peer: string;
  readonly samples: ProgramSample[];
  readonly warmup: ProgramSample[];
  error: string | null;
  skipped: string | null;
}

export interface ProgramResult {
  readonly spec: ProgramSpec;
  readonly cells: ProgramCell[];
}

export interface ProgramContext {
  readonly warmup: number;
  readonly rounds: number;
  /** idle programs: rounds (no warm-up: a round is mostly waiting). */
  readonly idleRounds: number;
  readonly only: ((name: string) => boolean) | null;
  readonly peerWanted: (name: string) => boolean;
  readonly progress: (text: string, key: string) => void;
  readonly started: number;
  /** Extra time a peer may take on a fixed-work program's first run before it is dropped from it. */
  readonly capMs: number;
}

/** A worker per agent, per mode, kept for all rounds. */
class Pool {
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

type RunOutcome = { ok: true; sample: ProgramSample } | { ok: false; error: string };

/** One run of a worker program (paddock or js). */
async function runWorkers(spec: ProgramSpec, pool: Pool, mode: WorkerMode, createHeap: CreateHeap | null): Promise<RunOutcome> {
  const agents = spec.agents;
  let heap: ({ handle: unknown; malloc(n: number): number; i32: Int32Array } & Record<string, unknown>) | null = null;
  const ctl = new SharedArrayBuffer(K_WORDS * 4 + 64);
  const ctlI32 = new Int32Array(ctl);
  const rings = mode === 'paddock' ? spec.rings.map((c) => new SharedArrayBuffer(ringBytes(c))) : [];
  const shared = spec.sharedBytes > 0 ? new SharedArrayBuffer(spec.sharedBytes) : null;
  if (mode === 'paddock') {
    try {
      heap = createHeap!({ maxBytes: spec.heapBytes }) as unknown as typeof heap;
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
    return { ok: true, sample: { value: ops / seconds, seconds, ops, bad, peakRssBytes: peak - rss0, extra } };
  } catch (err) {
    return { ok: false, error: errorText(err) };
  } finally {
    pool.events.splice(pool.events.indexOf(onEvent), 1);
    heap = null;
  }
}

function runNativeProgram(spec: ProgramSpec, bin: string): RunOutcome {
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
  for (const k of ['distinctAddresses', 'rssPhasePeak', 'rssAfter']) if (typeof r[k] === 'number') extra[k] = (r[k] as number) - (k.startsWith('rss') ? r.rss0 : 0);
  if (spec.metric === 'bytes') {
    return { ok: true, sample: { value: peakRssBytes, seconds: r.seconds, ops: r.ops, bad: r.bad, peakRssBytes, extra: { ...extra, opsPerSecond: r.ops / r.seconds } } };
  }
  return { ok: true, sample: { value: r.ops / r.seconds, seconds: r.seconds, ops: r.ops, bad: r.bad, peakRssBytes, extra } };
}

function runSingle(spec: ProgramSpec, peer: string, adapter: Adapter | null, loop: ((...args: never[]) => SingleResult) | null): RunOutcome {
  settle(collectGarbage);
  const rss0 = resetPeak();
  let res: SingleResult;
  const t0 = process.hrtime.bigint();
  try {
    if (adapter === null) {
      res =
        spec.program === 'binary-trees'
          ? binaryTreesJs(spec.params.depth)
          : classNoReuseJs(spec.params.bytes, [spec.params.a, spec.params.b, spec.params.c], sample);
    } else {
      adapter.setup(spec.program === 'binary-trees' ? 256 * MiB : 1024 * MiB);
      res =
        spec.program === 'binary-trees'
          ? (loop as unknown as typeof binaryTreesLoop)(adapter, spec.params.depth)
          : (loop as unknown as typeof classNoReuseLoop)(adapter, spec.params.bytes, [spec.params.a, spec.params.b, spec.params.c], sample);
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
  const peak = peakRss() - rss0;
  if (res.error) return { ok: false, error: res.error };
  const seconds = Number(t1 - t0) / 1e9;
  if (spec.metric === 'bytes') {
    return { ok: true, sample: { value: peak, seconds, ops: res.ops, bad: res.bad, peakRssBytes: peak, extra: { opsPerSecond: res.ops / seconds } } };
  }
  return { ok: true, sample: { value: res.ops / seconds, seconds, ops: res.ops, bad: res.bad, peakRssBytes: peak, extra: {} } };
}

/** Peers of a program, in table order, and the ones that cannot run it with the reason. */
export function peersFor(spec: ProgramSpec, peers: ProgramPeers): { run: string[]; skipped: Record<string, string> } {
  const run: string[] = [];
  const skipped: Record<string, string> = {};
  if (spec.agents === 0) {
    for (const a of peers.adapters) {
      if (a.name === 'thi.ng' && spec.program === 'class-no-reuse') {
        skipped[a.name] = 'its free walks the list of used blocks: half a million frees of 64 B blocks is quadratic (hours)';
        continue;
      }
      run.push(a.name);
    }
  } else {
    for (const p of peers.paddock) run.push(p.name);
  }
  if (peers.js) {
    if (spec.js) run.push('js');
    else skipped.js = 'no plain-JS form: blocks change hands between agents through shared memory, which JS objects cannot cross';
  }
  for (const n of peers.native) run.push(n.name);
  for (const [name, why] of Object.entries(peers.skipped)) skipped[name] = why;
  return { run, skipped };
}

export async function runPrograms(ctx: ProgramContext, specs: readonly ProgramSpec[], peers: ProgramPeers): Promise<ProgramResult[]> {
  const pools = new Map<string, Pool>();
  const poolFor = (key: string, mode: WorkerMode, url: string | null) => {
    let p = pools.get(key);
    if (!p) pools.set(key, (p = new Pool(mode, url)));
    return p;
  };
  const loops = new Map<string, { bt: typeof binaryTreesLoop; cnr: typeof classNoReuseLoop }>();
  for (const a of peers.adapters) {
    loops.set(a.name, { bt: recompile(binaryTreesLoop, `${a.name} bt`), cnr: recompile(classNoReuseLoop, `${a.name} cnr`) });
  }
  const results: ProgramResult[] = [];
  const plan = specs.map((spec) => ({ spec, peers: peersFor(spec, peers) }));
  const totalRuns = plan.reduce((n, x) => n + x.peers.run.length * (x.spec.program === 'idle' ? ctx.idleRounds : ctx.warmup + ctx.rounds), 0);
  let done = 0;
  try {
    for (const { spec, peers: pp } of plan) {
      const cells: ProgramCell[] = pp.run.map((peer) => ({ peer, samples: [], warmup: [], error: null, skipped: null }));
      for (const [peer, why] of Object.entries(pp.skipped)) cells.push({ peer, samples: [], warmup: [], error: null, skipped: why });
      const active = cells.filter((c) => c.skipped === null);
      const warm = spec.program === 'idle' ? 0 : ctx.warmup;
      const total = spec.program === 'idle' ? ctx.idleRounds : ctx.warmup + ctx.rounds;
      for (let r = 0; r < total; r++) {
        for (let k = 0; k < active.length; k++) {
          const cell = active[(k + r) % active.length];
          done++;
          if (cell.error !== null || cell.skipped !== null) continue;
          const phase = r < warm ? `warm-up ${r + 1}/${warm}` : `round ${r - warm + 1}/${total - warm}`;
          const secs = ((Date.now() - ctx.started) / 1000).toFixed(0);
          ctx.progress(`[${done}/${totalRuns}] ${spec.name} ${phase} ${cell.peer} (${secs} s)`, `${spec.name} ${r} ${cell.peer}`);
          const t = Date.now();
          let out: RunOutcome;
          const native = peers.native.find((n) => n.name === cell.peer);
          const pad = peers.paddock.find((p) => p.name === cell.peer);
          if (native) out = runNativeProgram(spec, native.bin);
          else if (spec.agents === 0) {
            const adapter = cell.peer === 'js' ? null : (peers.adapters.find((a) => a.name === cell.peer) ?? null);
            const l = adapter ? loops.get(adapter.name)! : null;
            out = runSingle(spec, cell.peer, adapter, l ? (spec.program === 'binary-trees' ? l.bt : l.cnr) : null);
          } else if (pad) out = await runWorkers(spec, poolFor(pad.name, 'paddock', pad.url), 'paddock', pad.createHeap);
          else out = await runWorkers(spec, poolFor('js', 'js', null), 'js', null);
          if (!out.ok) {
            cell.error = out.error;
            continue;
          }
          if (out.sample.bad !== 0) {
            cell.error = `${out.sample.bad} blocks failed their check (a block's words were not what was written)`;
            continue;
          }
          (r < warm ? cell.warmup : cell.samples).push(out.sample);
          // A fixed-work program that takes far too long on a peer: keep the one figure, stop running it.
          if (!spec.timed && spec.program !== 'idle' && Date.now() - t > ctx.capMs) {
            cell.skipped = `one run took ${((Date.now() - t) / 1000).toFixed(1)} s (cap ${ctx.capMs / 1000} s): dropped after it`;
            if (r >= warm) continue;
            cell.samples.push(out.sample);
          }
        }
      }
      results.push({ spec, cells });
    }
  } finally {
    await Promise.all([...pools.values()].map((p) => p.close()));
  }
  return results;
}
