/**
 * The workloads that are more than a timed loop: hold-then-free, cross-agent free between two workers,
 * and realloc growth chains across profile rungs. Each runs warm-up then measured rounds with the peers
 * interleaved and rotated, like the churn, and returns its table lines and its JSON (every sample).
 */
import { CROSS_BATCH, CROSS_BLOCK, CROSS_HEAP_BYTES, CROSS_MODES, CROSS_SLOTS, CrossPair, type CrossSample } from './cross.js';
import type { CrossMode } from './cross-protocol.js';
import { HOLD_SPECS, type HoldSample, type HoldSpec, runHold } from './hold.js';
import { type CreateFullHeap, FloorMem, type MemPeer, PADDOCK_BIG_BYTES, PaddockMem, ThingMem } from './mem.js';
import { CHAIN_END, CHAIN_FACTOR, CHAIN_RUNGS, CHAIN_START, type ChainSample, chainSizes, runChains } from './realloc.js';
import { fmtCount, fmtNs, fmtRatio, layout, type Summary, summarize } from './report.js';
import { sizeLabel } from './workloads.js';

const MiB = 1024 * 1024;

export interface SuiteContext {
  readonly warmup: number;
  readonly rounds: number;
  /** Peer families to run (null: all): floor, thi.ng, paddock, js. */
  readonly peers: ReadonlySet<string> | null;
  /** null when Paddock cannot run (skipped or failed its self-check). */
  readonly createHeap: CreateFullHeap | null;
  readonly paddockUrl: string | null;
  readonly progress: (text: string, key: string) => void;
  readonly started: number;
}

export interface SuiteOutput {
  readonly lines: string[];
  readonly json: unknown;
  /** Failures, as `peer workload: error`. */
  readonly failures: string[];
}

const wanted = (ctx: SuiteContext, family: string): boolean => ctx.peers === null || ctx.peers.has(family);

function phaseText(ctx: SuiteContext, r: number): string {
  return r < ctx.warmup ? `warm-up ${r + 1}/${ctx.warmup}` : `round ${r - ctx.warmup + 1}/${ctx.rounds}`;
}

function secs(ctx: SuiteContext): string {
  return `${((Date.now() - ctx.started) / 1000).toFixed(0)} s`;
}

export function fmtMiB(bytes: number | null): string {
  if (bytes === null) return '-';
  const m = bytes / MiB;
  return `${Math.abs(m) < 10 ? m.toFixed(2) : m.toFixed(1)} MiB`;
}

function median(xs: readonly number[]): number {
  return (summarize(xs) as Summary).median;
}

/** The memory peers for one workload: floor, thi.ng, then Paddock at `rungs`. */
function memPeers(ctx: SuiteContext, rungs: readonly number[]): MemPeer[] {
  const out: MemPeer[] = [];
  if (wanted(ctx, 'floor')) out.push(new FloorMem());
  if (wanted(ctx, 'thi.ng')) out.push(new ThingMem());
  if (ctx.createHeap !== null && wanted(ctx, 'paddock')) for (const r of rungs) out.push(new PaddockMem(ctx.createHeap, r));
  return out;
}

// --- hold-then-free --------------------------------------------------------------------------------

/** Paddock runs hold-then-free at the default rung and at both ends of the dial. */
export const HOLD_RUNGS = [1, 3, 10];

interface HoldCell {
  readonly peer: MemPeer;
  readonly samples: HoldSample[];
  readonly warmup: HoldSample[];
  error: string | null;
}

