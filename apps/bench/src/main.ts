/**
 * @paddock/bench: Paddock side by side with its peers, in one run. `pnpm bench` at the root.
 *
 * Peers: `floor` (bare segregated free lists over a typed array, the least a JS allocator can cost),
 * `thi.ng` (@thi.ng/malloc, the most used JS allocator) and `paddock` (@paddock/allocator, skipped
 * with a reason while it cannot load). Workloads: `pair` (malloc(32)+free, LIFO) and `churn-<live>`
 * (free a random live block, malloc a random 16..4096 B into its slot) at 1k, 4k, 16k and 64k live.
 * Rounds are interleaved across peers, each batch on a fresh allocator instance; medians, min/max and
 * ratios of the same run go to a table on stdout and, with every sample, to results/latest.json.
 * Paddock's targets are checked here: a pair <= 10 ns; churn <= 1.5x the floor and below thi.ng.
 *
 * The size and pattern workloads follow, each with its own table: `sweep-<size>` (fixed-size churn, 32 B to 16 MiB),
 * `hold-<size>` (hold K blocks, free them all: time and memory), `cross-32` (32 B blocks malloc'ed in one
 * worker and freed in another, against plain JS) and `realloc` (growth chains 64 KiB -> 64 MiB at profile
 * rungs 1, 3, 5 and 10: time against memory kept).
 *
 * Options: --full (more rounds, longer sequences), --rounds N, --warmup N, --only name,name (peers
 * and/or workloads), --json path, --seed N, --verify (self-check every peer and exit), --strict (exit 1
 * when a target is not met).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Adapter } from './adapter.js';
import { FloorAdapter } from './floor.js';
import { loadPaddock, PaddockAdapter, paddockDistUrl, ThingAdapter } from './peers.js';
import {
  type Cell,
  CHURN_FLOOR_RATIO,
  type Figures,
  fmtCount,
  fmtNs,
  fmtRatio,
  layout,
  PAIR_LIMIT_NS,
  ratio,
  type Summary,
  summarize,
  targets,
} from './report.js';
import { collectGarbage, type Peer, runBatch } from './runner.js';
import { FULL_CHECK, QUICK_CHECK, selfCheck } from './verify.js';
import { fullCreateHeap, PADDOCK_BIG_BYTES } from './mem.js';
import { HOLD_SPECS } from './hold.js';
import { nativePeer } from './native-run.js';
import { type ProgramPeers, type ProgramResult, programSpecs, runPrograms } from './programs.js';
import { peakMethod } from './peak.js';
import { cellFigures, programTargets, programLines, targetLines } from './programs-report.js';
import { change, estimate, fmtChange, median } from './stats.js';
import { buildDlmalloc, buildNative, buildTlsf, type Built } from './toolchain.js';
import { dlmallocAdapter, tlsfAdapter } from './wasm-peers.js';
import { fmtMiB, runCrossSuite, runHoldSuite, runReallocSuite, type SuiteContext, type SuiteOutput } from './suite.js';
import {
  churnWorkload,
  liveLabel,
  loopsFor,
  pairWorkload,
  sizeLabel,
  SWEEP_LIVE_BYTES,
  SWEEP_SIZES,
  sweepLive,
  sweepWorkload,
  type Workload,
} from './workloads.js';

const MiB = 1024 * 1024;
/** The floor's and thi.ng's buffer: 64k live blocks of up to 4 KiB need ~180 MiB (floor, rounded to
 * powers of two) and ~135 MiB plus fragmentation (thi.ng). */
const ARRAY_PEER_BYTES = 256 * MiB;
/** Paddock's heap limit: a growable buffer, so this is a cap, not a commitment; its arenas and
 * partially used slabs need headroom over the floor's figure. */
const PADDOCK_BYTES = 1024 * MiB;
const LIVE_COUNTS = [1024, 4096, 16384, 65536];
/**
 * `paddock` is the arena backend (pool_arena, dist/pool-arena.js), `paddock-classic` the classic pool
 * (pool_classic, dist/pool-classic.js); `as-tlsf` and `wasi-dlmalloc` are allocators compiled to wasm at
 * set-up and called from JS; `glibc` and `mimalloc` the native references (the same workload in C).
 */
const PEER_ORDER = ['floor', 'thi.ng', 'as-tlsf', 'wasi-dlmalloc', 'paddock', 'paddock-classic', 'glibc', 'mimalloc'];
/** Peers that run the pair and the random-size churn only (not the size sweep). */
const PAIR_CHURN_ONLY = new Set(['paddock-classic', 'as-tlsf', 'wasi-dlmalloc', 'glibc', 'mimalloc']);
const NATIVE_PEERS = new Set(['glibc', 'mimalloc']);
/** Peers of one workload only: `js` is the plain-JS baseline of cross-32. */
const EXTRA_PEERS = ['js'];
const SWEEP_NAMES = SWEEP_SIZES.map((s) => `sweep-${sizeLabel(s)}`);
const HOLD_NAMES = HOLD_SPECS.map((s) => s.name);
const CROSS_NAME = 'cross-32';
const REALLOC_NAME = 'realloc';
/** The programs (names only; sizes depend on the mode) and their groups. */
const PROGRAM_NAMES = programSpecs({ ms: 0, full: false }).map((s) => s.name);
const PROGRAM_GROUPS = ['programs', 'pony', 'pathology', 'standard'];
/** A time-capped peer still runs at least this many ops a round. */
const MIN_OPS = 16;

