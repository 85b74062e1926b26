/**
 * The `views` group: the heap's typed views and strings (`@paddock/allocator`'s `mallocAs`, `mallocString`) on the
 * arena, each against what a caller would write without them.
 *
 * - `pair-view`: `mallocAs(Float64Array, 4)` + `free(view)` against `malloc(32)` + `free(ptr)` with the Float64Array
 *   made by hand over the heap's buffer; both write and read one element. Target: the view pair within 1.5x.
 * - `view-strings`: `mallocString(s)` + `readString(p)` + `free(p)` against `structuredClone(s)` (what a postMessage
 *   of the string costs its two ends, without the message), for three sets: short ASCII, mixed (2-, 3- and 4-byte
 *   UTF-8), and long (4 KiB). No target: the figure says what keeping a string in the heap costs.
 *
 * Each round is a fresh heap, then slices in which both sides run in turn, the order rotating; ns per operation
 * of each round, the median of the measured rounds, and the ratio of the medians.
 */
import { elapsed, running, type RunContext } from '../context.js';
import { mulberry32 } from '../draws.js';
import { errorText, fmtNs, fmtRatio, layout } from '../format.js';
import { collectGarbage, settle } from '../memory.js';
import { roundsOr } from '../options.js';
import type { CreateHeap } from '../peers/paddock-heap.js';
import { estimate } from '../stats.js';
import { recompile } from '../timed-loops.js';
import { cloneStringLoop, heapStringLoop, pointerViewPairLoop, type ViewHeap, viewPairLoop } from './views-loops.js';
import type { Failure, WorkloadDescriptor, WorkloadReport } from './workload.js';

const HEAP_BYTES = 256 * 1024 * 1024;
/** The view pair within this factor of the pointer pair with a hand-made view. */
const PAIR_VIEW_TARGET = 1.5;

interface Sizes {
  readonly warmup: number;
  readonly rounds: number;
  readonly slices: number;
  readonly pairs: number;
}
const QUICK: Sizes = { warmup: 2, rounds: 11, slices: 8, pairs: 200_000 };
const FULL: Sizes = { warmup: 3, rounds: 21, slices: 8, pairs: 400_000 };

/** Operations per slice of a string set, as a fraction of the pairs (a long string costs far more). */
const STRING_SETS = [
  { set: 'short', what: 'ASCII, 8..24 characters', share: 1 / 4 },
  { set: 'mixed', what: 'mixed UTF-8 (2-, 3- and 4-byte sequences), 12..40 characters', share: 1 / 4 },
  { set: 'long', what: '4 KiB of text, one non-ASCII character in 64', share: 1 / 64 },
] as const;

interface Side {
  readonly samples: number[];
}
interface Lane {
  readonly name: string;
  readonly what: string;
  readonly opsPerRound: number;
  readonly a: Side;
  readonly b: Side;
  error: string | null;
}
export interface ViewsResult {
  readonly sizes: Sizes | null;
  readonly lanes: Lane[];
  readonly missing: string | null;
}

/** The strings of a set: deterministic from `seed`. */
export function stringSet(set: (typeof STRING_SETS)[number]['set'], seed: number): string[] {
  const next = mulberry32(seed);
  const pick = (s: string) => s[next() % s.length]!;
  const ascii = 'abcdefghijklmnopqrstuvwxyz0123456789-_ ';
  const wide = ['é', 'ü', 'ß', '€', '中', '文', '😀', '🚀', 'a', 'b', 'c', ' '];
  const out: string[] = [];
  for (let k = 0; k < 64; k++) {
    let s = '';
    if (set === 'short') {
      const n = 8 + (next() % 17);
      for (let i = 0; i < n; i++) s += pick(ascii);
    } else if (set === 'mixed') {
      const n = 12 + (next() % 29);
      while (s.length < n) s += wide[next() % wide.length]!;
    } else {
      while (s.length < 4096) s += (s.length % 64 === 63 ? wide[next() % 6]! : pick(ascii));
    }
    out.push(s);
  }
  return out;
}

const now = () => process.hrtime.bigint();

