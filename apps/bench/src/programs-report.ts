/**
 * The programs' figures on stdout and in the JSON: each program's table (the median of every peer with its
 * 95% bootstrap interval, Paddock's arena against each peer as a change with its interval, peak resident
 * memory), and the programs' targets, judged from the measured samples.
 */
import type { ProgramCell, ProgramResult, ProgramSample } from './programs.js';
import { layout } from './report.js';
import { change, type Change, estimate, type Estimate, fmtChange, median } from './stats.js';

const MiB = 1024 * 1024;

export function fmtRate(x: number): string {
  if (!Number.isFinite(x)) return '-';
  if (x >= 1e9) return `${(x / 1e9).toFixed(2)} G`;
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)} M`;
  if (x >= 1e3) return `${(x / 1e3).toFixed(1)} k`;
  return x.toFixed(x < 10 ? 2 : 0);
}

export function fmtBytes(x: number): string {
  if (!Number.isFinite(x)) return '-';
  const m = x / MiB;
  return `${Math.abs(m) < 10 ? m.toFixed(2) : m.toFixed(1)} MiB`;
}

function fmtMs(x: number): string {
  if (!Number.isFinite(x)) return '-';
  return x < 10 ? `${x.toFixed(2)} ms` : x < 100 ? `${x.toFixed(1)} ms` : `${Math.round(x)} ms`;
}

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
function values(spec: ProgramResult['spec'], samples: readonly ProgramSample[]): number[] {
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
  return metric === 'rate' ? `${fmtRate(x)}/s` : metric === 'ms' ? fmtMs(x) : fmtBytes(x);
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
        f.peakRssMedian === null ? '-' : fmtBytes(f.peakRssMedian),
      ];
      const x = f.extraMedians;
      if (s.program === 'idle') {
        row.push(
          fmtBytes(x.rssHeld ?? NaN),
          fmtBytes(x.rssAfter ?? NaN),
          x.returnedFraction == null ? '-' : `${(x.returnedFraction * 100).toFixed(0)}%`,
          x.ninetyMs == null ? '-' : fmtMs(x.ninetyMs),
          `${f.notWithinWindow}/${e.n}`,
        );
      }
      if (s.program === 'large-cross-free') {
        row.push(x.distinctAddresses == null ? '-' : String(x.distinctAddresses), x.committedBytes == null ? '-' : fmtBytes(x.committedBytes));
      }
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

// --- targets ------------------------------------------------------------------------------------------

export interface ProgramTarget {
  readonly rule: string;
  readonly workload: string;
  readonly status: 'MET' | 'NOT MET' | 'n/a' | 'stated';
  readonly value: string;
  readonly note: string;
}

export interface PairChurnSamples {
  /** ns/op samples by workload, then peer. */
  readonly samples: ReadonlyMap<string, ReadonlyMap<string, readonly number[]>>;
}

/** The idle-return figure: resident memory falls by at least half the payload within 5 s. */
export const IDLE_LIMIT_MS = 5000;
export const CHURN_LIMIT = 1.5;

export function programTargets(programs: readonly ProgramResult[], pc: PairChurnSamples, idleWindowMs: number): ProgramTarget[] {
  const out: ProgramTarget[] = [];
  const byName = new Map(programs.map((r) => [r.spec.name, r]));
  // 1. arena at least classic's throughput
  for (const w of ['producer-consumer', 'message-ubench', 'mixed-churn-16/8', 'mixed-churn-128/32']) {
    const rule = 'arena >= classic throughput';
    const r = byName.get(w);
    const a = r?.cells.find((c) => c.peer === 'paddock');
    const c = r?.cells.find((x) => x.peer === 'paddock-classic');
    if (!r || !a || !c || a.samples.length === 0 || c.samples.length === 0 || a.error || c.error) {
      out.push({ rule, workload: w, status: 'n/a', value: '', note: !r ? 'not run' : (a?.error ?? c?.error ?? 'a backend has no figure') });
      continue;
    }
    const ch = change(values(r.spec, a.samples), values(r.spec, c.samples))!;
    const met = ch.change >= 0;
    const sure = ch.lo > 0 ? 'the interval is above 0' : ch.hi < 0 ? 'the interval is below 0' : 'the interval spans 0: within the noise';
    out.push({ rule, workload: w, status: met ? 'MET' : 'NOT MET', value: `arena vs classic ${fmtChange(ch)}`, note: sure });
  }
  // 2. churn within 1.5x of native mimalloc and of the floor
  for (const [w, peers] of pc.samples) {
    if (!w.startsWith('churn-')) continue;
    const p = peers.get('paddock');
    for (const base of ['mimalloc', 'floor']) {
      const rule = `churn <= ${CHURN_LIMIT}x ${base} (ns/op)`;
      const b = peers.get(base);
      if (!p || !b || p.length === 0 || b.length === 0) {
        out.push({ rule, workload: w, status: 'n/a', value: '', note: `${!p || p.length === 0 ? 'paddock' : base} has no figure` });
        continue;
      }
      const ch = change(p, b)!;
      out.push({
        rule,
        workload: w,
        status: ch.ratio <= CHURN_LIMIT ? 'MET' : 'NOT MET',
        value: `${ch.ratio.toFixed(2)}x (${fmtChange(ch)})`,
        note: '',
      });
    }
  }
  // 3. idle return within the suspend-and-drain figures
  for (const w of ['idle-100m', 'idle-1g']) {
    const rule = `idle return: RSS down by half the payload within ${IDLE_LIMIT_MS / 1000} s (arena)`;
    const r = byName.get(w);
    const a = r?.cells.find((c) => c.peer === 'paddock');
    if (!r || !a || a.samples.length === 0 || a.error) {
      out.push({ rule, workload: w, status: 'n/a', value: '', note: !r ? 'not run' : (a?.error ?? 'paddock has no figure') });
      continue;
    }
    const times = a.samples.map((s) => s.value);
    const within = times.filter((t): t is number => t !== null && t <= IDLE_LIMIT_MS);
    const fracs = a.samples.map((s) => s.extra.returnedFraction ?? 0);
    const met = within.length === times.length;
    const shown = times.map((t) => (t === null ? `> ${idleWindowMs} ms` : `${Math.round(t)} ms`)).join(', ');
    out.push({
      rule,
      workload: w,
      status: met ? 'MET' : 'NOT MET',
      value: `${shown} (returned ${fracs.map((f) => `${Math.round(f * 100)}%`).join(', ')} by the end of the window)`,
      note: idleWindowMs < IDLE_LIMIT_MS && !met ? `this run waited ${idleWindowMs} ms (quick); --full waits ${IDLE_LIMIT_MS} ms` : '',
    });
  }
  // 4. the ratio to native mimalloc on the pair and the churn, stated
  for (const [w, peers] of pc.samples) {
    if (w !== 'pair' && !w.startsWith('churn-')) continue;
    const p = peers.get('paddock');
    const m = peers.get('mimalloc');
    const rule = 'ratio to native mimalloc (ns/op)';
    if (!p || !m || p.length === 0 || m.length === 0) {
      out.push({ rule, workload: w, status: 'n/a', value: '', note: 'paddock or mimalloc has no figure' });
      continue;
    }
    const ch = change(p, m)!;
    const c = peers.get('paddock-classic');
    const cc = c && c.length > 0 ? change(c, m) : null;
    out.push({
      rule,
      workload: w,
      status: 'stated',
      value: `arena ${ch.ratio.toFixed(2)}x (${fmtChange(ch)})${cc ? `; classic ${cc.ratio.toFixed(2)}x` : ''}`,
      note: '',
    });
  }
  return out;
}

export function targetLines(ts: readonly ProgramTarget[]): string[] {
  if (ts.length === 0) return [];
  const rows = ts.map((t) => [`  ${t.workload}`, t.rule, t.status, t.value, t.note]);
  return ['', "the programs' targets (from this run's samples):", layout(rows)];
}
