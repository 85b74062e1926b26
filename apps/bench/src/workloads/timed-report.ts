/**
 * The timed loops' tables on stdout and their part of the JSON: the pair and churn table (ns per op of every
 * peer and the ratios), Paddock against each peer with 95% intervals, the spread and the peak memory of
 * every workload, the time-capped and untouched notes, the peers that failed anywhere in the run, Paddock's
 * targets, and the size sweep's own table.
 */
import { offers, type RunContext } from '../context.js';
import { fmtCount, fmtMiB, fmtNs, fmtRatio, layout } from '../format.js';
import { PADDOCK_BIG_BYTES } from '../peers/paddock-heap.js';
import { change, estimate, fmtChange, median } from '../stats.js';
import { isSweep, SWEEP_LIVE_BYTES } from '../timed-loops.js';
import {
  CHURN_FLOOR_RATIO,
  type Figures,
  PAIR_LIMIT_NS,
  ratio,
  type Summary,
  summarize,
  targets,
  type TimedResult,
} from './timed-figures.js';
import type { WorkloadReport } from './workload.js';

export function timedReport(r: TimedResult, ctx: RunContext): WorkloadReport {
  const { workloads, cells } = r;
  const { opts } = ctx;
  const largeMax = ctx.largeMax;
  const lines: string[] = [];
  const out = (line = '') => lines.push(line);
  const entries = ctx.peers.filter((e) => offers(e, 'pair-churn'));

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
  const runsSweep = (peer: string) => offers(entries.find((e) => e.name === peer)!, 'sweep');

  // --- the pair and the churn ---
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
    'global/arena',
    'global/mimalloc',
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
      fmtRatio(ratio(figures, w.name, 'paddock-global', 'paddock')),
      fmtRatio(ratio(figures, w.name, 'paddock-global', 'mimalloc')),
    ]);
  }
  if (mainWorkloads.length > 0) {
    out();
    out(layout(rows));
    out('paddock = the arena backend (pool_arena, dist/pool-arena.js); paddock-classic = the classic pool (pool_classic, dist/pool-classic.js); arena/classic = paddock / paddock-classic (below 1: the arena is faster); paddock-global = the global pool (pool_global, dist/pool-global.js); global/arena = paddock-global / paddock (above 1: the global pool is slower)');
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

  // --- every workload: spread and peak memory ---
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
          return isSweep(w) && !runsSweep(p) ? 'n/a' : '-';
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
    out(`time-capped (same sequence, a prefix of it, ${opts.mode.budgetMs} ms a round): ${capped.join('; ')}`);
  }
  const untouched = new Set<string>();
  for (const w of workloads) {
    if (w.kind !== 'churn') continue;
    for (const c of cells.get(w.name)!.values()) if (c.error === null && !c.touched) untouched.add(c.peer);
  }
  if (opts.touch && untouched.size > 0) {
    out(`prefill not touched (no byte view): ${[...untouched].join(', ')}: its churn figures include first-touch page faults`);
  } else if (!opts.touch) {
    out('prefill not touched (--no-touch): churn figures include first-touch page faults of the prefilled blocks');
  }
  // The peers that failed anywhere in the run (here, or in a workload that prints after this one).
  for (const e of ctx.peers) if (e.status === 'failed') out(`${e.name}: FAILED (${e.reason})`);

  if (judged.length > 0) {
    out();
    out(`targets for paddock (pair <= ${PAIR_LIMIT_NS} ns; churn <= ${CHURN_FLOOR_RATIO}x floor and < thi.ng, same run):`);
    const trows: string[][] = [];
    for (const t of judged) {
      const value = t.value === null ? '' : t.rule.startsWith('pair') ? `${fmtNs(t.value)} ns` : fmtRatio(t.value);
      trows.push([`  ${t.rule}`, t.status === 'n/a' ? `n/a (${t.note})` : t.status, value]);
    }
    out(layout(trows));
  }

  // --- the size sweep ---
  if (sweepWorkloads.length > 0) {
    const tierOf = (size: number): string =>
      largeMax === null ? '-' : size <= 1 << 20 ? `class ${size <= 32 ? 0 : 27 - Math.clz32(size - 1)}` : size <= largeMax ? 'large' : 'oversized';
    const sweepPeers = peerNames.filter(runsSweep);
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

  const json = {
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
        'paddock-global/paddock': ratio(figures, w.name, 'paddock-global', 'paddock'),
        'paddock-global/mimalloc': ratio(figures, w.name, 'paddock-global', 'mimalloc'),
      },
    })),
    targets: judged,
  };
  return { lines, json, notMet: judged.filter((t) => t.status === 'NOT MET').length };
}

/** ns/op samples of the pair and the churn by workload, then peer: only a peer's full-length, unfailed rounds. */
export function pairChurnSamples(r: TimedResult): Map<string, Map<string, number[]>> {
  const out = new Map<string, Map<string, number[]>>();
  for (const w of r.workloads.filter((x) => !isSweep(x))) {
    const m = new Map<string, number[]>();
    for (const c of r.cells.get(w.name)!.values()) if (c.error === null && c.opsPerRound >= w.ops) m.set(c.peer, c.samples);
    out.set(w.name, m);
  }
  return out;
}

