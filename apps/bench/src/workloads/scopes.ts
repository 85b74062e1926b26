/**
 * The `scopes` group: Paddock's three designs priced on the same calls, as change against the arena.
 *
 * Three variants: `arena` (pool_arena, a malloc and a free per allocation: the base), `scope` (pool_arena, one
 * `heap.scope()` per call on the hot call site, `s.malloc` for every allocation of the call) and `global`
 * (pool_global under every allocation, a malloc and a free each). Three lanes (`scopes-lanes.ts`):
 * `scopes-control` (the work, no allocation: must read ~0% for every variant, or the harness is biased),
 * `scopes-scratch` (a 4 KiB scratch buffer and three small strings per call) and `scopes-startup` (a payload
 * of many small records decoded into fresh blocks, on a fresh heap each round, so its first-touch faults are
 * in the figure). Control and scratch run in slices: within a round every variant runs a slice of calls in
 * turn, the order rotating slice by slice and round by round, each variant on its own fresh heap of the round.
 * Start-up runs once per variant a round, the order rotating. Each lane's figure is ns per call; each
 * variant's change against the base is the change of the medians with its 95% bootstrap interval.
 *
 * And `scopes-bump`: `scope.malloc(n)` per allocation against a bare bump allocator over a typed array (the
 * same 16-byte rounding), interleaved the same way; the target is a scope allocation within 2x the bump.
 */
import { elapsed, running, type RunContext } from '../context.js';
import { between, mulberry32 } from '../draws.js';
import { errorText, fmtNs, fmtRatio, layout } from '../format.js';
import { collectGarbage, settle } from '../memory.js';
import { roundsOr } from '../options.js';
import type { CreateHeap } from '../peers/paddock-heap.js';
import { estimate } from '../stats.js';
import { recompile } from '../timed-loops.js';
import {
  BumpFloor,
  bumpLoop,
  controlLoop,
  type LaneHeap,
  type LaneWork,
  recordWork,
  SCRATCH_BYTES,
  scratchMallocLoop,
  scratchScopeLoop,
  scratchWork,
  startupMallocLoop,
  startupScopeLoop,
  STRING_BYTES,
} from './scopes-lanes.js';
import { type LaneName, scopeRows, scopesReading, scopeTargets, type ScopesJson, VARIANTS, type VariantName } from './scopes-figures.js';
import type { Failure, WorkloadDescriptor, WorkloadReport } from './workload.js';

export const LANES: readonly { readonly name: LaneName; readonly what: string }[] = [
  { name: 'control', what: 'the scratch call\'s work into buffers allocated before timing: no allocation (must read ~0%)' },
  { name: 'scratch', what: `per call a ${SCRATCH_BYTES} B scratch buffer and ${STRING_BYTES.length} small strings (${STRING_BYTES.join(', ')} B): a word stream encoded, hashed, the hash written as text and hashed` },
  { name: 'startup', what: 'a start-up burst: one call decodes a payload of length-prefixed records (8..120 B) into a block each, on a fresh heap (first-touch faults included); everything released at the end' },
];

/** How much each lane does a round, by mode: `--rounds` / `--warmup` set the rounds. */
export interface ScopesSizes {
  readonly warmup: number;
  readonly rounds: number;
  /** Control and scratch: slices a round, calls per slice (each variant). */
  readonly slices: number;
  readonly sliceCalls: number;
  /** Start-up: records in the payload. */
  readonly records: number;
  /** The bump target: slices a round, allocations a slice (each side). */
  readonly bumpSlices: number;
  readonly bumpAllocs: number;
}

const QUICK_SIZES: ScopesSizes = { warmup: 3, rounds: 21, slices: 20, sliceCalls: 200, records: 20_000, bumpSlices: 8, bumpAllocs: 100_000 };
const FULL_SIZES: ScopesSizes = { warmup: 5, rounds: 41, slices: 40, sliceCalls: 200, records: 20_000, bumpSlices: 16, bumpAllocs: 100_000 };

