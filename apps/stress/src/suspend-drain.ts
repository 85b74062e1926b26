/**
 * The suspend-drain stress program (suspend and drain: docs/design/allocator.md): 8 workers each allocate 32 blocks of 512 KiB and
 * touch them (128 MiB in all); one worker frees all 256 blocks, most of them other agents', while the
 * other 7 only idle. The frees travel home through the freeing agent's cache and chains, the owners drain
 * them on their idle ticks, and the idle return hands the pages back: resident memory must fall by at
 * least half the payload within the wait window, then climb back by at least half the payload when new
 * work arrives. `--rounds N` repeats the cycle (the new work of one round is the next round's payload, with
 * the freeing agent rotating). Exit 0 on pass, 1 on fail; the last line is the verdict. A hard timeout
 * ends the program (exit 1) whatever happens, so it can never hang CI.
 */
import { Worker } from 'node:worker_threads';
import { createHeap, type Heap } from '@paddock/allocator';
import { rss } from '@paddock/platform';
import type { AgentReport, ToMain, ToWorker } from './suspend-drain-protocol.js';
import { numberArg, splitFlag } from './args.js';
import type { StressProgram } from './program.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/** What one run does; {@link parseSuspendDrainArgs} builds it from the command line. */
export interface SuspendDrainOptions {
  rounds: number;
  workers: number;
  blocksPerWorker: number;
  blockBytes: number;
  /** How long one round waits for resident memory to fall, ms. */
  windowMs: number;
  /** RSS sampling period while waiting, ms. */
  sampleMs: number;
  /** Once the fall passed, stop sampling when resident memory has not fallen further for this long, ms. */
  settleMs: number;
  /** Hard limit for the whole run, ms. */
  timeoutMs: number;
}

export const SUSPEND_DRAIN_DEFAULTS: SuspendDrainOptions = {
  rounds: 1,
  workers: 8,
  blocksPerWorker: 32,
  blockBytes: 512 * KiB,
  windowMs: 5000,
  sampleMs: 50,
  settleMs: 600,
  timeoutMs: 60_000,
};

export const SUSPEND_DRAIN_USAGE = `usage: node apps/stress/dist/main.js suspend-drain [--rounds N] [--window S] [--timeout S]
  --rounds N    repeat the free / idle / new-work cycle N times (default 1)
  --window S    seconds each round waits for resident memory to fall (default 5)
  --timeout S   hard limit for the whole run in seconds (default max(60, 20 + 10 * rounds))`;

/** Parses the program's arguments. @throws Error with a message for the user on a bad argument. */
export function parseSuspendDrainArgs(args: string[]): SuspendDrainOptions {
  const o = { ...SUSPEND_DRAIN_DEFAULTS };
  let timeoutGiven = false;
  const num = numberArg;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const [flag, inline] = splitFlag(a);
    const value = () => (inline !== undefined ? inline : args[++i]);
    if (flag === '--rounds') {
      const n = num(flag, value(), 1, 1000);
      if (!Number.isInteger(n)) throw new Error(`--rounds needs an integer, got ${n}`);
      o.rounds = n;
    } else if (flag === '--window') o.windowMs = num(flag, value(), 0.1, 600) * 1000;
    else if (flag === '--timeout') {
      o.timeoutMs = num(flag, value(), 1, 86_400) * 1000;
      timeoutGiven = true;
    } else throw new Error(`unknown argument ${JSON.stringify(a)}`);
  }
  if (!timeoutGiven) o.timeoutMs = Math.max(60_000, 20_000 + 10_000 * o.rounds);
  return o;
}

const mib = (n: number) => (n / MiB).toFixed(1);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One worker, with its messages queued until someone asks for them. */
class Agent {
  readonly worker: Worker;
  private readonly inbox: ToMain[] = [];
  private readonly waiters: { kind: ToMain['kind']; resolve: (m: ToMain) => void; reject: (e: Error) => void }[] = [];
  private failure: Error | null = null;
  finished = false;