interface Mode {
  readonly name: 'quick' | 'full';
  readonly rounds: number;
  readonly warmup: number;
  readonly pairOps: number;
  readonly churnOps: (live: number) => number;
  /** Time a peer may spend in one round of one workload; a slower peer runs a prefix. */
  readonly budgetMs: number;
  /** hold, cross-32 and realloc: warm-up and measured rounds (unless --warmup / --rounds say otherwise). */
  readonly memWarmup: number;
  readonly memRounds: number;
  /** hold: hold/free cycles a round. */
  readonly holdCycles: number;
  /** cross-32: how long the producer produces, a round. */
  readonly crossMs: number;
  /** realloc: chains a round. */
  readonly chains: number;
  /** The programs: how long a timed program runs, its warm-up and measured rounds, the idle rounds. */
  readonly programMs: number;
  readonly programWarmup: number;
  readonly programRounds: number;
  readonly idleRounds: number;
  /** A fixed-work program run longer than this drops the peer from that program. */
  readonly programCapMs: number;
}

const QUICK: Mode = {
  name: 'quick',
  rounds: 5,
  warmup: 2,
  pairOps: 1_000_000,
  churnOps: (live) => Math.max(200_000, 4 * live),
  budgetMs: 250,
  memWarmup: 1,
  memRounds: 5,
  holdCycles: 8,
  crossMs: 300,
  chains: 6,
  programMs: 150,
  programWarmup: 1,
  programRounds: 4,
  idleRounds: 2,
  programCapMs: 15_000,
};
const FULL: Mode = {
  name: 'full',
  rounds: 21,
  warmup: 3,
  pairOps: 4_000_000,
  churnOps: (live) => Math.max(1_000_000, 16 * live),
  budgetMs: 1000,
  memWarmup: 2,
  memRounds: 11,
  holdCycles: 32,
  crossMs: 1000,
  chains: 16,
  programMs: 1000,
  programWarmup: 2,
  programRounds: 11,
  idleRounds: 5,
  programCapMs: 60_000,
};

interface Options {
  mode: Mode;
  rounds: number;
  warmup: number;
  /** --rounds / --warmup as given (-1: the mode's, per workload). */
  roundsGiven: number;
  warmupGiven: number;
  only: string[] | null;
  json: string;
  seed: number;
  verify: boolean;
  strict: boolean;
  touch: boolean;
}