export function runHoldSuite(ctx: SuiteContext, specs: readonly HoldSpec[], cycles: number): SuiteOutput {
  const peers = memPeers(ctx, HOLD_RUNGS);
  const total = ctx.warmup + ctx.rounds;
  const results: { spec: HoldSpec; cells: HoldCell[] }[] = [];
  for (const spec of specs) {
    const cells = peers.map((peer): HoldCell => ({ peer, samples: [], warmup: [], error: null }));
    for (let r = 0; r < total; r++) {
      for (let k = 0; k < cells.length; k++) {
        const cell = cells[(k + r) % cells.length];
        if (cell.error !== null) continue;
        ctx.progress(`${spec.name} ${phaseText(ctx, r)} ${cell.peer.name} (${secs(ctx)})`, `${spec.name} ${r}`);
        const res = runHold(cell.peer, spec, cycles);
        if (!res.ok) cell.error = res.error;
        else (r < ctx.warmup ? cell.warmup : cell.samples).push(res.sample);
      }
    }
    results.push({ spec, cells });
  }

  const lines: string[] = [];
  const failures: string[] = [];
  lines.push(
    `hold-then-free: K blocks of S bytes, one byte written into every page of each, held, all freed; ${cycles} cycles a round ` +
      `on a fresh instance; medians of ${ctx.rounds} rounds (Paddock: ${fmtMiB(PADDOCK_BIG_BYTES)} heap, rungs ${HOLD_RUNGS.join(', ')})`,
  );
  const rows: string[][] = [
    ['workload', 'blocks', 'peer', 'ns/block', 'malloc+touch', 'free', '1st cycle', 'later cycles', 'held: committed', 'after free', 'ledger', 'rss held', 'rss after free'],
  ];
  for (const { spec, cells } of results) {
    for (const c of cells) {
      const label = [spec.name, `${spec.count} x ${sizeLabel(spec.size)}`, c.peer.name];
      if (c.error !== null) {
        failures.push(`${c.peer.name} ${spec.name}: ${c.error}`);
        rows.push([...label, 'failed']);
        continue;
      }
      const s = c.samples;
      const m = (f: (x: HoldSample) => number) => median(s.map(f));
      rows.push([
        ...label,
        fmtNs(m((x) => x.nsPerBlock)),
        fmtNs(m((x) => x.holdNsPerBlock)),
        fmtNs(m((x) => x.freeNsPerBlock)),
        fmtNs(m((x) => x.firstCycleNsPerBlock)),
        s[0].laterCyclesNsPerBlock === null ? '-' : fmtNs(m((x) => x.laterCyclesNsPerBlock as number)),
        fmtMiB(m((x) => x.committedHeld)),
        fmtMiB(m((x) => x.committedAfterFree)),
        s[0].ledgerAfterFree === null ? '-' : fmtMiB(m((x) => x.ledgerAfterFree as number)),
        fmtMiB(m((x) => x.residentHeld)),
        fmtMiB(m((x) => x.residentAfterFree)),
      ]);
    }
  }
  lines.push(layout(rows));
  lines.push(
    'committed: Paddock\'s committed bytes; the floor\'s and thi.ng\'s high-water mark (they never give memory back). ' +
      'rss: resident memory of the process above its level before the instance was made.',
  );
  const json = results.map(({ spec, cells }) => ({
    name: spec.name,
    blockBytes: spec.size,
    blocks: spec.count,
    cycles,
    results: Object.fromEntries(
      cells.map((c) => [
        c.peer.name,
        {
          rung: c.peer.rung,
          medianNsPerBlock: c.samples.length > 0 ? median(c.samples.map((x) => x.nsPerBlock)) : null,
          samples: c.samples,
          warmup: c.warmup,
          error: c.error,
        },
      ]),
    ),
  }));
  return { lines, json, failures };
}

// --- cross-agent free ------------------------------------------------------------------------------