/** Each variant's heap in the lanes (growable: a cap). */
const LANE_HEAP_BYTES = 256 * 1024 * 1024;

export function scopesSizes(ctx: RunContext): ScopesSizes {
  const { opts } = ctx;
  const base = opts.mode.name === 'full' ? FULL_SIZES : QUICK_SIZES;
  return { ...base, warmup: roundsOr(opts.warmupGiven, base.warmup), rounds: roundsOr(opts.roundsGiven, base.rounds) };
}

/** One variant in one lane: ns per call of each round. */
export interface LaneCell {
  readonly variant: VariantName;
  readonly samples: number[];
  readonly warmup: number[];
  error: string | null;
}

export interface LaneResult {
  readonly lane: LaneName;
  readonly callsPerRound: number;
  readonly cells: LaneCell[];
}

export interface BumpResult {
  /** ns per allocation of each measured round. */
  readonly scope: number[];
  readonly bump: number[];
  error: string | null;
}

export interface ScopesResult {
  readonly sizes: ScopesSizes | null;
  readonly lanes: LaneResult[];
  readonly bump: BumpResult | null;
  /** Variants that could not run (their peer skipped, failed or not picked), with the reason. */
  readonly missing: { readonly variant: VariantName; readonly reason: string }[];
}

/** A variant ready to run: its heap maker and its private copies of the loops it calls. */
interface Runner {
  readonly variant: VariantName;
  readonly createHeap: CreateHeap;
  readonly work: LaneWork;
  readonly control: typeof controlLoop;
  readonly scratch: typeof scratchMallocLoop;
  readonly startup: typeof startupMallocLoop;
}

/** A private copy of the lanes' work for one variant. */
function laneWork(owner: string): LaneWork {
  return { scratch: recompile(scratchWork, `${owner} scratch`), record: recompile(recordWork, `${owner} record`) };
}

function runnerFor(variant: (typeof VARIANTS)[number], createHeap: CreateHeap): Runner {
  const owner = `scopes ${variant.name}`;
  return {
    variant: variant.name,
    createHeap,
    work: laneWork(owner),
    control: recompile(controlLoop, owner),
    // The scope form runs on one variant only: its own function is its own copy.
    scratch: variant.form === 'scope' ? scratchScopeLoop : recompile(scratchMallocLoop, owner),
    startup: variant.form === 'scope' ? startupScopeLoop : recompile(startupMallocLoop, owner),
  };
}

/** The start-up payload: `records` records, each a length byte (8..120) and that many masked bytes. */
export function startupPayload(records: number, seed: number): Uint8Array {
  const next = mulberry32(seed ^ 0x5c0be);
  const lens = new Int32Array(records);
  let total = 0;
  for (let r = 0; r < records; r++) total += 1 + (lens[r] = between(next, 8, 120));
  const out = new Uint8Array(total);
  let at = 0;
  for (let r = 0; r < records; r++) {
    out[at++] = lens[r];
    for (let i = 0; i < lens[r]; i++) out[at++] = next() & 0xff;
  }
  return out;
}

const now = () => process.hrtime.bigint();

