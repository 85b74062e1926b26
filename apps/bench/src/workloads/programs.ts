/**
 * The programs (`program-specs.ts`): each run by every peer that can run it, in interleaved rounds (the
 * order of the peers rotates round by round), with the same figure kept per run: the program's rate (or
 * time), its peak resident memory, and its extras. `--only` takes each program by name, a group (`pony`,
 * `pathology`, `standard`) or `programs` for all.
 *
 * Peers: the three Paddock backends, plain JavaScript where the program has a plain-JS form, and the native
 * references; the single-agent programs also run every in-process peer (the floor, thi.ng, the wasm peers).
 */
import type { Adapter } from '../adapter.js';
import { elapsed, type PeerEntry, running, type RunContext } from '../context.js';
import { fmtRate, layout } from '../format.js';
import { roundsOr } from '../options.js';
import { recompile } from '../timed-loops.js';
import { type ProgramCell, type ProgramResult, Pool, type RunOutcome, runNativeProgram, runSingle, runSingleProfiled, runWorkers } from './program-runs.js';
import { type ProgramSpec, programSpecs } from './program-specs.js';
import type { WorkerMode } from './program-protocol.js';
import { cellFigures, programLines } from './programs-report.js';
import { binaryTreesLoop, buildThenFreeLoop, classNoReuseLoop, type SingleLoops } from './single.js';
import { SPLIT_HEAD, splitCells, splitRows } from './split-report.js';
import type { WorkloadDescriptor } from './workload.js';

/** The programs' names (the sizes, not the names, depend on the mode) and their groups. */
const MEMBERS = programSpecs({ ms: 0, full: false }).map((s) => ({ name: s.name, groups: ['programs', s.group] }));

/** Which peers run `spec` (in the registry's order) and which cannot, with the reason. */
function peersFor(spec: ProgramSpec, ctx: RunContext): { run: PeerEntry[]; skipped: Record<string, string> } {
  const run: PeerEntry[] = [];
  const skipped: Record<string, string> = {};
  for (const e of running(ctx, spec.agents === 0 ? 'one-agent' : 'agents')) {
    const why =
      e.ready!.plainJs && !spec.js
        ? spec.agents === 0
          ? 'no plain-JS form: the garbage collector frees when it likes, so a free has no time of its own'
          : 'no plain-JS form: blocks change hands between agents through shared memory, which JS objects cannot cross'
        : (e.descriptor.declines?.(spec.program) ?? null);
    if (why !== null) skipped[e.name] = why;
    else run.push(e);
  }
  for (const e of ctx.peers) if (e.status === 'skipped' || e.status === 'failed') skipped[e.name] = e.reason ?? e.status;
  return { run, skipped };
}