  constructor(
    readonly index: number,
    script: URL,
    workerData: unknown,
  ) {
    this.worker = new Worker(script, { workerData });
    this.worker.on('message', (m: ToMain) => {
      const k = this.waiters.findIndex((w) => w.kind === m.kind);
      if (k >= 0) this.waiters.splice(k, 1)[0]!.resolve(m);
      else this.inbox.push(m);
    });
    this.worker.on('error', (e) => this.fail(new Error(`worker ${index} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)));
    this.worker.on('exit', (code) => {
      if (!this.finished) this.fail(new Error(`worker ${index} exited (code ${code}) before it was done`));
    });
  }

  private fail(e: Error): void {
    if (this.failure === null) this.failure = e;
    for (const w of this.waiters.splice(0)) w.reject(this.failure);
  }

  send(m: ToWorker): void {
    this.worker.postMessage(m);
  }

  /** The next message of `kind` from this worker. */
  next<K extends ToMain['kind']>(kind: K): Promise<Extract<ToMain, { kind: K }>> {
    if (this.failure) return Promise.reject(this.failure);
    const k = this.inbox.findIndex((m) => m.kind === kind);
    if (k >= 0) return Promise.resolve(this.inbox.splice(k, 1)[0] as Extract<ToMain, { kind: K }>);
    return new Promise((resolve, reject) => this.waiters.push({ kind, resolve: resolve as (m: ToMain) => void, reject }));
  }

  request<K extends ToMain['kind']>(m: ToWorker, kind: K): Promise<Extract<ToMain, { kind: K }>> {
    const reply = this.next(kind);
    this.send(m);
    return reply;
  }
}

interface Sample {
  ms: number;
  rss: number;
  committed: number;
}

interface RoundResult {
  round: number;
  freer: number;
  peak: number;
  low: number;
  fell: number;
  fellMs: number | null;
  climbedTo: number;
  climbed: number;
  samples: Sample[];
  stats: AgentReport[];
  fallPassed: boolean;
  climbPassed: boolean;
}

/** Prints the samples, one row per change of at least 1 MiB in either figure (plus the first and last). */
function sampleTable(samples: Sample[], peak: number, out: (s: string) => void): void {
  out(`    ${'t ms'.padStart(6)}  ${'rss MiB'.padStart(8)}  ${'below peak'.padStart(10)}  ${'committed MiB'.padStart(13)}`);
  let last: Sample | null = null;
  let skipped = 0;
  samples.forEach((s, i) => {
    const show = last === null || i === samples.length - 1 || Math.abs(s.rss - last.rss) >= MiB || Math.abs(s.committed - last.committed) >= MiB;
    if (!show) {
      skipped++;
      return;
    }
    if (skipped > 0) out(`    ${''.padStart(6)}  (${skipped} sample${skipped === 1 ? '' : 's'} within 1 MiB)`);
    skipped = 0;
    out(`    ${String(Math.round(s.ms)).padStart(6)}  ${mib(s.rss).padStart(8)}  ${mib(peak - s.rss).padStart(10)}  ${mib(s.committed).padStart(13)}`);
    last = s;
  });
}

function statsTable(stats: AgentReport[], freer: number, out: (s: string) => void): void {
  out('    worker  agent  slot  arenas  live MiB  cache KiB  pending chain  retained KiB  stash  next tick');
  for (const s of stats) {
    out(
      `    ${(String(s.index) + (s.index === freer ? '*' : '')).padStart(6)}  ${String(s.agentId).padStart(5)}  ${String(s.ownerSlot).padStart(4)}  ` +
        `${String(s.arenas).padStart(6)}  ${mib(s.liveBytes).padStart(8)}  ${(s.cacheBytes / KiB).toFixed(0).padStart(9)}  ` +
        `${String(s.pendingChainObjects).padStart(13)}  ${(s.retention.retainedBytes / KiB).toFixed(0).padStart(12)}  ` +
        `${String(s.retention.stashEntries).padStart(5)}  ${String(s.nextTickMs).padStart(6)} ms`,
    );
  }
  out(`    (* the freeing worker; heap committed ${mib(stats[0]?.committedBytes ?? 0)} MiB as worker 0 read it)`);
}

/** Runs the program; resolves with the exit code (0 pass, 1 fail). Writes the report with `out`. */
export async function runSuspendDrain(
  options: SuspendDrainOptions,
  out: (line: string) => void = (l) => process.stdout.write(l + '\n'),
  progress: NodeJS.WriteStream = process.stderr,
): Promise<number> {
  const o = options;
  const payload = o.workers * o.blocksPerWorker * o.blockBytes;
  const need = payload / 2;
  const t0 = performance.now();
  let phase = 'starting';
  const agents: Agent[] = [];
  const results: RoundResult[] = [];
  const verdict = (pass: boolean, detail: string) => `suspend-drain: ${pass ? 'PASS' : 'FAIL'} - ${detail}`;

  const hard = setTimeout(() => {
    out(verdict(false, `hard timeout: not done after ${(o.timeoutMs / 1000).toFixed(0)} s (in ${phase}; ${results.length} of ${o.rounds} rounds measured)`));
    for (const a of agents) void a.worker.terminate();
    process.exit(1);
  }, o.timeoutMs);

  const resident = (): number => {
    const r = rss();
    if (r === null) throw new Error('this host does not report resident memory');
    return r;
  };

  let heap: Heap;
  try {
    heap = createHeap({ maxBytes: 2 * GiB, pageReturn: 'native' });
  } catch (e) {
    clearTimeout(hard);
    out(verdict(false, `cannot create a heap with native page return: ${(e as Error).message}`));
    return 1;
  }

  try {
    out(
      `suspend-drain: ${o.workers} workers x ${o.blocksPerWorker} blocks x ${o.blockBytes / KiB} KiB = ${mib(payload)} MiB payload; ` +
        `${o.rounds} round${o.rounds === 1 ? '' : 's'}; pass: resident falls >= ${mib(need)} MiB within ${o.windowMs / 1000} s, then climbs back >= ${mib(need)} MiB`,
    );
    out(`heap: ${heap.backend}, profile ${heap.profile}, page return ${heap.stats().pageReturn}, hard timeout ${o.timeoutMs / 1000} s`);

    phase = 'starting workers';
    const script = new URL('./suspend-drain-worker.js', import.meta.url);
    for (let i = 0; i < o.workers; i++) agents.push(new Agent(i, script, { handle: heap.handle, index: i }));
    const ready = await Promise.all(agents.map((a) => a.next('ready')));
    await sleep(100);
    const baseline = resident();
    out(`workers attached (agents ${ready.map((r) => r.agentId).join(', ')}); baseline rss ${mib(baseline)} MiB, committed ${mib(heap.space.committedBytes)} MiB`);

    const allocAll = async (): Promise<number[][]> => {
      const replies = await Promise.all(agents.map((a) => a.request({ cmd: 'alloc', count: o.blocksPerWorker, size: o.blockBytes }, 'allocated')));
      return replies.map((r) => r.ptrs);
    };

    phase = 'the first allocation';
    let held = await allocAll();
    let peak = resident();
    out(`allocated and touched: rss ${mib(peak)} MiB (+${mib(peak - baseline)} over baseline), committed ${mib(heap.space.committedBytes)} MiB`);

    for (let round = 1; round <= o.rounds; round++) {
      const freer = (round - 1) % o.workers;
      const ptrs = held.flat();
      out(`\nround ${round}: worker ${freer} frees all ${ptrs.length} blocks (${ptrs.length - held[freer]!.length} of them other workers'); the other ${o.workers - 1} idle`);
      phase = `round ${round}: the frees`;
      const start = performance.now(); // sample times count from the free command
      const freed = agents[freer]!.request({ cmd: 'free', ptrs }, 'freed');
      const idling = agents.filter((a) => a.index !== freer).map((a) => a.request({ cmd: 'idle' }, 'idling'));
      const f = await freed;
      await Promise.all(idling);
      held = [];
      out(
        `  freeing worker right after its frees: cache ${(f.stats.cacheBytes / KiB).toFixed(0)} KiB, ` +
          `pending chain objects ${f.stats.pendingChainObjects}, live ${mib(f.stats.liveBytes)} MiB`,
      );

      phase = `round ${round}: waiting for resident memory to fall`;
      const samples: Sample[] = [];
      let low = Infinity;
      let fellMs: number | null = null;
      let lowAt = start;
      let lastLine = 0;
      const tty = progress.isTTY === true;
      for (;;) {
        const now = performance.now();
        const s: Sample = { ms: now - start, rss: resident(), committed: heap.space.committedBytes };
        samples.push(s);
        if (s.rss < low - MiB || low === Infinity) lowAt = now;
        low = Math.min(low, s.rss);
        if (fellMs === null && peak - s.rss >= need) fellMs = s.ms;
        if (tty || now - lastLine >= 500) {
          lastLine = now;
          const line = `  round ${round}: ${(s.ms / 1000).toFixed(2)} s, rss ${mib(s.rss)} MiB, fallen ${mib(peak - s.rss)} of ${mib(need)} MiB needed, committed ${mib(s.committed)} MiB`;
          progress.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
        }
        if (s.ms >= o.windowMs) break;
        if (fellMs !== null && now - lowAt >= o.settleMs) break;
        await sleep(o.sampleMs);
      }
      if (tty) progress.write('\n');

      const stats = (await Promise.all(agents.map((a) => a.request({ cmd: 'stats' }, 'stats')))).map((m) => m.stats);
      out(`  resident memory from the free command on (${samples.length} samples every ${o.sampleMs} ms; peak ${mib(peak)} MiB):`);
      sampleTable(samples, peak, out);
      out('  worker stats after the wait:');
      statsTable(stats, freer, out);

      phase = `round ${round}: new work`;
      held = await allocAll();
      const climbedTo = resident();
      const r: RoundResult = {
        round,
        freer,
        peak,
        low,
        fell: peak - low,
        fellMs,
        climbedTo,
        climbed: climbedTo - low,
        samples,
        stats,
        fallPassed: peak - low >= need,
        climbPassed: climbedTo - low >= need,
      };
      results.push(r);
      out(
        `  round ${round}: peak ${mib(r.peak)} MiB, idle low ${mib(r.low)} MiB: fell ${mib(r.fell)} MiB` +
          (r.fellMs === null ? ` (needed ${mib(need)}: FAIL)` : ` (passed ${mib(need)} after ${Math.round(r.fellMs)} ms)`) +
          `; new work: rss ${mib(r.climbedTo)} MiB, climbed ${mib(r.climbed)} MiB ${r.climbPassed ? '(ok)' : `(needed ${mib(need)}: FAIL)`}`,
      );
      peak = climbedTo;
    }

    phase = 'finishing';
    await Promise.all(
      agents.map((a) => {
        a.finished = true;
        const done = a.request({ cmd: 'finish', freeOwn: true }, 'detached');
        const exited = new Promise<void>((r) => a.worker.once('exit', () => r()));
        return done.then(() => exited);
      }),
    );
    heap.tick(); // adopts the detached owners and drains what they left in transit
    heap.returnIdle();
    out(`\nall workers freed their blocks and detached; the main thread adopted them: committed ${mib(heap.space.committedBytes)} MiB, rss ${mib(resident())} MiB`);

    const pass = results.every((r) => r.fallPassed && r.climbPassed);
    const minFell = Math.min(...results.map((r) => r.fell));
    const minClimb = Math.min(...results.map((r) => r.climbed));
    const slowest = Math.max(...results.map((r) => r.fellMs ?? Infinity));
    const failed = results.filter((r) => !(r.fallPassed && r.climbPassed)).map((r) => r.round);
    const least = o.rounds === 1 ? '' : 'at least ';
    const reached = Number.isFinite(slowest)
      ? `reached at ${Math.round(slowest)} ms${o.rounds === 1 ? '' : ' in the slowest round'}`
      : `not reached within ${o.windowMs / 1000} s`;
    out(
      verdict(
        pass,
        `${o.rounds} round${o.rounds === 1 ? '' : 's'}, payload ${mib(payload)} MiB: resident fell by ${least}${mib(minFell)} MiB ` +
          `(need >= ${mib(need)}; ${reached}), climbed back by ${least}${mib(minClimb)} MiB (need >= ${mib(need)})` +
          (pass ? '' : `; failed round${failed.length === 1 ? '' : 's'} ${failed.join(', ')}`) +
          `; ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      ),
    );
    return pass ? 0 : 1;
  } catch (e) {
    out(verdict(false, `error in ${phase}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));
    await Promise.all(agents.map((a) => a.worker.terminate()));
    return 1;
  } finally {
    clearTimeout(hard);
  }
}

export const suspendDrain: StressProgram = {
  name: 'suspend-drain',
  summary: '8 workers x 32 x 512 KiB freed by one worker while the others idle: resident memory must fall, then climb back',
  usage: SUSPEND_DRAIN_USAGE,
  run: (args) => runSuspendDrain(parseSuspendDrainArgs(args)),
};