/** Runs the picked members with the variants whose peers run in `ctx`, at `sizes` (the mode's, by default). */
export function runScopes(ctx: RunContext, picked: (name: string) => boolean, sizes: ScopesSizes = scopesSizes(ctx)): ScopesResult {
  const want = LANES.filter((l) => picked(`scopes-${l.name}`));
  const wantBump = picked('scopes-bump');
  if (want.length === 0 && !wantBump) return { sizes: null, lanes: [], bump: null, missing: [] };
  const peers = running(ctx, 'pair-churn');
  const runners: Runner[] = [];
  const missing: { variant: VariantName; reason: string }[] = [];
  for (const v of VARIANTS) {
    const e = peers.find((p) => p.name === v.peer);
    if (e?.ready?.heap === undefined) {
      const any = ctx.peers.find((p) => p.name === v.peer);
      missing.push({ variant: v.name, reason: `${v.peer} ${any ? (any.status === 'ran' ? 'has no heap' : any.status) : 'absent'}${any?.reason ? ` (${any.reason})` : ''}` });
      continue;
    }
    runners.push(runnerFor(v, e.ready.heap.createHeap));
  }
  const total = sizes.warmup + sizes.rounds;
  const lanes: LaneResult[] = [];
  const base = runners.find((r) => r.variant === 'arena');
  for (const lane of want) {
    const cells = runners.map((r): LaneCell => ({ variant: r.variant, samples: [], warmup: [], error: null }));
    const callsPerRound = lane.name === 'startup' ? 1 : sizes.slices * sizes.sliceCalls;
    lanes.push({ lane: lane.name, callsPerRound, cells });
    if (base === undefined) continue;
    const payload = lane.name === 'startup' ? startupPayload(sizes.records, ctx.opts.seed) : null;
    for (let round = 0; round < total; round++) {
      const phase = round < sizes.warmup ? `warm-up ${round + 1}/${sizes.warmup}` : `round ${round - sizes.warmup + 1}/${sizes.rounds}`;
      ctx.progress.show(`scopes-${lane.name} ${phase} (${elapsed(ctx)})`, `scopes-${lane.name} ${round}`);
      const ns = payload !== null ? startupRound(runners, cells, round, payload, sizes.records) : slicedRound(lane.name, runners, cells, round, sizes, ctx.opts.seed);
      for (let k = 0; k < cells.length; k++) {
        if (cells[k].error !== null) continue;
        (round < sizes.warmup ? cells[k].warmup : cells[k].samples).push(ns[k] / callsPerRound);
      }
    }
  }
  const bump = wantBump && base !== undefined ? runBump(ctx, base.createHeap, sizes) : null;
  return { sizes, lanes, bump, missing };
}

/**
 * One round of the control or the scratch lane: a fresh heap per variant, garbage collected once, then `slices` slices, in each every
 * variant runs `sliceCalls` calls in turn, the order rotating. Returns each variant's time (ns). Every variant
 * does the same work: their results must agree, or the variant's cell fails.
 */
function slicedRound(lane: LaneName, runners: readonly Runner[], cells: LaneCell[], round: number, sizes: ScopesSizes, seed: number): number[] {
  const n = runners.length;
  const heaps = freshHeaps(runners, cells);
  // The control lane's buffers: allocated before timing, once per heap.
  const fixed = heaps.map((h) => {
    const f = new Int32Array(4);
    if (h === null || lane !== 'control') return f;
    f[0] = h.malloc(SCRATCH_BYTES);
    for (let i = 0; i < STRING_BYTES.length; i++) f[i + 1] = h.malloc(STRING_BYTES[i]);
    return f;
  });
  settle(collectGarbage);
  const ns = new Array<number>(n).fill(0);
  for (let s = 0; s < sizes.slices; s++) {
    const sliceSeed = (seed + round * sizes.slices * sizes.sliceCalls + s * sizes.sliceCalls) | 0;
    let expect: number | null = null;
    for (let j = 0; j < n; j++) {
      const k = (j + s + round) % n;
      const heap = heaps[k];
      if (heap === null || cells[k].error !== null) continue;
      const r = runners[k];
      let out: number;
      const t0 = now();
      try {
        out = lane === 'control' ? r.control(heap, r.work, sizes.sliceCalls, sliceSeed, fixed[k]) : r.scratch(heap, r.work, sizes.sliceCalls, sliceSeed);
      } catch (err) {
        cells[k].error = `threw: ${errorText(err)}`;
        continue;
      }
      ns[k] += Number(now() - t0);
      if (lane !== 'control' && out === 0) cells[k].error = 'malloc returned 0 (out of memory)';
      else if (expect === null) expect = out;
      else if (out !== expect) cells[k].error = `its calls computed ${out}, another variant's ${expect}: not the same work`;
    }
  }
  return ns;
}