export async function runCrossSuite(ctx: SuiteContext, durationMs: number): Promise<SuiteOutput> {
  const modes = CROSS_MODES.filter((m) => (m === 'paddock' ? ctx.createHeap !== null && wanted(ctx, 'paddock') : wanted(ctx, 'js')));
  const cells = modes.map((mode) => ({ mode, samples: [] as CrossSample[], warmup: [] as CrossSample[], error: null as string | null }));
  const pairs = new Map<CrossMode, CrossPair>();
  const total = ctx.warmup + ctx.rounds;
  try {
    for (const mode of modes) pairs.set(mode, new CrossPair(mode, ctx.paddockUrl, ctx.createHeap));
    for (let r = 0; r < total; r++) {
      for (let k = 0; k < cells.length; k++) {
        const cell = cells[(k + r) % cells.length];
        if (cell.error !== null) continue;
        ctx.progress(`cross-32 ${phaseText(ctx, r)} ${cell.mode} (${secs(ctx)})`, `cross ${r}`);
        const res = await pairs.get(cell.mode)!.run(r, durationMs);
        if (!res.ok) cell.error = res.error;
        else if (res.sample.bad !== 0) cell.error = `${res.sample.bad} blocks arrived with a wrong serial`;
        else if (res.sample.liveBytesAfter !== null && res.sample.liveBytesAfter !== 0) {
          cell.error = `the producer still has ${res.sample.liveBytesAfter} live bytes after every block was freed, flushed and drained`;
        } else (r < ctx.warmup ? cell.warmup : cell.samples).push(res.sample);
      }
    }
  } finally {
    await Promise.all([...pairs.values()].map((p) => p.close()));
  }

  const lines: string[] = [];
  const failures: string[] = [];
  lines.push(
    `cross-32: worker A mallocs ${CROSS_BLOCK} B blocks in batches of ${fmtCount(CROSS_BATCH)} and hands them to worker B, which frees them ` +
      `(at most ${CROSS_SLOTS} batches in flight); ${durationMs} ms a round, medians of ${ctx.rounds} rounds, end to end`,
  );
  const rows: string[][] = [['peer', 'blocks/s', 'ns/block', 'min .. max blocks/s', 'blocks a round', 'A blocked', 'B blocked', 'check']];
  const med = new Map<string, number>();
  for (const c of cells) {
    if (c.error !== null) {
      failures.push(`${c.mode} cross-32: ${c.error}`);
      rows.push([c.mode, 'failed']);
      continue;
    }
    const rates = c.samples.map((s) => s.blocksPerSecond);
    const sm = summarize(rates) as Summary;
    med.set(c.mode, sm.median);
    const last = c.samples[c.samples.length - 1];
    const check =
      c.mode === 'paddock'
        ? `serials ok; A live after B's flush + A's drain: ${fmtCount(last.liveBytesAfter ?? 0)} B; committed ${fmtMiB(last.committedBytes)}`
        : 'serials ok';
    rows.push([
      c.mode,
      fmtRate(sm.median),
      fmtNs(1e9 / sm.median),
      `${fmtRate(sm.min)} .. ${fmtRate(sm.max)}`,
      fmtCount(Math.round(median(c.samples.map((s) => s.blocks)))),
      fmtPct(median(c.samples.map((s) => s.producerWaitShare))),
      c.samples[0].consumerWaitShare === null ? '-' : fmtPct(median(c.samples.map((s) => s.consumerWaitShare as number))),
      check,
    ]);
  }
  lines.push(layout(rows));
  const p = med.get('paddock');
  const ratios: Record<string, number | null> = {};
  for (const base of ['js-transfer', 'js-typed']) {
    const b = med.get(base);
    ratios[`paddock/${base}`] = p !== undefined && b !== undefined ? p / b : null;
  }
  const ratioText = Object.entries(ratios)
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${k} ${fmtRatio(v)}`);
  if (ratioText.length > 0) lines.push(`throughput ratios (blocks/s): ${ratioText.join(', ')}`);
  if (modes.includes('paddock')) {
    lines.push(
      `paddock: ${fmtMiB(CROSS_HEAP_BYTES)} heap made by the main thread, both workers attachHeap(); B flush()es after every batch, ` +
        'A drain()s before every batch.',
    );
  }
  lines.push(
    'js-transfer: one transferred ArrayBuffer per batch; js-typed: one Int32Array(8) per block, all transferred in one message per batch. ' +
      'A/B blocked: share of the run the producer waited on a full ring / the consumer on an empty one (the JS consumer waits in its event loop: not measured).',
  );
  const json = {
    name: 'cross-32',
    blockBytes: CROSS_BLOCK,
    batch: CROSS_BATCH,
    slots: CROSS_SLOTS,
    durationMs,
    paddockHeapBytes: CROSS_HEAP_BYTES,
    results: Object.fromEntries(
      cells.map((c) => [
        c.mode,
        {
          medianBlocksPerSecond: med.get(c.mode) ?? null,
          samples: c.samples,
          warmup: c.warmup,
          error: c.error,
        },
      ]),
    ),
    ratios,
  };
  return { lines, json, failures };
}

function fmtPct(x: number): string {
  return `${(x * 100).toFixed(0)}%`;
}

function fmtRate(x: number): string {
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)} M`;
  if (x >= 1e3) return `${(x / 1e3).toFixed(1)} k`;
  return x.toFixed(0);
}

// --- realloc growth chains -------------------------------------------------------------------------

