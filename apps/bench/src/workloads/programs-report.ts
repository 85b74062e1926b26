/**
 * The programs' figures on stdout and in the JSON: each program's table (the median of every peer with its
 * 95% bootstrap interval, Paddock's arena against each peer as a change with its interval, peak resident
 * memory, and the program's own extras).
 */
import { fmtMiB, fmtMs, fmtRate, layout } from '../format.js';
import { change, type Change, estimate, type Estimate, fmtChange, median } from '../stats.js';
import type { ProgramCell, ProgramResult, ProgramSample } from './program-runs.js';

/** The figures of one cell: what the table and the JSON show. */
export interface CellFigures {
  readonly peer: string;
  readonly status: 'ran' | 'failed' | 'skipped' | 'dropped';
  readonly note: string | null;
  readonly estimate: Estimate | null;
  /** idle: rounds where resident memory did not fall by half within the window. */
  readonly notWithinWindow: number;
  readonly peakRssMedian: number | null;
  /** Paddock's arena against this peer: change of the arena's figure (rate: + = the arena does more per second). */
  readonly arenaVs: Change | null;
  readonly extraMedians: Record<string, number | null>;
}

/** Values for the interval: idle's "not within the window" counts as the window (a lower bound). */
export function values(spec: ProgramResult['spec'], samples: readonly ProgramSample[]): number[] {
  return samples.map((s) => (s.value === null ? (spec.params.window ?? Infinity) : s.value));
}

export function cellFigures(r: ProgramResult): CellFigures[] {
  const arena = r.cells.find((c) => c.peer === 'paddock');
  const arenaVals = arena && arena.error === null && arena.samples.length > 0 ? values(r.spec, arena.samples) : null;
  return r.cells.map((c: ProgramCell): CellFigures => {
    const vals = values(r.spec, c.samples);
    const status: CellFigures['status'] = c.error !== null ? 'failed' : c.skipped !== null ? (c.samples.length > 0 ? 'dropped' : 'skipped') : 'ran';
    const extraKeys = new Set<string>();
    for (const s of c.samples) for (const k of Object.keys(s.extra)) extraKeys.add(k);
    const extraMedians: Record<string, number | null> = {};
    for (const k of extraKeys) {
      const xs = c.samples.map((s) => s.extra[k]).filter((v): v is number => typeof v === 'number');
      extraMedians[k] = xs.length > 0 ? median(xs) : null;
    }
    return {
      peer: c.peer,
      status,
      note: c.error ?? c.skipped,
      estimate: c.error === null && vals.length > 0 ? estimate(vals) : null,
      notWithinWindow: c.samples.filter((s) => s.value === null).length,
      peakRssMedian: c.samples.length > 0 ? median(c.samples.map((s) => s.peakRssBytes)) : null,
      arenaVs: arenaVals !== null && c.peer !== 'paddock' && c.error === null && vals.length > 0 && r.spec.program !== 'idle' ? change(arenaVals, vals) : null,
      extraMedians,
    };
  });
}

function fmtValue(metric: string, x: number): string {
  return metric === 'rate' ? `${fmtRate(x)}/s` : metric === 'ms' ? fmtMs(x) : fmtMiB(x);
}

export function programLines(results: readonly ProgramResult[], command: string): string[] {
  const lines: string[] = [];
  for (const r of results) {
    const s = r.spec;
    const figs = cellFigures(r);
    lines.push('');
    const agents = s.agents === 0 ? '1 agent, main thread' : `${s.agents} agents`;
    lines.push(`${s.name} [${s.group}] (${s.unit}; ${agents}; ${Object.entries(s.params).map(([k, v]) => `${k}=${v}`).join(' ')})`);
    lines.push(`  ${s.what}`);
    const better = s.metric === 'rate' ? '+ = the arena does more per second' : '- = the arena needs less';
    const head = ['  peer', s.metric === 'rate' ? 'median' : s.metric === 'ms' ? 'median' : 'median peak', '95% CI', `paddock vs peer (${better})`, 'peak RSS'];
    const extraCols: string[] = [];
    if (s.program === 'idle') extraCols.push('held', 'after window', 'returned', '90% at', 'not within');
    if (s.program === 'large-cross-free') extraCols.push('addresses', 'committed');
    if (s.program === 'class-no-reuse') extraCols.push('x bytes', 'ops/s');
    if (s.program === 'build-then-free') extraCols.push('ns per malloc', 'ns per free');
    const rows: string[][] = [[...head, ...extraCols]];
    for (const f of figs) {
      if (f.status === 'skipped' || (f.status === 'failed' && f.estimate === null)) {
        rows.push([`  ${f.peer}`, f.status === 'failed' ? 'FAILED' : 'skipped', '', '', '']);
        continue;
      }
      const e = f.estimate!;
      const med = s.program === 'idle' && f.notWithinWindow > (e.n >> 1) ? `> ${fmtMs(s.params.window)}` : fmtValue(s.metric, e.median);
      const row = [
        `  ${f.peer}${f.status === 'dropped' ? ' (dropped)' : ''}`,
        med,
        `[${fmtValue(s.metric, e.lo)} .. ${fmtValue(s.metric, e.hi)}]`,
        f.peer === 'paddock' ? '-' : fmtChange(f.arenaVs),
        f.peakRssMedian === null ? '-' : fmtMiB(f.peakRssMedian),
      ];
      const x = f.extraMedians;
      if (s.program === 'idle') {
        row.push(
          fmtMiB(x.rssHeld ?? NaN),
          fmtMiB(x.rssAfter ?? NaN),
          x.returnedFraction == null ? '-' : `${(x.returnedFraction * 100).toFixed(0)}%`,
          x.ninetyMs == null ? '-' : fmtMs(x.ninetyMs),
          `${f.notWithinWindow}/${e.n}`,
        );
      }
      if (s.program === 'large-cross-free') {
        row.push(x.distinctAddresses == null ? '-' : String(x.distinctAddresses), x.committedBytes == null ? '-' : fmtMiB(x.committedBytes));
      }
      if (s.program === 'build-then-free') row.push(x.mallocNs == null ? '-' : x.mallocNs.toFixed(0), x.freeNs == null ? '-' : x.freeNs.toFixed(0));
      if (s.program === 'class-no-reuse') {
        row.push(`${(e.median / s.params.bytes).toFixed(2)}x`, x.opsPerSecond == null ? '-' : fmtRate(x.opsPerSecond));
      }
      rows.push(row);
    }
    lines.push(layout(rows));
    for (const f of figs) if (f.note) lines.push(`  ${f.peer}: ${f.status === 'failed' ? 'FAILED: ' : ''}${f.note}`);
  }
  if (results.length > 0) {
    lines.push('');
    lines.push(`(command: ${command}; intervals: 95% percentile bootstrap of the median, 2,000 resamples; peak RSS: the run's high-water mark above its start)`);
  }
  return lines;
}