/**
 * One round of the start-up lane: a fresh heap per variant, made before timing, garbage collected once (the
 * previous round's heaps go then, not while a variant is timed), then each variant, the order rotating,
 * decodes the payload into its heap.
 */
function startupRound(runners: readonly Runner[], cells: LaneCell[], round: number, payload: Uint8Array, records: number): number[] {
  const n = runners.length;
  const ns = new Array<number>(n).fill(0);
  const ptrs = new Int32Array(records);
  const heaps = freshHeaps(runners, cells);
  settle(collectGarbage);
  let expect: number | null = null;
  for (let j = 0; j < n; j++) {
    const k = (j + round) % n;
    const heap = heaps[k];
    if (heap === null || cells[k].error !== null) continue;
    const r = runners[k];
    try {
      const t0 = now();
      const out = r.startup(heap, r.work, payload, records, ptrs);
      ns[k] = Number(now() - t0);
      if (out === 0) cells[k].error = 'malloc returned 0 (out of memory)';
      else if (expect === null) expect = out;
      else if (out !== expect) cells[k].error = `its decode computed ${out}, another variant's ${expect}: not the same work`;
    } catch (err) {
      cells[k].error = `threw: ${errorText(err)}`;
    }
  }
  return ns;
}

/** A fresh heap per variant (null where `createHeap` threw: the variant's cell then fails). */
function freshHeaps(runners: readonly Runner[], cells: LaneCell[]): (LaneHeap | null)[] {
  return runners.map((r, k) => {
    try {
      return r.createHeap({ maxBytes: LANE_HEAP_BYTES });
    } catch (err) {
      cells[k].error ??= `createHeap threw: ${errorText(err)}`;
      return null;
    }
  });
}

/** The bump target: `scope.malloc` against the bare bump, slice by slice, the order rotating. */
function runBump(ctx: RunContext, createHeap: CreateHeap, sizes: ScopesSizes): BumpResult {
  const result: BumpResult = { scope: [], bump: [], error: null };
  const next = mulberry32(ctx.opts.seed ^ 0xb0b);
  const draws = new Int32Array(sizes.bumpAllocs);
  let bytes = 16;
  for (let i = 0; i < draws.length; i++) bytes += ((draws[i] = between(next, 8, 128)) + 15) & -16;
  const scopeLoop = recompile(bumpLoop, 'scopes-bump scope');
  const floorLoop = recompile(bumpLoop, 'scopes-bump floor');
  const floorBytes = new Uint8Array(bytes);
  const total = sizes.warmup + sizes.rounds;
  for (let round = 0; round < total; round++) {
    const phase = round < sizes.warmup ? `warm-up ${round + 1}/${sizes.warmup}` : `round ${round - sizes.warmup + 1}/${sizes.rounds}`;
    ctx.progress.show(`scopes-bump ${phase} (${elapsed(ctx)})`, `scopes-bump ${round}`);
    settle(collectGarbage);
    try {
      const heap: LaneHeap = createHeap({ maxBytes: LANE_HEAP_BYTES });
      let scopeNs = 0;
      let floorNs = 0;
      for (let s = 0; s < sizes.bumpSlices; s++) {
        for (let j = 0; j < 2; j++) {
          if ((j + s + round) % 2 === 0) {
            const scope = heap.scope();
            const t0 = now();
            const out = scopeLoop(scope, draws);
            scopeNs += Number(now() - t0);
            scope.close();
            if (out === 0) throw new Error('scope.malloc returned only 0');
          } else {
            const floor = new BumpFloor(floorBytes);
            const t0 = now();
            floorLoop(floor, draws);
            floorNs += Number(now() - t0);
          }
        }
      }
      const allocs = sizes.bumpSlices * sizes.bumpAllocs;
      (round < sizes.warmup ? [] : result.scope).push(scopeNs / allocs);
      (round < sizes.warmup ? [] : result.bump).push(floorNs / allocs);
    } catch (err) {
      result.error = `threw: ${errorText(err)}`;
      break;
    }
  }
  return result;
}

