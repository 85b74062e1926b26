/**
 * The departures program: agents that leave the heap give their memory back to the OS. Each scenario runs
 * in a fresh process (`departures-scenario.js`), so each baseline is clean, with native page return:
 *
 * - exit: a worker allocates and touches a payload of mixed class blocks (32 B .. 64 KiB), frees it all,
 *   goes idle and ends by itself. Run twice: with the main thread idling, and with it doing nothing (then
 *   only the departing agent's own leave can return the memory).
 * - piscina: a pool (minThreads 0, maxThreads 2, idleTimeout 300 ms) whose task module attaches once per
 *   worker; 50 tasks return 512 result blocks of 1 KiB each; the main thread reads and frees them (its heap
 *   object watches every worker its thread creates) and idles; the pool retires its workers (terminates
 *   them) and the heap object reaps them.
 *   The main agent's live bytes must be 0 at the end.
 * - terminate: a worker holds the payload and blocks; the parent watched it with `releaseLive` and
 *   terminates it.
 *
 * Each must bring resident memory back to at most the bound above its pre-worker baseline: 1 s after the
 * worker's exit (3 s after the pool's last worker for piscina). Exit 0 on pass, 1 on fail; the last line is
 * the verdict.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadNativePageReturn, nativePageReturnError } from '@paddock/platform';
import { RESULT_PREFIX, SCENARIO_TITLES, emptyResult, type Scenario, type ScenarioResult } from './departures-protocol.js';
import { numberArg, splitFlag } from './args.js';
import type { StressProgram } from './program.js';

const MiB = 1024 * 1024;

/** The names `--only` takes, and the scenario processes each one runs. */
const GROUPS: Record<string, Scenario[]> = {
  exit: ['exit-idle', 'exit-quiet'],
  piscina: ['piscina'],
  terminate: ['terminate'],
};

/** What one run does; {@link parseDeparturesArgs} builds it from the command line. */
export interface DeparturesOptions {
  only: string[];
  /** Payload of the exit and terminate workers, MiB. */
  mib: number;
  /** How far above its baseline each scenario's resident memory may end, MiB. */
  boundMiB: number;
  /** Limit for each scenario process, ms. */
  scenarioTimeoutMs: number;
}

export const DEPARTURES_DEFAULTS: DeparturesOptions = {
  only: Object.keys(GROUPS),
  mib: 100,
  boundMiB: 10,
  scenarioTimeoutMs: 60_000,
};

export const DEPARTURES_USAGE = `usage: node apps/stress/dist/main.js departures [--only exit,piscina,terminate] [--mib N] [--bound N]
  --only LIST   the scenarios to run, comma-separated (default all): exit (a worker frees its payload and
                ends by itself; run with the main thread idling and not), piscina (a pool's retired workers,
                25 MiB of result blocks freed by the main thread), terminate (a worker terminated while
                holding its payload, watched with releaseLive)
  --mib N       payload of the exit and terminate workers in MiB (default 100)
  --bound N     how far above its baseline resident memory may end, in MiB (default 10)
Each scenario runs in a fresh process with native page return (the program fails without it).`;

/** Parses the program's arguments. @throws Error with a message for the user on a bad argument. */
export function parseDeparturesArgs(args: string[]): DeparturesOptions {
  const o = { ...DEPARTURES_DEFAULTS };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const [flag, inline] = splitFlag(a);
    const value = () => (inline !== undefined ? inline : args[++i]);
    if (flag === '--only') {
      const v = value();
      const names = (v ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
      const bad = names.filter((n) => !(n in GROUPS));
      if (names.length === 0 || bad.length > 0) {
        throw new Error(`--only takes scenarios from ${Object.keys(GROUPS).join(', ')}, got ${v === undefined ? 'nothing' : JSON.stringify(v)}`);
      }
      o.only = Object.keys(GROUPS).filter((n) => names.includes(n));
    } else if (flag === '--mib') {
      const n = numberArg(flag, value(), 1, 1024);
      if (!Number.isInteger(n)) throw new Error(`--mib needs an integer, got ${n}`);
      o.mib = n;
    } else if (flag === '--bound') o.boundMiB = numberArg(flag, value(), 0, 1024);
    else throw new Error(`unknown argument ${JSON.stringify(a)}`);
  }
  return o;
}

const mib = (n: number) => (n / MiB).toFixed(1);
const signed = (n: number) => `${n >= 0 ? '+' : '-'}${mib(Math.abs(n))}`;

interface Judged {
  result: ScenarioResult;
  delta: number;
  ok: boolean;
  /** Why it failed, when it did. */
  why: string[];
}

/** Runs one scenario process and reads its result line. */
function runScenario(scenario: Scenario, o: DeparturesOptions): ScenarioResult {
  const script = fileURLToPath(new URL('./departures-scenario.js', import.meta.url));
  const run = spawnSync(process.execPath, [script, scenario, '--mib', String(o.mib)], { encoding: 'utf8', timeout: o.scenarioTimeoutMs });
  const line = (run.stdout ?? '')
    .split('\n')
    .reverse()
    .find((l) => l.startsWith(RESULT_PREFIX));
  if (line !== undefined) return JSON.parse(line.slice(RESULT_PREFIX.length)) as ScenarioResult;
  const how = run.error
    ? `${run.error.message}${run.signal ? ` (${run.signal})` : ''}`
    : `exit ${run.status}${run.signal ? `, signal ${run.signal}` : ''}`;
  const tail = `${run.stdout ?? ''}${run.stderr ?? ''}`.trim().split('\n').slice(-6).join(' | ');
  throw new Error(`the ${scenario} process printed no result (${how})${tail ? `: ${tail}` : ''}`);
}