interface ChainCell {
  readonly peer: MemPeer;
  readonly samples: ChainSample[];
  readonly warmup: ChainSample[];
  error: string | null;
}

export function runReallocSuite(ctx: SuiteContext, chains: number, largeMax: number | null): SuiteOutput {
  const peers = memPeers(ctx, CHAIN_RUNGS);
  // Paddock's rungs first: they are what the table is about.
  peers.sort((a, b) => (a.family === 'paddock' ? 0 : 1) - (b.family === 'paddock' ? 0 : 1));
  const sizes = chainSizes();
  const reallocs = sizes.length - 1;
  const cells = peers.map((peer): ChainCell => ({ peer, samples: [], warmup: [], error: null }));
  const total = ctx.warmup + ctx.rounds;
  for (let r = 0; r < total; r++) {
    for (let k = 0; k < cells.length; k++) {
      const cell = cells[(k + r) % cells.length];
      if (cell.error !== null) continue;
      ctx.progress(`realloc ${phaseText(ctx, r)} ${cell.peer.name} (${secs(ctx)})`, `realloc ${r}`);
      const res = runChains(cell.peer, sizes, chains);
      if (!res.ok) cell.error = res.error;
      else (r < ctx.warmup ? cell.warmup : cell.samples).push(res.sample);
    }
  }

  const lines: string[] = [];
  const failures: string[] = [];
  const crossing =
    largeMax === null
      ? ''
      : `, crossing 1 MiB (class -> large) and largeMax ${fmtCount(largeMax)} B (large -> oversized)`;
  lines.push(
    `realloc: one block from ${sizeLabel(CHAIN_START)} to ${sizeLabel(CHAIN_END)} by ${CHAIN_FACTOR}x (${reallocs} reallocs${crossing}), ` +
      `every page it gains written, then freed; ${chains} chains a round on a fresh instance; medians of ${ctx.rounds} rounds`,
  );
  const rows: string[][] = [
    ['peer', 'ns/realloc', 'min .. max', '1st chain ms', 'later chains ms', 'committed peak', 'kept after', 'ledger after', 'rss peak', 'rss after'],
  ];
  interface Fig {
    ns: Summary;
    kept: number;
    later: number;
  }
  const figs = new Map<string, Fig>();
  for (const c of cells) {
    if (c.error !== null) {
      failures.push(`${c.peer.name} realloc: ${c.error}`);
      rows.push([c.peer.name, 'failed']);
      continue;
    }
    const s = c.samples;
    const m = (f: (x: ChainSample) => number) => median(s.map(f));
    const ns = summarize(s.map((x) => x.nsPerRealloc)) as Summary;
    const later = chains > 1 ? m((x) => x.chainMs.slice(1).reduce((a, b) => a + b, 0) / (chains - 1)) : NaN;
    figs.set(c.peer.name, { ns, kept: m((x) => x.committedAfter), later });
    rows.push([
      c.peer.name,
      fmtNs(ns.median),
      `${fmtNs(ns.min)} .. ${fmtNs(ns.max)}`,
      m((x) => x.chainMs[0]).toFixed(2),
      chains > 1 ? later.toFixed(2) : '-',
      fmtMiB(m((x) => x.committedPeak)),
      fmtMiB(m((x) => x.committedAfter)),
      s[0].ledgerAfter === null ? '-' : fmtMiB(m((x) => x.ledgerAfter as number)),
      fmtMiB(m((x) => x.residentPeak)),
      fmtMiB(m((x) => x.residentAfter)),
    ]);
  }
  lines.push(layout(rows));
  lines.push(
    'kept after: committed bytes (floor, thi.ng: high-water mark) once the last chain is freed. ns/realloc includes writing the new pages; ' +
      'the floor and thi.ng never give memory back (thi.ng grows a block at the top of its buffer in place, without a copy).',
  );

  // The dial: each measured Paddock rung against the one below it.
  const rungs = cells.filter((c) => c.peer.family === 'paddock' && figs.has(c.peer.name)).map((c) => c.peer);
  const dial: { from: number; to: number; keptDeltaBytes: number; nsChange: number; laterChange: number; faster: boolean; slower: boolean; keepsMore: boolean }[] = [];
  /** Fewer measured rounds than this and no min..max range says anything: no speed verdict. */
  const judgeable = ctx.rounds >= 3;
  if (rungs.length >= 2) {
    lines.push(
      judgeable
        ? 'the dial (Paddock, each rung against the one below; "beyond the spread": the two rungs\' min..max ranges do not overlap):'
        : `the dial (Paddock, each rung against the one below; ${ctx.rounds} measured round(s): too few to tell a speed difference from noise, so no speed verdict):`,
    );
    const drows: string[][] = [];
    for (let i = 1; i < rungs.length; i++) {
      const a = figs.get(rungs[i - 1].name) as Fig;
      const b = figs.get(rungs[i].name) as Fig;
      const keptDelta = b.kept - a.kept;
      const change = b.ns.median / a.ns.median - 1;
      const laterChange = b.later / a.later - 1;
      const faster = judgeable && b.ns.max < a.ns.min;
      const slower = judgeable && b.ns.min > a.ns.max;
      const keepsMore = keptDelta >= 4096;
      dial.push({ from: rungs[i - 1].rung as number, to: rungs[i].rung as number, keptDeltaBytes: keptDelta, nsChange: change, laterChange, faster, slower, keepsMore });
      const speed = !judgeable ? 'not judged' : faster ? 'faster, beyond the spread' : slower ? 'SLOWER, beyond the spread' : 'within the spread';
      const mem = keepsMore ? `keeps ${fmtMiB(keptDelta)} more` : keptDelta <= -4096 ? `keeps ${fmtMiB(-keptDelta)} LESS` : 'keeps the same';
      let verdict: string;
      if (!judgeable) verdict = keepsMore ? 'memory up; speed not judged' : 'speed not judged';
      else if (keepsMore && faster) verdict = 'trade: more memory, less time';
      else if (!keepsMore && Math.abs(keptDelta) < 4096 && !faster && !slower) verdict = 'FLAT: same memory, same time';
      else if (keepsMore && !faster) verdict = 'memory up, no measured speed-up';
      else if (!keepsMore && faster) verdict = 'faster with no more memory';
      else verdict = 'no trade';
      drows.push([
        `  r${rungs[i - 1].rung} -> r${rungs[i].rung}:`,
        mem,
        `ns/realloc ${fmtSigned(change)} (${speed})`,
        `later chains ${fmtSigned(laterChange)}`,
        verdict,
      ]);
    }
    lines.push(layout(drows));
    const first = figs.get(rungs[0].name) as Fig;
    const last = figs.get(rungs[rungs.length - 1].name) as Fig;
    const overall = !judgeable
      ? `r${rungs[0].rung} -> r${rungs[rungs.length - 1].rung}: kept ${fmtMiB(last.kept - first.kept)} more, ns/realloc ${fmtSigned(last.ns.median / first.ns.median - 1)} (not judged: too few rounds)`
      : last.kept - first.kept >= 4096 && last.ns.max < first.ns.min
        ? `r${rungs[0].rung} -> r${rungs[rungs.length - 1].rung}: ${fmtMiB(last.kept - first.kept)} more kept for ${fmtSigned(last.ns.median / first.ns.median - 1)} ns/realloc: a measured trade`
        : `r${rungs[0].rung} -> r${rungs[rungs.length - 1].rung}: kept ${fmtMiB(last.kept - first.kept)} more, ns/realloc ${fmtSigned(last.ns.median / first.ns.median - 1)}: ` +
          'NOT a measured trade at this spread (FLAT or no speed-up)';
    lines.push(`  overall ${overall}`);
  }

  const json = {
    name: 'realloc',
    startBytes: CHAIN_START,
    endBytes: CHAIN_END,
    factor: CHAIN_FACTOR,
    sizes,
    reallocsPerChain: reallocs,
    chains,
    paddockHeapBytes: PADDOCK_BIG_BYTES,
    paddockLargeMax: largeMax,
    results: Object.fromEntries(
      cells.map((c) => [
        c.peer.name,
        {
          rung: c.peer.rung,
          medianNsPerRealloc: figs.get(c.peer.name)?.ns.median ?? null,
          samples: c.samples,
          warmup: c.warmup,
          error: c.error,
        },
      ]),
    ),
    dial,
  };
  return { lines, json, failures };
}

function fmtSigned(x: number): string {
  if (!Number.isFinite(x)) return '-';
  const pct = x * 100;
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(1)}%`;
}

export { HOLD_SPECS };