export function scopesReport(r: ScopesResult, ctx: RunContext): WorkloadReport {
  if (r.sizes === null) return { lines: [], json: {} };
  const partial: Omit<ScopesJson, 'targets'> = {
    command: ctx.command,
    rounds: { warmup: r.sizes.warmup, rounds: r.sizes.rounds },
    variants: VARIANTS.map((v) => ({ name: v.name, what: v.what })),
    missing: r.missing,
    lanes: r.lanes.map((l) => ({
      name: `scopes-${l.lane}`,
      lane: l.lane,
      what: LANES.find((x) => x.name === l.lane)!.what,
      callsPerRound: l.callsPerRound,
      results: Object.fromEntries(l.cells.map((c) => [c.variant, { samplesNsPerCall: c.samples, warmupNsPerCall: c.warmup, error: c.error }])),
    })),
    bump: r.bump && { samplesScopeNs: r.bump.scope, samplesBumpNs: r.bump.bump, error: r.bump.error },
  };
  const doc: ScopesJson = { ...partial, targets: scopeTargets(partial) };
  const lines: string[] = [''];
  const out = (line = '') => lines.push(line);
  out(`scopes: the three designs on the same calls, ns per call, change against the arena with its 95% interval (${r.sizes.warmup} warm-up + ${r.sizes.rounds} measured rounds)`);
  for (const v of VARIANTS) out(`  ${v.name}: ${v.what}`);
  for (const m of r.missing) out(`  ${m.variant}: not run: ${m.reason}`);
  const rows = [['lane', 'variant', 'median ns/call', '95% CI', 'vs arena'], ...scopeRows(doc.lanes, fmtNs)];
  out(layout(rows));
  if (doc.bump) {
    const sc = estimate(doc.bump.samplesScopeNs);
    const b = estimate(doc.bump.samplesBumpNs);
    out(
      doc.bump.error !== null
        ? `scopes-bump: FAILED: ${doc.bump.error}`
        : `scopes-bump: scope.malloc ${sc ? fmtNs(sc.median) : '-'} ns, bare bump ${b ? fmtNs(b.median) : '-'} ns per allocation (${fmtRatio(sc && b ? sc.median / b.median : null)})`,
    );
  }
  if (doc.targets.length > 0) {
    out('targets (scopes):');
    out(layout(doc.targets.map((t) => [`  ${t.workload}`, t.rule, t.status, t.note])));
  }
  out('reading (from these figures):');
  for (const line of scopesReading(doc)) out(`  ${line}`);
  return { lines, json: { scopes: doc }, notMet: doc.targets.filter((t) => t.status === 'NOT MET').length };
}

function scopesFailures(r: ScopesResult): Failure[] {
  const out: Failure[] = [];
  for (const lane of r.lanes) {
    for (const c of lane.cells) {
      if (c.error !== null) out.push({ peer: VARIANTS.find((v) => v.name === c.variant)!.peer, reason: `scopes-${lane.lane} (${c.variant}): ${c.error}` });
    }
  }
  if (r.bump?.error) out.push({ peer: 'paddock', reason: `scopes-bump: ${r.bump.error}` });
  return out;
}

export const scopes: WorkloadDescriptor<ScopesResult> = {
  name: 'scopes',
  members: [...LANES.map((l) => ({ name: `scopes-${l.name}`, groups: ['scopes'] })), { name: 'scopes-bump', groups: ['scopes'] }],
  run: (ctx, picked) => runScopes(ctx, picked),
  failures: scopesFailures,
  report: scopesReport,
};