/** One lane: `a` and `b` (each `(heap) => checksum`, running `ops` operations) slice by slice on a fresh heap a round. */
function runLane(ctx: RunContext, lane: Lane, createHeap: CreateHeap, sizes: Sizes, a: (h: ViewHeap) => number, b: (h: ViewHeap) => number): void {
  const total = sizes.warmup + sizes.rounds;
  for (let round = 0; round < total; round++) {
    const phase = round < sizes.warmup ? `warm-up ${round + 1}/${sizes.warmup}` : `round ${round - sizes.warmup + 1}/${sizes.rounds}`;
    ctx.progress.show(`${lane.name} ${phase} (${elapsed(ctx)})`, `${lane.name} ${round}`);
    settle(collectGarbage);
    try {
      const heap = createHeap({ maxBytes: HEAP_BYTES }) as unknown as ViewHeap & { detach(): void };
      let aNs = 0;
      let bNs = 0;
      for (let s = 0; s < sizes.slices; s++) {
        for (let j = 0; j < 2; j++) {
          const first = (j + s + round) % 2 === 0;
          const t0 = now();
          const out = first ? a(heap) : b(heap);
          const ns = Number(now() - t0);
          if (first) aNs += ns;
          else bNs += ns;
          if (!(out > 0)) throw new Error(`a ${first ? 'first' : 'second'} side returned ${out}`);
        }
      }
      heap.detach();
      if (round >= sizes.warmup) {
        lane.a.samples.push(aNs / (sizes.slices * lane.opsPerRound));
        lane.b.samples.push(bNs / (sizes.slices * lane.opsPerRound));
      }
    } catch (err) {
      lane.error = `threw: ${errorText(err)}`;
      return;
    }
  }
}

export function runViews(ctx: RunContext, picked: (name: string) => boolean): ViewsResult {
  const wantPair = picked('pair-view');
  const wantStrings = picked('view-strings');
  if (!wantPair && !wantStrings) return { sizes: null, lanes: [], missing: null };
  const base = ctx.opts.mode.name === 'full' ? FULL : QUICK;
  const sizes: Sizes = { ...base, warmup: roundsOr(ctx.opts.warmupGiven, base.warmup), rounds: roundsOr(ctx.opts.roundsGiven, base.rounds) };
  const peer = running(ctx, 'pair-churn').find((p) => p.name === 'paddock');
  const createHeap = peer?.ready?.heap?.createHeap;
  if (createHeap === undefined) return { sizes, lanes: [], missing: 'the paddock peer (pool_arena) did not run' };
  const lanes: Lane[] = [];
  if (wantPair) {
    const lane: Lane = { name: 'pair-view', what: 'mallocAs(Float64Array, 4) + free(view), against malloc(32) + new Float64Array(buffer, p, 4) + free(p)', opsPerRound: sizes.pairs, a: { samples: [] }, b: { samples: [] }, error: null };
    const viewLoop = recompile(viewPairLoop, 'pair-view view');
    const pointerLoop = recompile(pointerViewPairLoop, 'pair-view pointer');
    runLane(ctx, lane, createHeap, sizes, (h) => viewLoop(h, sizes.pairs) + 1, (h) => pointerLoop(h, sizes.pairs) + 1);
    lanes.push(lane);
  }
  if (wantStrings) {
    for (const [k, set] of STRING_SETS.entries()) {
      const strings = stringSet(set.set, ctx.opts.seed ^ (k + 1));
      const ops = Math.round(sizes.pairs * set.share);
      const lane: Lane = { name: `view-strings ${set.set}`, what: set.what, opsPerRound: ops, a: { samples: [] }, b: { samples: [] }, error: null };
      const heapLoop = recompile(heapStringLoop, `view-strings ${set.set} heap`);
      const cloneLoop = recompile(cloneStringLoop, `view-strings ${set.set} clone`);
      runLane(ctx, lane, createHeap, sizes, (h) => heapLoop(h, strings, ops), (h) => cloneLoop(h, strings, ops));
      lanes.push(lane);
    }
  }
  return { sizes, lanes, missing: null };
}

/** What the group writes to the JSON document (`views`). */
export interface ViewsJson {
  readonly command: string;
  readonly rounds: { readonly warmup: number; readonly rounds: number };
  readonly lanes: readonly { name: string; what: string; opsPerRound: number; samplesHeapNs: number[]; samplesOtherNs: number[]; ratio: number | null; error: string | null }[];
}