function judge(r: ScenarioResult, o: DeparturesOptions): Judged {
  const delta = r.after - r.baseline;
  const why: string[] = [];
  if (r.error !== null) why.push(r.error);
  else {
    if (delta > o.boundMiB * MiB) why.push(`${signed(delta)} MiB above the baseline (bound ${o.boundMiB})`);
    if (r.workersExited < r.workers || r.workers === 0) why.push(`${r.workersExited} of ${r.workers} workers exited`);
    if (r.scenario === 'piscina') {
      if (r.mainLiveBytes !== 0) why.push(`main agent's live bytes ${r.mainLiveBytes}, expected 0`);
      if (r.damaged !== 0) why.push(`${r.damaged} result blocks damaged`);
    }
  }
  return { result: r, delta, ok: why.length === 0, why };
}

function row(j: Judged, o: DeparturesOptions): string {
  const r = j.result;
  const title = SCENARIO_TITLES[r.scenario].padEnd(22);
  if (r.error !== null && r.baseline === 0) return `  ${title} FAIL: ${r.error}`;
  return (
    `  ${title} baseline ${mib(r.baseline).padStart(6)}  peak ${mib(r.peak).padStart(6)}  at exit ${mib(r.atExit).padStart(6)}  ` +
    `after ${mib(r.after).padStart(6)}  delta ${signed(j.delta).padStart(6)}  bound ${String(o.boundMiB).padStart(2)}  ${j.ok ? 'ok' : `FAIL (${j.why.join('; ')})`}`
  );
}

function details(j: Judged): string {
  const r = j.result;
  const arenas = r.carvedArenas === null ? 'unknown' : String(r.carvedArenas);
  return (
    `  ${''.padEnd(22)} ${r.blocks} blocks, ${mib(r.payloadBytes)} MiB payload; ${r.workersExited} of ${r.workers} worker${r.workers === 1 ? '' : 's'} exited; ` +
    `committed ${mib(r.committedBaseline)} -> ${mib(r.committedPeak)} -> ${mib(r.committedAfter)} MiB; arenas carved ${arenas}; ` +
    `main thread's V8 heap ${mib(r.jsHeapBaseline)} -> ${mib(r.jsHeapAfter)} MiB; ` +
    `main agent: live ${r.mainLiveBytes} B, ${r.mainArenas} arena${r.mainArenas === 1 ? '' : 's'}, ${r.mainAdoptedSlots} adopted, cache ${r.mainCacheBytes} B`
  );
}

/** Runs the program; resolves with the exit code (0 pass, 1 fail). Writes the report with `out`. */
export async function runDepartures(
  options: DeparturesOptions,
  out: (line: string) => void = (l) => process.stdout.write(l + '\n'),
  progress: NodeJS.WriteStream = process.stderr,
): Promise<number> {
  const o = options;
  const t0 = performance.now();
  const verdict = (pass: boolean, detail: string) => `departures: ${pass ? 'PASS' : 'FAIL'} - ${detail}`;
  if (loadNativePageReturn() === null) {
    out(verdict(false, `native page return is not available (${nativePageReturnError() ?? 'unknown reason'}); these figures need it: build the addon with pnpm install, and do not set PADDOCK_PAGE_RETURN=none`));
    return 1;
  }
  const scenarios = o.only.flatMap((n) => GROUPS[n]!);
  out(
    `departures: ${scenarios.length} scenario${scenarios.length === 1 ? '' : 's'}, each in a fresh process with native page return; ` +
      `payload ${o.mib} MiB per exit/terminate worker, 25 MiB of pool results; pass: resident memory ends at most ${o.boundMiB} MiB above the pre-worker baseline`,
  );
  out('  figures in MiB of resident memory (RSS): after = 1 s after the exit (3 s after the last pool worker)');
  const judged: Judged[] = [];
  for (const s of scenarios) {
    progress.write(`departures: running ${SCENARIO_TITLES[s]}...\n`);
    let r: ScenarioResult;
    try {
      r = runScenario(s, o);
    } catch (e) {
      r = { ...emptyResult(s), error: (e as Error).message };
    }
    const j = judge(r, o);
    judged.push(j);
    out(row(j, o));
    if (r.baseline !== 0) out(details(j));
  }
  const failed = judged.filter((j) => !j.ok);
  const measured = judged.filter((j) => j.result.error === null);
  const worst = measured.length > 0 ? measured.reduce((a, b) => (b.delta > a.delta ? b : a)) : null;
  const secs = `${((performance.now() - t0) / 1000).toFixed(1)} s`;
  if (failed.length === 0) {
    out(
      verdict(
        true,
        `${judged.length} scenario${judged.length === 1 ? '' : 's'}: resident memory back within ${o.boundMiB} MiB of each baseline` +
          (worst ? ` (largest ${signed(worst.delta)} MiB, ${SCENARIO_TITLES[worst.result.scenario]})` : '') +
          `; ${secs}`,
      ),
    );
    return 0;
  }
  out(
    verdict(
      false,
      `${failed.length} of ${judged.length} scenario${judged.length === 1 ? '' : 's'} failed: ` +
        failed.map((j) => `${SCENARIO_TITLES[j.result.scenario]}: ${j.why.join('; ')}`).join(', ') +
        `; ${secs}`,
    ),
  );
  return 1;
}

export const departures: StressProgram = {
  name: 'departures',
  summary: 'workers that end by themselves, are retired by a piscina pool, or are terminated: resident memory must come back to its baseline',
  usage: DEPARTURES_USAGE,
  run: (args) => runDepartures(parseDeparturesArgs(args)),
};
