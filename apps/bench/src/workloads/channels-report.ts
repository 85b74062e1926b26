/**
 * The `channels` group's figures on stdout and in the JSON: every lane's rate at 64 B and 4 KiB (median
 * over the rounds with its 95% bootstrap interval), the wake-up latencies (p50 and p99 of every latency of
 * the measured rounds, and the median of the rounds' p50s with its interval), and the user's targets for
 * the channel, each a ratio of medians of this run with its interval, judged MET / NOT MET on the median.
 */
import { fmtRate, layout } from '../format.js';
import { change, estimate, type Estimate } from '../stats.js';
import { BATCH, BIG_BATCH, cellKey, findLane, LANES, SHAPES, SIZES } from './channels-lanes.js';
import type { WakeKind } from './channels-run.js';
import type { WorkloadReport } from './workload.js';

export interface ChannelsJson {
  readonly rounds: number;
  readonly warmup: number;
  /** Production time of a run. */
  readonly ms: number;
  readonly wakeCount: number;
  readonly limitCommand: string | null;
  readonly notes: readonly string[];
  /** Messages per second, each measured round, by cell (`channel 1->1 x32 64 B`). */
  readonly samples: Readonly<Record<string, number[]>>;
  /** Cells and wake-up kinds that failed, and why. */
  readonly errors: Readonly<Record<string, string>>;
  /** Wake-up latencies (µs), by kind, per measured round. */
  readonly wake: Readonly<Record<string, number[][]>>;
}

