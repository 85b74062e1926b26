/**
 * The timed loops' figures: one cell per (peer, workload) with its samples, medians and spreads, ratios of
 * medians, and the targets Paddock is held to on the pair and the churn.
 */

import type { TimedWorkload } from '../timed-loops.js';

/** What the timed loops ran: the workloads, and a cell per (workload, peer). */
export interface TimedResult {
  readonly workloads: readonly TimedWorkload[];
  /** By workload, then peer. */
  readonly cells: ReadonlyMap<string, ReadonlyMap<string, Cell>>;
}

/** One (peer, workload) cell of the run. */
export interface Cell {
  readonly peer: string;
  readonly workload: string;
  /** Ops each measured round ran (a prefix of the workload's sequence when the time cap bit). */
  opsPerRound: number;
  /** ns per op of each measured round, in round order. */
  readonly samples: number[];
  /** ns per op of each warm-up round (the first is the calibration run). */
  readonly warmup: number[];
  /** Peak resident memory of each measured round above its start, bytes (absent where not measured). */
  readonly peakRss: number[];
  /** Set when the peer failed on this workload; its samples are then incomplete. */
  error: string | null;
  /** Whether the prefilled blocks' pages were touched before timing (churn; see `prefill`). */
  touched: boolean;
}

export interface Summary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export function summarize(samples: readonly number[]): Summary | null {
  if (samples.length === 0) return null;
  const s = [...samples].sort((x, y) => x - y);
  const mid = s.length >> 1;
  const median = s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { median, min: s[0], max: s[s.length - 1] };
}

export type TargetStatus = 'MET' | 'NOT MET' | 'n/a';

export interface Target {
  readonly workload: string;
  readonly rule: string;
  readonly status: TargetStatus;
  /** Paddock's figure against the limit: ns for the pair, a ratio for churn. */
  readonly value: number | null;
  readonly limit: number | null;
  readonly note: string;
}

/** Paddock's targets: a pair at most 10 ns; churn at most 1.5x the floor and below thi.ng. */
export const PAIR_LIMIT_NS = 10;
export const CHURN_FLOOR_RATIO = 1.5;

export interface Figures {
  readonly workloads: readonly string[];
  readonly peers: readonly string[];
  /** median etc. by workload, then peer; absent where not run or failed. */
  readonly summary: ReadonlyMap<string, ReadonlyMap<string, Summary>>;
}

function med(f: Figures, workload: string, peer: string): number | null {
  return f.summary.get(workload)?.get(peer)?.median ?? null;
}

export function ratio(f: Figures, workload: string, num: string, den: string): number | null {
  const a = med(f, workload, num);
  const b = med(f, workload, den);
  return a === null || b === null || b === 0 ? null : a / b;
}

/**
 * Judges Paddock on every workload that ran. `missing(workload)` says why Paddock has no figure there
 * (skipped, failed, not run), or null when it has one.
 */
export function targets(f: Figures, missing: (workload: string) => string | null): Target[] {
  const out: Target[] = [];
  const na = (workload: string, rule: string, note: string): Target => ({
    workload,
    rule,
    status: 'n/a',
    value: null,
    limit: null,
    note,
  });
  const judge = (workload: string, rule: string, value: number, limit: number, strict: boolean): Target => ({
    workload,
    rule,
    status: (strict ? value < limit : value <= limit) ? 'MET' : 'NOT MET',
    value,
    limit,
    note: '',
  });
  for (const w of f.workloads) {
    const rules = w === 'pair' ? [`pair <= ${PAIR_LIMIT_NS} ns`] : [`${w} <= ${CHURN_FLOOR_RATIO}x floor`, `${w} < thi.ng`];
    for (const rule of rules) {
      const p = med(f, w, 'paddock');
      if (p === null) {
        out.push(na(w, rule, missing(w) ?? 'paddock has no figure'));
        continue;
      }
      if (w === 'pair') {
        out.push(judge(w, rule, p, PAIR_LIMIT_NS, false));
      } else if (rule.endsWith('floor')) {
        const r = ratio(f, w, 'paddock', 'floor');
        out.push(r === null ? na(w, rule, 'floor has no figure') : judge(w, rule, r, CHURN_FLOOR_RATIO, false));
      } else {
        const r = ratio(f, w, 'paddock', 'thi.ng');
        out.push(r === null ? na(w, rule, 'thi.ng has no figure') : judge(w, rule, r, 1, true));
      }
    }
  }
  return out;
}