/** The group's section of docs/PERFORMANCE.md (report-md.ts): medians with their intervals and the ratios. */
export function viewsSection(v: ViewsJson, alone: string): string[] {
  const ns = (x: number) => `${fmtNs(x)} ns`;
  const rows = v.lanes.map((l) => {
    const a = estimate(l.samplesHeapNs);
    const b = estimate(l.samplesOtherNs);
    if (l.error !== null || !a || !b) return [`\`${l.name}\``, l.what, l.error ?? '-', '-', '-'];
    return [`\`${l.name}\``, l.what, `${ns(a.median)} [${ns(a.lo)} .. ${ns(a.hi)}]`, `${ns(b.median)} [${ns(b.lo)} .. ${ns(b.hi)}]`, fmtRatio(a.median / b.median)];
  });
  const pair = v.lanes.find((l) => l.name === 'pair-view');
  return [
    '## Typed views and strings (`views`)',
    '',
    `On pool_arena, ns per operation, median of ${v.rounds.rounds} rounds (${v.rounds.warmup} warm-up) with its 95% interval; both sides of a lane on the same fresh heap each round, ` +
      `in slices, the order rotating. Command: \`${v.command}\`; this group alone: \`${alone}\`.`,
    '',
    '- `pair-view`: `mallocAs(Float64Array, 4)` + `free(view)` against `malloc(32)` + `new Float64Array(heap.u8.buffer, p, 4)` + `free(p)`; both write and read one element. ' +
      `Target: within ${PAIR_VIEW_TARGET}x${pair?.ratio != null ? ` (${pair.ratio <= PAIR_VIEW_TARGET ? 'met' : 'NOT MET'}: ${fmtRatio(pair.ratio)})` : ''}.`,
    '- `view-strings`: `mallocString(s)` + `readString(p)` + `free(p)` against `structuredClone(s)`, what a `postMessage` of the string costs its two ends (the message itself aside). No target.',
    '',
    '| lane | what | heap | the other side | ratio |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`),
    '',
  ];
}

function viewsReport(r: ViewsResult, ctx: RunContext): WorkloadReport {
  if (r.sizes === null) return { lines: [], json: {} };
  const lines: string[] = [''];
  lines.push(`views: typed views and strings on the arena, ns per operation, median of ${r.sizes.rounds} rounds (${r.sizes.warmup} warm-up)`);
  if (r.missing !== null) lines.push(`  not run: ${r.missing}`);
  const rows: string[][] = [['lane', 'what', 'heap ns', 'other ns', 'ratio']];
  let notMet = 0;
  const json = r.lanes.map((l) => {
    const a = estimate(l.a.samples);
    const b = estimate(l.b.samples);
    const ratio = a && b ? a.median / b.median : null;
    if (l.name === 'pair-view' && (ratio === null || ratio > PAIR_VIEW_TARGET)) notMet++;
    rows.push([l.name, l.what, l.error ?? (a ? fmtNs(a.median) : '-'), b ? fmtNs(b.median) : '-', fmtRatio(ratio)]);
    return { name: l.name, what: l.what, opsPerRound: l.opsPerRound, samplesHeapNs: l.a.samples, samplesOtherNs: l.b.samples, ratio, error: l.error };
  });
  lines.push(layout(rows));
  const pair = json.find((l) => l.name === 'pair-view');
  if (pair) lines.push(`target: pair-view within ${PAIR_VIEW_TARGET}x of the pointer pair with a hand-made view: ${pair.ratio !== null && pair.ratio <= PAIR_VIEW_TARGET ? 'MET' : 'NOT MET'}`);
  if (json.some((l) => l.name.startsWith('view-strings'))) lines.push('view-strings: "other" is structuredClone of the same string (what a postMessage of it costs its two ends, the message aside)');
  const doc: ViewsJson = { command: ctx.command, rounds: { warmup: r.sizes.warmup, rounds: r.sizes.rounds }, lanes: json };
  return { lines, json: { views: doc }, notMet };
}

function viewsFailures(r: ViewsResult): Failure[] {
  return r.lanes.filter((l) => l.error !== null).map((l) => ({ peer: 'paddock', reason: `${l.name}: ${l.error}` }));
}

export const views: WorkloadDescriptor<ViewsResult> = {
  name: 'views',
  members: [
    { name: 'pair-view', groups: ['views'] },
    { name: 'view-strings', groups: ['views'] },
  ],
  run: (ctx, picked) => runViews(ctx, picked),
  failures: viewsFailures,
  report: viewsReport,
};