export interface ChannelTarget {
  readonly what: string;
  /** The ratio asked for: at least (`min`) or at most (`max`). */
  readonly min?: number;
  readonly max?: number;
  readonly ratio: number | null;
  readonly lo: number | null;
  readonly hi: number | null;
  readonly met: boolean | null;
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

function ratioTarget(r: ChannelsJson, what: string, a: string, b: string, min: number): ChannelTarget {
  const c = change(r.samples[a] ?? [], r.samples[b] ?? []);
  if (c === null) return { what, min, ratio: null, lo: null, hi: null, met: null };
  return { what, min, ratio: c.ratio, lo: 1 + c.lo, hi: 1 + c.hi, met: c.ratio >= min };
}

export function channelTargets(r: ChannelsJson): ChannelTarget[] {
  const key = (kind: Parameters<typeof findLane>[0], p: number, c: number, batch: number, size: number) => cellKey(findLane(kind, p, c, batch), size);
  const t: ChannelTarget[] = [];
  t.push(ratioTarget(r, 'channel 1->1 x32 64 B / postMessage offsets 1->1 64 B (one offset a message)', key('channel', 1, 1, BATCH, 64), key('post-offsets', 1, 1, 1, 64), 20));
  t.push(ratioTarget(r, 'channel 1->1 x32 64 B / postMessage offsets 1->1 x1024 64 B', key('channel', 1, 1, BATCH, 64), key('post-offsets', 1, 1, BIG_BATCH, 64), 4));
  for (const size of SIZES) {
    t.push(ratioTarget(r, `${key('channel', 1, 1, 1, size)} / ${key('post-offsets', 1, 1, 1, size)} (one block a send)`, key('channel', 1, 1, 1, size), key('post-offsets', 1, 1, 1, size), 10));
  }
  for (const [p, c] of SHAPES) {
    for (const batch of [1, BATCH]) {
      for (const size of SIZES) t.push(ratioTarget(r, `${key('channel', p, c, batch, size)} / C queue`, key('channel', p, c, batch, size), key('native', p, c, batch, size), 0.5));
    }
  }
  for (const batch of [1, BATCH]) {
    for (const size of SIZES) {
      t.push(ratioTarget(r, `${key('channel', 2, 2, batch, size)} / channel 1->1`, key('channel', 2, 2, batch, size), key('channel', 1, 1, batch, size), 0.7));
    }
  }
  const own = (r.wake.recvAsync ?? []).flat();
  const trip = (r.wake['port round trip'] ?? []).flat();
  if (own.length > 0 && trip.length > 0) {
    const ratio = quantile(own, 0.5) / quantile(trip, 0.5);
    t.push({ what: 'recvAsync wake-up p50 / MessagePort round trip p50', max: 1, ratio, lo: null, hi: null, met: ratio <= 1 });
  } else t.push({ what: 'recvAsync wake-up p50 / MessagePort round trip p50', max: 1, ratio: null, lo: null, hi: null, met: null });
  return t;
}

function cell(e: Estimate | null): string {
  if (e === null) return '-';
  return `${fmtRate(e.median)}/s [${fmtRate(e.lo)} .. ${fmtRate(e.hi)}]`;
}

function fmtX(x: number | null): string {
  return x === null ? '-' : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

/** The group's lines (stdout and docs/PERFORMANCE.md) and the targets not met. */
export function channelsLines(r: ChannelsJson): { lines: string[]; targets: ChannelTarget[]; notMet: number } {
  const lines: string[] = [];
  for (const n of r.notes) lines.push(`note: ${n}`);
  const rows: string[][] = [['lane', ...SIZES.map((s) => (s === 4096 ? '4 KiB' : `${s} B`))]];
  for (const lane of LANES) {
    rows.push([lane.name, ...SIZES.map((s) => r.errors[cellKey(lane, s)] !== undefined ? 'FAILED' : r.samples[cellKey(lane, s)] === undefined ? 'not run' : cell(estimate(r.samples[cellKey(lane, s)] ?? [])))]);
  }
  lines.push(...layout(rows).split('\n'));
  for (const [k, e] of Object.entries(r.errors)) lines.push(`FAILED ${k}: ${e}`);
  const wakeRows: string[][] = [['wake-up (µs)', 'p50', 'p99', 'median of the rounds\' p50 [95%]', 'samples']];
  for (const kind of ['recvAsync', 'port one-way', 'port round trip'] satisfies WakeKind[]) {
    const rounds = r.wake[kind] ?? [];
    const all = rounds.flat();
    if (all.length === 0) continue;
    const e = estimate(rounds.map((xs) => quantile(xs, 0.5)));
    wakeRows.push([kind, quantile(all, 0.5).toFixed(1), quantile(all, 0.99).toFixed(1), e === null ? '-' : `${e.median.toFixed(1)} [${e.lo.toFixed(1)} .. ${e.hi.toFixed(1)}]`, String(all.length)]);
  }
  if (wakeRows.length > 1) lines.push('', ...layout(wakeRows).split('\n'));
  const targets = channelTargets(r);
  let notMet = 0;
  lines.push('', 'targets (ratio of medians [95% interval]):');
  for (const t of targets) {
    if (t.met === false) notMet++;
    const goal = t.min !== undefined ? `>= ${t.min}x` : `<= ${t.max}x`;
    const interval = t.lo !== null && t.hi !== null ? ` [${fmtX(t.lo)} .. ${fmtX(t.hi)}]` : '';
    lines.push(`  ${t.what}: ${fmtX(t.ratio)}x${interval} (${goal}: ${t.met === null ? 'n/a' : t.met ? 'MET' : 'NOT MET'})`);
  }
  return { lines, targets, notMet };
}

export function channelsReport(r: ChannelsJson | null, command: string): WorkloadReport {
  if (r === null) return { lines: [], json: {} };
  const { lines, targets, notMet } = channelsLines(r);
  const head =
    `channels: messages per second, producers -> consumers (median over ${r.rounds} rounds after ${r.warmup} warm-up [95% interval]; ` +
    `${r.ms} ms of production a run; channel and C queue capacity 256; ${command})`;
  return { lines: ['', head, ...lines.map((l) => `  ${l}`)], json: { channels: { ...r, targets } }, notMet };
}