async function runPrograms(ctx: RunContext, picked: (name: string) => boolean): Promise<ProgramResult[]> {
  const { opts } = ctx;
  const mode = opts.mode;
  const specs = programSpecs({ ms: mode.programMs, full: mode.name === 'full' }).filter((sp) => picked(sp.name));
  if (specs.length === 0) return [];
  const warmup = roundsOr(opts.warmupGiven, mode.programWarmup);
  const rounds = roundsOr(opts.roundsGiven, mode.programRounds);
  const idleRounds = roundsOr(opts.roundsGiven, mode.idleRounds);
  const capMs = mode.programCapMs;

  const pools = new Map<string, Pool>();
  const poolFor = (key: string, workerMode: WorkerMode, url: string | null) => {
    let p = pools.get(key);
    if (!p) pools.set(key, (p = new Pool(workerMode, url)));
    return p;
  };
  // Each in-process peer: a fresh adapter, with its own copies of the single-agent loops.
  const adapters = new Map<string, { adapter: Adapter; loops: SingleLoops }>();
  for (const e of running(ctx, 'one-agent')) {
    if (e.ready!.adapter === undefined) continue;
    adapters.set(e.name, {
      adapter: e.ready!.adapter(),
      loops: {
        'binary-trees': recompile(binaryTreesLoop, `${e.name} bt`),
        'class-no-reuse': recompile(classNoReuseLoop, `${e.name} cnr`),
        'build-then-free': recompile(buildThenFreeLoop, `${e.name} btf`),
      },
    });
  }
  const results: ProgramResult[] = [];
  const plan = specs.map((spec) => ({ spec, peers: peersFor(spec, ctx) }));
  const totalRuns = plan.reduce((n, x) => n + x.peers.run.length * (x.spec.program === 'idle' ? idleRounds : warmup + rounds), 0);
  let done = 0;
  try {
    for (const { spec, peers } of plan) {
      const cells: ProgramCell[] = peers.run.map((e) => ({ peer: e.name, samples: [], warmup: [], error: null, skipped: null }));
      for (const [peer, why] of Object.entries(peers.skipped)) cells.push({ peer, samples: [], warmup: [], error: null, skipped: why });
      const active = cells.filter((c) => c.skipped === null);
      const warm = spec.program === 'idle' ? 0 : warmup;
      const total = spec.program === 'idle' ? idleRounds : warmup + rounds;
      for (let r = 0; r < total; r++) {
        for (let k = 0; k < active.length; k++) {
          const cell = active[(k + r) % active.length];
          done++;
          if (cell.error !== null || cell.skipped !== null) continue;
          const phase = r < warm ? `warm-up ${r + 1}/${warm}` : `round ${r - warm + 1}/${total - warm}`;
          ctx.progress.show(`[${done}/${totalRuns}] ${spec.name} ${phase} ${cell.peer} (${elapsed(ctx)})`, `${spec.name} ${r} ${cell.peer}`);
          const t = Date.now();
          let out: RunOutcome;
          const ready = peers.run.find((e) => e.name === cell.peer)!.ready!;
          if (ready.bin !== undefined) out = runNativeProgram(spec, ready.bin);
          else if (spec.agents === 0) {
            const a = adapters.get(cell.peer) ?? null;
            out = runSingle(spec, cell.peer, a?.adapter ?? null, a?.loops ?? null);
          } else if (ready.heap !== undefined) {
            out = await runWorkers(spec, poolFor(cell.peer, 'paddock', ready.heap.url), 'paddock', ready.heap.createHeap);
          } else out = await runWorkers(spec, poolFor(cell.peer, 'js', null), 'js', null);
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
          if (!spec.timed && spec.program !== 'idle' && Date.now() - t > capMs) {
            cell.skipped = `one run took ${((Date.now() - t) / 1000).toFixed(1)} s (cap ${capMs / 1000} s): dropped after it`;
            if (r >= warm) continue;
            cell.samples.push(out.sample);
          }
        }
      }
      // One profiled run of the arena after the measured ones: where the time of its agents went (split-report.ts).
      if (spec.program !== 'idle' && spec.metric === 'rate') {
        for (const cell of active) {
          const ready = peers.run.find((e) => e.name === cell.peer)!.ready!;
          if (cell.error !== null || cell.samples.length === 0 || ready.heap === undefined || cell.peer !== 'paddock') continue;
          ctx.progress.show(`${spec.name} profiled run ${cell.peer} (${elapsed(ctx)})`, `${spec.name} profiled ${cell.peer}`);
          const a = adapters.get(cell.peer) ?? null;
          let out: RunOutcome;
          if (spec.agents !== 0) out = await runWorkers(spec, poolFor(cell.peer, 'paddock', ready.heap.url), 'paddock', ready.heap.createHeap, true);
          else if (a !== null) out = await runSingleProfiled(spec, cell.peer, a.adapter, a.loops, ready.heap.url);
          else continue;
          cell.profiled = out.ok && out.sample.cpu !== undefined && out.sample.value !== null ? { value: out.sample.value, cpu: out.sample.cpu } : null;
        }
      }
      results.push({ spec, cells });
    }
  } finally {
    await Promise.all([...pools.values()].map((p) => p.close()));
  }
  return results;
}

function programsReport(programs: ProgramResult[], ctx: RunContext) {
  const lines: string[] = [];
  if (programs.length > 0) {
    lines.push('');
    lines.push(`the programs: ${ctx.opts.mode.programMs} ms a timed run; warm-up/measured rounds as set; peers interleaved, order rotating`);
    lines.push(...programLines(programs, ctx.command));
    const split = splitRows(programs.map((r) => ({ name: r.spec.name, metric: r.spec.metric, agents: r.spec.agents, cells: r.cells })));
    if (split.length > 0) {
      lines.push('');
      lines.push('each program\'s gap to native, split: the floor is the JavaScript program with an allocator that costs nearly nothing (split-report.ts):');
      lines.push(layout([SPLIT_HEAD.map((h, i) => (i === 0 ? `  ${h}` : h)), ...split.map((r) => splitCells(r, (x) => `${fmtRate(x)}/s`).map((c, i) => (i === 0 ? `  ${c}` : c)))]));
    }
  }
  return { lines, json: { programs: programs.map(programJson) } };
}

function programJson(r: ProgramResult) {
  return {
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
  };
}

export const programs: WorkloadDescriptor<ProgramResult[]> = {
  name: 'programs',
  members: MEMBERS,
  run: runPrograms,
  // A program's failures stay in its table: they do not fail the peer.
  failures: () => [],
  report: programsReport,
};