const USAGE = `usage: node apps/bench/dist/main.js [--full] [--rounds N] [--warmup N] [--only name,name]
                                   [--json path] [--seed N] [--verify] [--strict] [--no-touch]
  --full        ${FULL.rounds} rounds, longer sequences, ${FULL.budgetMs} ms cap per peer and round (default: quick, ${QUICK.rounds} rounds, ${QUICK.budgetMs} ms)
  --rounds N    measured rounds (after the warm-up rounds)
  --warmup N    warm-up rounds, at least 1 (the first one calibrates the time cap)
  --only LIST   peers (${[...PEER_ORDER, ...EXTRA_PEERS].join(', ')}) and/or workloads (pair, churn, ${LIVE_COUNTS.map((l) => `churn-${liveLabel(l)}`).join(', ')},
                sweep, ${SWEEP_NAMES.join(', ')}, hold, ${HOLD_NAMES.join(', ')}, ${CROSS_NAME}, ${REALLOC_NAME},
                ${PROGRAM_GROUPS.join(', ')}, ${PROGRAM_NAMES.join(', ')})
  --json PATH   where the JSON goes (default apps/bench/results/latest.json)
  --seed N      PRNG seed of the operation sequences
  --verify      run the long self-check on every peer and exit
  --strict      exit 1 when a Paddock target is NOT MET
  --no-touch    leave the prefilled blocks untouched (the timed churn then pays the first touch of
                their pages)`;

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parseArgs(argv: string[]): Options {
  const defaultJson = fileURLToPath(new URL('../results/latest.json', import.meta.url));
  const o: Options = {
    mode: QUICK,
    rounds: -1,
    warmup: -1,
    roundsGiven: -1,
    warmupGiven: -1,
    only: null,
    json: defaultJson,
    seed: 0x5eed,
    verify: false,
    strict: false,
    touch: true,
  };
  const int = (name: string, v: string | undefined, min: number): number => {
    const n = Number(v);
    if (v === undefined || !Number.isInteger(n) || n < min) fail(`${name} needs an integer >= ${min}, got ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value: string | undefined;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const take = () => value ?? argv[++i];
    switch (arg) {
      case '--full':
        o.mode = FULL;
        break;
      case '--rounds':
        o.rounds = int(arg, take(), 1);
        break;
      case '--warmup':
        o.warmup = int(arg, take(), 1);
        break;
      case '--only': {
        const v = take();
        if (!v) fail('--only needs a list of names');
        o.only = v.split(',').map((s) => s.trim()).filter(Boolean);
        break;
      }
      case '--json': {
        const v = take();
        if (!v) fail('--json needs a path');
        o.json = resolve(v);
        break;
      }
      case '--seed':
        o.seed = int(arg, take(), 0);
        break;
      case '--verify':
        o.verify = true;
        break;
      case '--strict':
        o.strict = true;
        break;
      case '--no-touch':
        o.touch = false;
        break;
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        process.exit(0);
        break;
      default:
        fail(`unknown option ${argv[i]}`);
    }
  }
  o.roundsGiven = o.rounds;
  o.warmupGiven = o.warmup;
  if (o.rounds < 0) o.rounds = o.mode.rounds;
  if (o.warmup < 0) o.warmup = o.mode.warmup;
  return o;
}

/** Splits --only into a peer filter and a workload filter (null: no filter). */
function selection(only: string[] | null): { peers: Set<string> | null; workloads: Set<string> | null } {
  if (only === null) return { peers: null, workloads: null };
  const churns = LIVE_COUNTS.map((l) => `churn-${liveLabel(l)}`);
  const single = ['pair', ...churns, ...SWEEP_NAMES, ...HOLD_NAMES, CROSS_NAME, REALLOC_NAME];
  const peers = new Set<string>();
  const workloads = new Set<string>();
  for (const name of only) {
    if (PEER_ORDER.includes(name) || EXTRA_PEERS.includes(name)) peers.add(name);
    else if (single.includes(name)) workloads.add(name);
    else if (name === 'churn') churns.forEach((c) => workloads.add(c));
    else if (name === 'sweep') SWEEP_NAMES.forEach((c) => workloads.add(c));
    else if (name === 'hold') HOLD_NAMES.forEach((c) => workloads.add(c));
    else if (name === 'cross') workloads.add(CROSS_NAME);
    else if (PROGRAM_NAMES.includes(name)) workloads.add(name);
    else if (PROGRAM_GROUPS.includes(name)) {
      for (const sp of programSpecs({ ms: 0, full: false })) if (name === 'programs' || sp.group === name) workloads.add(sp.name);
    }
    else fail(`--only: unknown name ${name}`);
  }
  return { peers: peers.size > 0 ? peers : null, workloads: workloads.size > 0 ? workloads : null };
}

const progress = (() => {
  const tty = process.stderr.isTTY === true;
  let last = '';
  return {
    show(text: string, key: string): void {
      if (tty) process.stderr.write(`\r\x1b[K${text}`);
      else if (key !== last) process.stderr.write(`${text}\n`);
      last = key;
    },
    done(): void {
      if (tty) process.stderr.write('\r\x1b[K');
    },
  };
})();

interface PeerEntry {
  readonly name: string;
  /** 'ran' once timed; otherwise why it was not. */
  status: 'ran' | 'skipped' | 'failed' | 'not run';
  reason: string | null;
  selfCheck: string | null;
  readonly peer: Peer | null;
}

function makePeer(adapter: Adapter, maxBytes: number): Peer {
  return { name: adapter.name, adapter, loops: loopsFor(adapter.name, adapter.sized === true), maxBytes };
}

async function main(): Promise<number> {
  const started = Date.now();
  const opts = parseArgs(process.argv.slice(2));
  const mode = opts.mode;
  const pick = selection(opts.only);
  const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown cpu';
  const out = (line = '') => process.stdout.write(`${line}\n`);

  // --- set-up: the peers compiled on this machine (nothing prebuilt is downloaded) ---
  const setupStarted = Date.now();
  progress.show('set-up: building the native references (cc) and the wasm peers (asc, clang)', 'setup');
  const wantedPeer = (name: string) => pick.peers === null || pick.peers.has(name);
  const skippedBuild: Built = { ok: false, reason: 'left out by --only' };
  const nativeBuilds = wantedPeer('glibc') || wantedPeer('mimalloc') ? buildNative() : { glibc: skippedBuild, mimalloc: skippedBuild, cc: null };
  const tlsfBuild = wantedPeer('as-tlsf') ? buildTlsf() : skippedBuild;
  const dlBuild = wantedPeer('wasi-dlmalloc') ? buildDlmalloc() : skippedBuild;
  const builds: Record<string, Built> = { glibc: nativeBuilds.glibc, mimalloc: nativeBuilds.mimalloc, 'as-tlsf': tlsfBuild, 'wasi-dlmalloc': dlBuild };
  const setupSeconds = (Date.now() - setupStarted) / 1000;
  progress.done();

  // --- peers ---
  const entries: PeerEntry[] = [];
  const paddock = await loadPaddock('pool_arena');
  const classic = await loadPaddock('pool_classic');
  for (const name of PEER_ORDER) {
    const wanted = pick.peers === null || pick.peers.has(name);
    let peer: Peer | null = null;
    let status: PeerEntry['status'] = wanted ? 'ran' : 'not run';
    let reason: string | null = wanted ? null : 'left out by --only';
    if (wanted) {
      if (name === 'floor') peer = makePeer(new FloorAdapter(), ARRAY_PEER_BYTES);
      else if (name === 'thi.ng') peer = makePeer(new ThingAdapter(), ARRAY_PEER_BYTES);
      else if (name in builds) {
        const b = builds[name];
        if (!b.ok) {
          status = 'skipped';
          reason = b.reason;
        } else if (NATIVE_PEERS.has(name)) peer = nativePeer(name, b.path);
        else {
          try {
            peer = makePeer(name === 'as-tlsf' ? tlsfAdapter(b.path) : dlmallocAdapter(b.path), ARRAY_PEER_BYTES);
          } catch (err) {
            status = 'skipped';
            reason = `the compiled module does not load: ${err instanceof Error ? err.message : String(err)}`;
          }
        }
      } else {
        const load = name === 'paddock' ? paddock : classic;
        if (load.ok) peer = makePeer(new PaddockAdapter(load.createHeap, name), PADDOCK_BYTES);
        else {
          status = 'skipped';
          reason = load.reason;
        }
      }
    }
    entries.push({ name, status, reason, selfCheck: null, peer });
  }

  out(
    opts.verify
      ? '@paddock/bench: self-check of every peer (--verify), no timing'
      : `@paddock/bench: ${mode.name} run, ${plural(opts.rounds, 'round')} after ${opts.warmup} warm-up ` +
          `(the first calibrates a ${mode.budgetMs} ms cap per peer and round), median ns per op`,
  );
  out(`machine: ${cpu}, ${os.cpus().length} cpus, node ${process.version}, ${process.platform} ${process.arch}`);
  out(
    `set-up (${setupSeconds.toFixed(1)} s): ` +
      Object.entries(builds)
        .map(([n, b]) => (b.ok ? `${n} ${b.cached ? 'built (cached)' : 'built'}` : `${n} not built`))
        .join(', ') +
      (nativeBuilds.cc ? `; cc: ${nativeBuilds.cc}` : ''),
  );
  for (const e of entries) if (e.status === 'skipped') out(`${e.name}: skipped (${e.reason})`);

  // --- self-check ---
  const check = opts.verify ? FULL_CHECK : QUICK_CHECK;
  const checkLine: string[] = [];
  for (const e of entries) {
    if (e.peer === null) continue;
    if (e.peer.external) {
      e.selfCheck = 'n/a (native process)';
      continue;
    }
    progress.show(`self-check ${e.name}`, `check ${e.name}`);
    const r = selfCheck(e.peer.adapter, { ...check, seed: opts.seed, maxBytes: e.peer.maxBytes });
    if (r.error !== null) {
      e.status = 'failed';
      e.reason = `self-check: ${r.error}`;
      e.selfCheck = r.error;
      checkLine.push(`${e.name} FAILED (${r.error})`);
    } else {
      e.selfCheck = r.patterns ? 'ok' : 'ok (pointers only: no byte view)';
      checkLine.push(`${e.name} ${e.selfCheck}`);
    }
  }
  progress.done();
  out(
    `self-check (${check.live} live, ${fmtCount(check.steps)} churn steps, ${fmtCount(check.pairs)} pairs, ` +
      `patterns in every block): ${checkLine.join(', ') || 'no peer'}`,
  );
  const anyFailed = () => entries.some((e) => e.status === 'failed');
  if (opts.verify) return anyFailed() ? 1 : 0;

  // --- workloads ---
  const workloads: Workload[] = [];
  if (pick.workloads === null || pick.workloads.has('pair')) workloads.push(pairWorkload(mode.pairOps));
  for (const live of LIVE_COUNTS) {
    const name = `churn-${liveLabel(live)}`;
    if (pick.workloads === null || pick.workloads.has(name)) {
      workloads.push(churnWorkload(live, mode.churnOps(live), opts.seed));
    }
  }
  const picked = (name: string) => pick.workloads === null || pick.workloads.has(name);
  for (const size of SWEEP_SIZES) {
    if (picked(`sweep-${sizeLabel(size)}`)) workloads.push(sweepWorkload(size, mode.churnOps(sweepLive(size)), opts.seed));
  }
  const isSweep = (w: Workload) => w.kind === 'churn' && w.group === 'sweep';
  /** The size sweep runs Paddock in a 2 GiB heap (the large geometry); every other peer as in the churn. */
  const peerFor = (w: Workload, p: Peer): Peer =>
    isSweep(w) && p.name === 'paddock' ? { ...p, maxBytes: PADDOCK_BIG_BYTES } : p;
  let largeMax: number | null = null;
  if (paddock.ok && entries.find((e) => e.name === 'paddock')?.status === 'ran') {
    try {
      largeMax = fullCreateHeap(paddock.createHeap)({ maxBytes: PADDOCK_BIG_BYTES }).largeMax;
    } catch {
      largeMax = null;
    }
  }

  // --- rounds: for each workload, warm-up then measured rounds, peers interleaved and rotated ---
  const running = entries.filter((e) => e.status === 'ran').map((e) => e.peer as Peer);
  const cells = new Map<string, Map<string, Cell>>();
  for (const w of workloads) {
    const row = new Map<string, Cell>();
    for (const p of running) {
      row.set(p.name, {
        peer: p.name,
        workload: w.name,
        opsPerRound: w.ops,
        samples: [],
        warmup: [],
        error: null,
        touched: false,
        peakRss: [],
      });
    }
    cells.set(w.name, row);
  }
  const budgetNs = mode.budgetMs * 1e6;
  const totalRounds = opts.warmup + opts.rounds;
  /** The peers of one workload: the classic pool runs the pair and the churn, not the size sweep. */
  const runningFor = (w: Workload): Peer[] => (isSweep(w) ? running.filter((p) => !PAIR_CHURN_ONLY.has(p.name)) : running);
  for (const w of workloads) {
    if (isSweep(w)) for (const name of PAIR_CHURN_ONLY) cells.get(w.name)!.delete(name);
  }
  const totalBatches = workloads.reduce((n, w) => n + totalRounds * runningFor(w).length, 0);
  let batch = 0;
  for (const w of workloads) {
    const row = cells.get(w.name)!;
    const here = runningFor(w);
    for (let r = 0; r < totalRounds; r++) {
      for (let k = 0; k < here.length; k++) {
        const peer = peerFor(w, here[(k + r) % here.length]);
        const cell = row.get(peer.name)!;
        batch++;
        if (cell.error !== null) continue;
        const phase = r < opts.warmup ? `warm-up ${r + 1}/${opts.warmup}` : `round ${r - opts.warmup + 1}/${opts.rounds}`;
        const secs = ((Date.now() - started) / 1000).toFixed(0);
        progress.show(
          `[${String(batch).padStart(String(totalBatches).length)}/${totalBatches}] ${w.name} ${phase} ${peer.name} (${secs} s)`,
          `${w.name} ${r}`,
        );
        if (r === 0) {
          const res = runBatch(peer, w, w.ops, opts.touch, budgetNs);
          if (!res.ok) {
            cell.error = res.error;
            continue;
          }
          cell.opsPerRound =
            res.ops >= w.ops ? w.ops : Math.min(w.ops, Math.max(MIN_OPS, Math.floor((res.ops * budgetNs) / res.ns)));
          cell.warmup.push(res.ns / res.ops);
          cell.touched = res.touched;
        } else {
          const res = runBatch(peer, w, cell.opsPerRound, opts.touch);
          if (!res.ok) {
            cell.error = res.error;
            continue;
          }
          (r < opts.warmup ? cell.warmup : cell.samples).push(res.ns / res.ops);
          if (r >= opts.warmup && res.peakRss !== undefined) cell.peakRss.push(res.peakRss);
        }
      }
    }
  }

  // --- the workloads beyond the timed loop: hold-then-free, cross-agent free, realloc chains ---
  const paddockRuns = paddock.ok && entries.find((e) => e.name === 'paddock')?.status === 'ran';
  const ctx: SuiteContext = {
    warmup: opts.warmupGiven >= 1 ? opts.warmupGiven : mode.memWarmup,
    rounds: opts.roundsGiven >= 1 ? opts.roundsGiven : mode.memRounds,
    peers: pick.peers,
    createHeap: paddockRuns && paddock.ok ? fullCreateHeap(paddock.createHeap) : null,
    paddockUrl: paddockDistUrl().href,
    progress: (text, key) => progress.show(text, key),
    started,
  };
  const holdSpecs = HOLD_SPECS.filter((h) => picked(h.name));
  const suites: { name: string; out: SuiteOutput }[] = [];
  if (holdSpecs.length > 0) suites.push({ name: 'hold', out: runHoldSuite(ctx, holdSpecs, mode.holdCycles) });
  if (picked(CROSS_NAME)) suites.push({ name: CROSS_NAME, out: await runCrossSuite(ctx, mode.crossMs) });
  if (picked(REALLOC_NAME)) suites.push({ name: REALLOC_NAME, out: runReallocSuite(ctx, mode.chains, largeMax) });
  // --- the programs ---
  const programPicked = programSpecs({ ms: mode.programMs, full: mode.name === 'full' }).filter((sp) => picked(sp.name));
  let programs: ProgramResult[] = [];
  if (programPicked.length > 0) {
    const ran = (n: string) => entries.find((e) => e.name === n)?.status === 'ran';
    const pp: ProgramPeers = {
      paddock: [
        ...(paddock.ok && ran('paddock') ? [{ name: 'paddock' as const, url: paddock.url, createHeap: paddock.createHeap }] : []),
        ...(classic.ok && ran('paddock-classic') ? [{ name: 'paddock-classic' as const, url: classic.url, createHeap: classic.createHeap }] : []),
      ],
      native: (['glibc', 'mimalloc'] as const).filter((n) => ran(n)).map((n) => ({ name: n, bin: (builds[n] as { path: string }).path })),
      adapters: [
        ...(ran('floor') ? [new FloorAdapter()] : []),
        ...(ran('thi.ng') ? [new ThingAdapter()] : []),
        ...(ran('as-tlsf') ? [tlsfAdapter((builds['as-tlsf'] as { path: string }).path)] : []),
        ...(ran('wasi-dlmalloc') ? [dlmallocAdapter((builds['wasi-dlmalloc'] as { path: string }).path)] : []),
        ...(paddock.ok && ran('paddock') ? [new PaddockAdapter(paddock.createHeap, 'paddock')] : []),
        ...(classic.ok && ran('paddock-classic') ? [new PaddockAdapter(classic.createHeap, 'paddock-classic')] : []),
      ],
      js: wantedPeer('js'),
      skipped: Object.fromEntries(entries.filter((e) => e.status === 'skipped' || e.status === 'failed').map((e) => [e.name, e.reason ?? e.status])),
    };
    programs = await runPrograms(
      {
        warmup: opts.warmupGiven >= 1 ? opts.warmupGiven : mode.programWarmup,
        rounds: opts.roundsGiven >= 1 ? opts.roundsGiven : mode.programRounds,
        idleRounds: opts.roundsGiven >= 1 ? opts.roundsGiven : mode.idleRounds,
        only: null,
        peerWanted: wantedPeer,
        progress: (text, key) => progress.show(text, key),
        started,
        capMs: mode.programCapMs,
      },
      programPicked,
      pp,
    );
  }
  const suiteFailures = suites.flatMap((x) => x.out.failures);
  for (const f of suiteFailures) {
    const e = entries.find((x) => f.startsWith(`${x.name} `) && x.status === 'ran');
    if (e) {
      e.status = 'failed';
      e.reason = f;
    }
  }

  progress.done();
  collectGarbage();

  // --- figures ---
  const summary = new Map<string, Map<string, Summary>>();
  for (const w of workloads) {
    const m = new Map<string, Summary>();
    for (const cell of cells.get(w.name)!.values()) {
      const s = cell.error === null ? summarize(cell.samples) : null;
      if (s !== null) m.set(cell.peer, s);
    }
    summary.set(w.name, m);
  }
  const peerNames = entries.map((e) => e.name);
  const figures: Figures = { workloads: workloads.map((w) => w.name), peers: peerNames, summary };
  // Paddock's targets are the pair's and the random-size churn's; the size sweep has none.
  const mainWorkloads = workloads.filter((w) => !isSweep(w));
  const sweepWorkloads = workloads.filter(isSweep);
  for (const e of entries) {
    if (e.status !== 'ran') continue;
    const errs = workloads
      .map((w) => cells.get(w.name)!.get(e.name))
      .filter((c): c is Cell => c !== undefined && c.error !== null);
    if (errs.length > 0) {
      e.status = 'failed';
      e.reason = errs.map((c) => `${c.workload}: ${c.error}`).join('; ');
    }
  }
  const paddockEntry = entries.find((e) => e.name === 'paddock')!;
  const missing = (w: string): string | null => {
    if (paddockEntry.status === 'skipped') return 'paddock skipped';
    if (paddockEntry.status === 'not run') return 'paddock not run';
    const c = cells.get(w)?.get('paddock');
    if (c?.error) return `paddock failed: ${c.error}`;
    if (paddockEntry.status === 'failed' && !c) return `paddock failed: ${paddockEntry.reason}`;
    return null;
  };
  const judged = targets({ ...figures, workloads: mainWorkloads.map((w) => w.name) }, missing);

  // --- table ---
  const cellText = (w: string, peer: string): string => {
    const s = summary.get(w)?.get(peer);
    if (s) return fmtNs(s.median);
    const e = entries.find((x) => x.name === peer)!;
    const c = cells.get(w)?.get(peer);
    if (c?.error) return 'failed';
    return e.status === 'ran' ? '-' : e.status;
  };
  const head = [
    'workload',
    'ops',
    ...peerNames.map((p) => `${p} ns/op`),
    'paddock/floor',
    'paddock/thi.ng',
    'thi.ng/floor',
    'arena/classic',
    'classic/floor',
    'paddock/mimalloc',
  ];
  const rows: string[][] = [head];
  for (const w of mainWorkloads) {
    rows.push([
      w.name,
      fmtCount(w.ops),
      ...peerNames.map((p) => cellText(w.name, p)),
      fmtRatio(ratio(figures, w.name, 'paddock', 'floor')),
      fmtRatio(ratio(figures, w.name, 'paddock', 'thi.ng')),
      fmtRatio(ratio(figures, w.name, 'thi.ng', 'floor')),
      fmtRatio(ratio(figures, w.name, 'paddock', 'paddock-classic')),
      fmtRatio(ratio(figures, w.name, 'paddock-classic', 'floor')),
      fmtRatio(ratio(figures, w.name, 'paddock', 'mimalloc')),
    ]);
  }
  if (mainWorkloads.length > 0) {
    out();
    out(layout(rows));
    out('paddock = the arena backend (pool_arena, dist/pool-arena.js); paddock-classic = the classic pool (pool_classic, dist/pool-classic.js); arena/classic = paddock / paddock-classic (below 1: the arena is faster)');
    out();
    out('paddock (the arena) against each peer: change of its ns/op, 95% bootstrap interval (- = the arena is faster)');
    const cmpPeers = peerNames.filter((p) => p !== 'paddock');
    const crows: string[][] = [['workload', 'paddock median [95% CI]', ...cmpPeers.map((p) => `vs ${p}`)]];
    for (const w of mainWorkloads) {
      const row = cells.get(w.name)!;
      const mine = row.get('paddock');
      const est = mine && mine.error === null ? estimate(mine.samples) : null;
      crows.push([
        w.name,
        est ? `${fmtNs(est.median)} [${fmtNs(est.lo)} .. ${fmtNs(est.hi)}]` : '-',
        ...cmpPeers.map((p) => {
          const other = row.get(p);
          if (!mine || !other || mine.error || other.error || other.opsPerRound < w.ops) return other && other.opsPerRound < w.ops ? 'capped' : '-';
          return fmtChange(change(mine.samples, other.samples));
        }),
      ]);
    }
    out(layout(crows));
  }
  if (workloads.length > 0) {
    out();
    out('spread over the measured rounds (min .. max ns/op)');
    const spread: string[][] = [['workload', ...peerNames]];
    for (const w of workloads) {
      spread.push([
        w.name,
        ...peerNames.map((p) => {
          const s = summary.get(w.name)?.get(p);
          if (s) return `${fmtNs(s.min)} .. ${fmtNs(s.max)}`;
          return isSweep(w) && PAIR_CHURN_ONLY.has(p) ? 'n/a' : '-';
        }),
      ]);
    }
    out(layout(spread));
    out();
    out('peak resident memory of a batch above its start (prefill and timed loop; median over the measured rounds)');
    const prow: string[][] = [['workload', ...peerNames]];
    for (const w of workloads) {
      prow.push([
        w.name,
        ...peerNames.map((p) => {
          const c = cells.get(w.name)?.get(p);
          return c && c.error === null && c.peakRss.length > 0 ? fmtMiB(median(c.peakRss)) : '-';
        }),
      ]);
    }
    out(layout(prow));
  }
  const capped: string[] = [];
  for (const w of workloads) {
    for (const c of cells.get(w.name)!.values()) {
      if (c.error === null && c.opsPerRound < w.ops) {
        capped.push(`${c.peer} ${w.name}: first ${fmtCount(c.opsPerRound)} of ${fmtCount(w.ops)}`);
      }
    }
  }
  if (capped.length > 0) {
    out();
    out(`time-capped (same sequence, a prefix of it, ${mode.budgetMs} ms a round): ${capped.join('; ')}`);
  }
  const untouched = new Set<string>();
  for (const w of workloads) {
    if (w.kind !== 'churn') continue;
    for (const c of cells.get(w.name)!.values()) if (c.error === null && !c.touched) untouched.add(c.peer);
  }
  const tierOf = (size: number): string =>
    largeMax === null ? '-' : size <= 1 << 20 ? `class ${size <= 32 ? 0 : 27 - Math.clz32(size - 1)}` : size <= largeMax ? 'large' : 'oversized';
  if (opts.touch && untouched.size > 0) {
    out(`prefill not touched (no byte view): ${[...untouched].join(', ')}: its churn figures include first-touch page faults`);
  } else if (!opts.touch) {
    out('prefill not touched (--no-touch): churn figures include first-touch page faults of the prefilled blocks');
  }
  const failures = entries.filter((e) => e.status === 'failed');
  for (const e of failures) out(`${e.name}: FAILED (${e.reason})`);

  if (judged.length > 0) {
    out();
    out(`targets for paddock (pair <= ${PAIR_LIMIT_NS} ns; churn <= ${CHURN_FLOOR_RATIO}x floor and < thi.ng, same run):`);
    const trows: string[][] = [];
    for (const t of judged) {
      const value =
        t.value === null ? '' : t.rule.startsWith('pair') ? `${fmtNs(t.value)} ns` : fmtRatio(t.value);
      trows.push([`  ${t.rule}`, t.status === 'n/a' ? `n/a (${t.note})` : t.status, value]);
    }
    out(layout(trows));
  }

  // --- the size sweep ---
  if (sweepWorkloads.length > 0) {
    const sweepPeers = peerNames.filter((p) => !PAIR_CHURN_ONLY.has(p));
    out();
    out(
      `size sweep: fixed-size churn (free a random live block, malloc the same size into its slot), live bytes <= ${fmtMiB(SWEEP_LIVE_BYTES)}, ` +
        `median ns per op (Paddock: ${fmtMiB(PADDOCK_BIG_BYTES)} heap, large geometry${largeMax === null ? '' : `, largeMax ${fmtCount(largeMax)} B`})`,
    );
    const srows: string[][] = [
      ['workload', 'live', 'live bytes', 'ops', 'paddock tier', ...sweepPeers.map((p) => `${p} ns/op`), 'paddock/floor', 'paddock/thi.ng'],
    ];
    for (const w of sweepWorkloads) {
      if (w.kind !== 'churn') continue;
      const bs = w.blockSize ?? 0;
      srows.push([
        w.name,
        fmtCount(w.live),
        fmtMiB(w.live * bs),
        fmtCount(w.ops),
        tierOf(bs),
        ...sweepPeers.map((p) => cellText(w.name, p)),
        fmtRatio(ratio(figures, w.name, 'paddock', 'floor')),
        fmtRatio(ratio(figures, w.name, 'paddock', 'thi.ng')),
      ]);
    }
    out(layout(srows));
    out('(time per op only: the timed loop does not touch the blocks it gets; the prefill did. See the spread and time-capped lines above.)');
  }

  for (const x of suites) {
    out();
    for (const line of x.out.lines) out(line);
  }

  // --- the programs and their targets ---
  if (programs.length > 0) {
    out();
    out(`the programs: ${mode.programMs} ms a timed run; ${programs[0] ? '' : ''}warm-up/measured rounds as set; peers interleaved, order rotating`);
    for (const line of programLines(programs, commandLine())) out(line);
  }
  const pcSamples = new Map<string, Map<string, number[]>>();
  for (const w of mainWorkloads) {
    const m = new Map<string, number[]>();
    for (const c of cells.get(w.name)!.values()) if (c.error === null && c.opsPerRound >= w.ops) m.set(c.peer, c.samples);
    pcSamples.set(w.name, m);
  }
  const idleWindow = programSpecs({ ms: mode.programMs, full: mode.name === 'full' }).find((x) => x.program === 'idle')!.params.window;
  const targets8 = programTargets(programs, { samples: pcSamples }, idleWindow);
  for (const line of targetLines(targets8)) out(line);

  // --- JSON ---
  const doc = {
    schema: 'paddock-bench/1',
    date: new Date(started).toISOString(),
    elapsedSeconds: (Date.now() - started) / 1000,
    command: commandLine(),
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
      maxBytes: Object.fromEntries(running.map((p) => [p.name, p.maxBytes])),
      sizes: { pair: 32, churnMin: 16, churnMax: 4096, sweep: SWEEP_SIZES, sweepLiveBytes: SWEEP_LIVE_BYTES },
      sweepPaddockMaxBytes: PADDOCK_BIG_BYTES,
      paddockLargeMax: largeMax,
      memWorkloads: { warmup: ctx.warmup, rounds: ctx.rounds, holdCycles: mode.holdCycles, crossMs: mode.crossMs, chains: mode.chains },
    },
    peers: entries.map((e) => ({ name: e.name, status: e.status, reason: e.reason, selfCheck: e.selfCheck })),
    workloads: workloads.map((w) => ({
      name: w.name,
      kind: w.kind,
      group: isSweep(w) ? 'sweep' : w.kind,
      blockBytes: w.kind === 'churn' ? (w.blockSize ?? null) : 32,
      live: w.kind === 'churn' ? w.live : 0,
      ops: w.ops,
      results: Object.fromEntries(
        [...cells.get(w.name)!.values()].map((c) => [
          c.peer,
          {
            opsPerRound: c.opsPerRound,
            ...(summary.get(w.name)?.get(c.peer) ?? { median: null, min: null, max: null }),
            samplesNsPerOp: c.samples,
            warmupNsPerOp: c.warmup,
            prefillTouched: w.kind === 'churn' ? c.touched : null,
            peakRssBytes: c.peakRss,
            error: c.error,
          },
        ]),
      ),
      ratios: {
        'paddock/floor': ratio(figures, w.name, 'paddock', 'floor'),
        'paddock/thi.ng': ratio(figures, w.name, 'paddock', 'thi.ng'),
        'thi.ng/floor': ratio(figures, w.name, 'thi.ng', 'floor'),
        'paddock/paddock-classic': ratio(figures, w.name, 'paddock', 'paddock-classic'),
        'paddock-classic/floor': ratio(figures, w.name, 'paddock-classic', 'floor'),
      },
    })),
    targets: judged,
    hold: suites.find((x) => x.name === 'hold')?.out.json ?? null,
    cross: suites.find((x) => x.name === CROSS_NAME)?.out.json ?? null,
    realloc: suites.find((x) => x.name === REALLOC_NAME)?.out.json ?? null,
    setup: {
      seconds: setupSeconds,
      cc: nativeBuilds.cc,
      builds: Object.fromEntries(Object.entries(builds).map(([n, b]) => [n, b.ok ? { ok: true, command: b.command, cached: b.cached } : { ok: false, reason: b.reason }])),
    },
    peakRssMethod: peakMethod(),
    programs: programs.map((r) => ({
      name: r.spec.name,
      program: r.spec.program,
      group: r.spec.group,
      agents: r.spec.agents,
      params: r.spec.params,
      metric: r.spec.metric,
      unit: r.spec.unit,
      what: r.spec.what,
      heapBytes: r.spec.heapBytes,
      cells: r.cells,
      figures: cellFigures(r),
    })),
    targets8,
  };
  mkdirSync(dirname(opts.json), { recursive: true });
  writeFileSync(opts.json, `${JSON.stringify(doc, null, 2)}\n`);
  out();
  out(`json: ${relative(process.cwd(), opts.json) || opts.json} (${((Date.now() - started) / 1000).toFixed(0)} s)`);

  if (anyFailed()) return 1;
  if (opts.strict && judged.some((t) => t.status === 'NOT MET')) return 1;
  return 0;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function commandLine(): string {
  const script = relative(process.cwd(), process.argv[1] ?? '') || process.argv[1];
  const args = process.argv.slice(2).join(' ');
  const via = process.env.npm_lifecycle_event ? ` (via pnpm ${process.env.npm_lifecycle_event})` : '';
  return `node ${script}${args ? ` ${args}` : ''}${via}`;
}

main().then(
  // Exit once stdout has taken everything: a heap may leave handles open that would keep the process up.
  (code) => process.stdout.write('', () => process.exit(code)),
  (err) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
