/**
 * Medians with 95% bootstrap intervals, and comparisons as a change with its interval
 * (`+4.2% [+2.9% .. +5.5%]`). The resampling is seeded, so the same samples always give the same
 * interval: the report can be regenerated from the JSON and says the same thing.
 */
import { mulberry32Unit } from '../../../tools/test-utils/prng.mjs';

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Bootstrap resamples. 2,000 gives a 95% interval whose ends move by well under the run-to-run noise. */
export const RESAMPLES = 2000;

function resampledMedians(xs: readonly number[], n: number, next: () => number): Float64Array {
  const out = new Float64Array(n);
  const k = xs.length;
  const tmp = new Float64Array(k);
  for (let r = 0; r < n; r++) {
    for (let i = 0; i < k; i++) tmp[i] = xs[Math.floor(next() * k)];
    tmp.sort();
    const m = k >> 1;
    out[r] = k % 2 === 1 ? tmp[m] : (tmp[m - 1] + tmp[m]) / 2;
  }
  return out;
}

function quantile(sorted: Float64Array, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export interface Estimate {
  readonly median: number;
  /** 95% percentile-bootstrap interval of the median. */
  readonly lo: number;
  readonly hi: number;
  readonly n: number;
}

export function estimate(xs: readonly number[], seed = 1): Estimate | null {
  if (xs.length === 0) return null;
  const meds = resampledMedians(xs, RESAMPLES, mulberry32Unit(seed ^ xs.length));
  meds.sort();
  return { median: median(xs), lo: quantile(meds, 0.025), hi: quantile(meds, 0.975), n: xs.length };
}

export interface Change {
  /** median(a) / median(b) - 1. */
  readonly change: number;
  /** 95% bootstrap interval of that change (a and b resampled independently). */
  readonly lo: number;
  readonly hi: number;
  /** The ratio median(a) / median(b). */
  readonly ratio: number;
}

/** The change of a against b: median(a) / median(b) - 1, with its 95% bootstrap interval. */
export function change(a: readonly number[], b: readonly number[], seed = 7): Change | null {
  if (a.length === 0 || b.length === 0) return null;
  const mb = median(b);
  if (!(mb > 0)) return null;
  const next = mulberry32Unit(seed ^ (a.length * 31 + b.length));
  const ra = resampledMedians(a, RESAMPLES, next);
  const rb = resampledMedians(b, RESAMPLES, next);
  const r = new Float64Array(RESAMPLES);
  for (let i = 0; i < RESAMPLES; i++) r[i] = ra[i] / rb[i] - 1;
  r.sort();
  const ratio = median(a) / mb;
  return { change: ratio - 1, lo: quantile(r, 0.025), hi: quantile(r, 0.975), ratio };
}

function pct(x: number): string {
  const v = x * 100;
  const a = Math.abs(v);
  const digits = a >= 1000 ? 0 : a >= 100 ? 0 : 1;
  return `${v >= 0 ? '+' : '-'}${a.toFixed(digits)}%`;
}

/** `+4.2% [+2.9% .. +5.5%]` */
export function fmtChange(c: Change | null): string {
  if (c === null) return '-';
  return `${pct(c.change)} [${pct(c.lo)} .. ${pct(c.hi)}]`;
}

/** Whether the interval excludes 0: a change this run can tell from noise. */
export function decided(c: Change | null): 'higher' | 'lower' | 'same' | null {
  if (c === null) return null;
  if (c.lo > 0) return 'higher';
  if (c.hi < 0) return 'lower';
  return 'same';
}
