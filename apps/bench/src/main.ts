/**
 * @paddock/bench: Paddock side by side with its peers, in one run. `pnpm bench` at the root.
 *
 * Peers (`peers/`, one file each, listed in `peers/index.ts`): `floor` (bare segregated free lists over a
 * typed array, the least a JS allocator can cost), `thi.ng` (@thi.ng/malloc, the most used JS allocator),
 * `as-tlsf` and `wasi-dlmalloc` (allocators compiled to wasm at set-up), `paddock`, `paddock-classic` and
 * `paddock-global` (@paddock/allocator's three backends, skipped with a reason while they cannot load), `js` (plain
 * JavaScript) and `glibc`, `mimalloc` (the native references, the same workloads in C).
 *
 * Workloads (`workloads/`, listed in `workloads/index.ts`): `pair` (malloc(32)+free, LIFO) and
 * `churn-<live>` (free a random live block, malloc a random 16..4096 B into its slot) at 1k, 4k, 16k and 64k
 * live, then the size sweep `sweep-<size>` (fixed-size churn, 32 B to 16 MiB), `hold-<size>` (hold K blocks,
 * free them all: time and memory), `cross-32` (32 B blocks malloc'ed in one worker and freed in another,
 * against plain JS), `realloc` (growth chains 64 KiB -> 64 MiB at profile rungs 1, 3, 5 and 10: time against
 * memory kept), the programs (Pony's, the classic pool's pathologies, mimalloc-bench's shapes) and `scopes`
 * (the arena, a scope per call and the global pool on the same calls, against the arena) and `snapshots` (what
 * `heap.snapshot()` costs on a 1 GiB heap, and what one every 100 ms costs two churning agents), and `capacity` (how
 * much of a 1 GiB and a 4 GiB heap each backend hands out: one size at a time, one block by malloc, one by realloc). Rounds
 * are interleaved across peers, each batch on a fresh allocator instance; medians, intervals and ratios of
 * the same run go to tables on stdout and, with every sample, to results/latest.json. Paddock's targets are
 * checked here: a pair <= 10 ns; churn <= 1.5x the floor and below thi.ng; the programs' own.
 *
 * This file runs them: set-up, self-check, every workload, the failures they saw, their reports, the JSON.
 * Options: see `options.ts` (`--help`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, relative } from 'node:path';
import { commandLine, offers, type PeerEntry, type RunContext } from './context.js';
import { collectGarbage, peakMethod } from './memory.js';
import { fail, parseArgs } from './options.js';
import { arenaLargeMax } from './peers/paddock.js';
import { PADDOCK_BIG_BYTES } from './peers/paddock-heap.js';
import { stderrProgress } from './progress.js';
import { select, type Selection } from './selection.js';
import { buildPeers, loadPeers, setupJson, setupLine } from './setup.js';
import { SWEEP_LIVE_BYTES, SWEEP_SIZES } from './timed-loops.js';
import { checkPeers, FULL_CHECK, QUICK_CHECK } from './verify.js';
import { WORKLOADS } from './workloads/index.js';
import { programSpecs } from './workloads/program-specs.js';
import { programTargets, targetLines } from './workloads/program-targets.js';
import { programs } from './workloads/programs.js';
import { suiteRounds } from './workloads/rounds.js';
import { timed } from './workloads/timed.js';
import { pairChurnSamples } from './workloads/timed-report.js';
import type { Failure, WorkloadDescriptor } from './workloads/workload.js';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Marks a peer that still runs as failed (the first failure a peer has is the one reported). */
function markFailed(entries: readonly PeerEntry[], f: Failure): void {
  const e = entries.find((x) => x.name === f.peer && x.status === 'ran');
  if (e) {
    e.status = 'failed';
    e.reason = f.reason;
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  const opts = parseArgs(process.argv.slice(2));
  const mode = opts.mode;
  let pick: Selection;
  try {
    pick = select(opts.only);
  } catch (err) {
    fail((err as Error).message);
  }
  const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown cpu';
  const out = (line = '') => process.stdout.write(`${line}\n`);
  const progress = stderrProgress();

  // --- set-up: the peers compiled on this machine (nothing prebuilt is downloaded), then every peer loaded ---
  const setup = buildPeers(pick, progress);
  const entries = await loadPeers(setup, pick);
  out(
    opts.verify
      ? '@paddock/bench: self-check of every peer (--verify), no timing'
      : `@paddock/bench: ${mode.name} run, ${plural(opts.rounds, 'round')} after ${opts.warmup} warm-up ` +
          `(the first calibrates a ${mode.budgetMs} ms cap per peer and round), median ns per op`,
  );
  out(`machine: ${cpu}, ${os.cpus().length} cpus, node ${process.version}, ${process.platform} ${process.arch}`);
  out(setupLine(setup));
  for (const e of entries) if (e.status === 'skipped') out(`${e.name}: skipped (${e.reason})`);

  // --- self-check ---
  out(checkPeers(entries, opts.verify ? FULL_CHECK : QUICK_CHECK, opts.seed, progress));
  const anyFailed = () => entries.some((e) => e.status === 'failed');
  if (opts.verify) return anyFailed() ? 1 : 0;
  /** The peers of the main table, as they stand before the workloads. */
  const tablePeers = entries.filter((e) => offers(e, 'pair-churn'));
  const timedMaxBytes = Object.fromEntries(tablePeers.filter((e) => e.status === 'ran').map((e) => [e.name, e.ready!.timed!.maxBytes]));

  // --- the workloads, one after the other, then the failures they saw, then their reports ---
  const ctx: RunContext = {
    opts,
    started,
    peers: entries,
    progress,
    largeMax: arenaLargeMax(entries.find((e) => e.name === 'paddock' && e.status === 'ran')?.ready ?? null),
    command: commandLine(),
  };
  const picked = (name: string) => pick.workloads === null || pick.workloads.has(name);
  const results = new Map<WorkloadDescriptor<unknown>, unknown>();
  for (const w of WORKLOADS) results.set(w, await w.run(ctx, picked));
  for (const w of WORKLOADS) for (const f of w.failures(results.get(w))) markFailed(entries, f);
  const resultOf = <R>(w: WorkloadDescriptor<R>): R => results.get(w as WorkloadDescriptor<unknown>) as R;
  progress.done();
  collectGarbage();

  const parts: Record<string, unknown> = {};
  let notMet = 0;
  for (const w of WORKLOADS) {
    const report = w.report(results.get(w), ctx);
    for (const line of report.lines) out(line);
    Object.assign(parts, report.json);
    notMet += report.notMet ?? 0;
  }
  // --- the programs' targets: the programs' samples, and the pair's and the churn's ---
  const idleWindow = programSpecs({ ms: mode.programMs, full: mode.name === 'full' }).find((x) => x.program === 'idle')!.params.window;
  const targets8 = programTargets(resultOf(programs), { samples: pairChurnSamples(resultOf(timed)) }, idleWindow);
  for (const line of targetLines(targets8)) out(line);

  // --- JSON ---
  const memRounds = suiteRounds(ctx);
  const doc = {
    schema: 'paddock-bench/1',
    date: new Date(started).toISOString(),
    elapsedSeconds: (Date.now() - started) / 1000,
    command: ctx.command,
    cwd: process.cwd(),
    machine: {
      cpuModel: cpu,
      cpus: os.cpus().length,
      node: process.version,
      v8: process.versions.v8,
      platform: process.platform,
      arch: process.arch,
      totalMemoryBytes: os.totalmem(),
      loadavgAtEnd: os.loadavg(),
    },
    config: {
      mode: mode.name,
      rounds: opts.rounds,
      warmup: opts.warmup,
      seed: opts.seed,
      budgetMsPerRound: mode.budgetMs,
      only: opts.only,
      touchPrefill: opts.touch,
      maxBytes: timedMaxBytes,
      sizes: { pair: 32, churnMin: 16, churnMax: 4096, sweep: SWEEP_SIZES, sweepLiveBytes: SWEEP_LIVE_BYTES },
      sweepPaddockMaxBytes: PADDOCK_BIG_BYTES,
      paddockLargeMax: ctx.largeMax,
      memWorkloads: { warmup: memRounds.warmup, rounds: memRounds.rounds, holdCycles: mode.holdCycles, crossMs: mode.crossMs, chains: mode.chains },
    },
    peers: tablePeers.map((e) => ({ name: e.name, status: e.status, reason: e.reason, selfCheck: e.selfCheck })),
    ...parts,
    setup: setupJson(setup),
    peakRssMethod: peakMethod(),
    targets8,
  };
  mkdirSync(dirname(opts.json), { recursive: true });
  writeFileSync(opts.json, `${JSON.stringify(doc, null, 2)}\n`);
  out();
  out(`json: ${relative(process.cwd(), opts.json) || opts.json} (${((Date.now() - started) / 1000).toFixed(0)} s)`);

  if (anyFailed()) return 1;
  if (opts.strict && notMet > 0) return 1;
  return 0;
}

main().then(
  // Exit once stdout has taken everything: a heap may leave handles open that would keep the process up.
  (code) => process.stdout.write('', () => process.exit(code)),
  (err) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
