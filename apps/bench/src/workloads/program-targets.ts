/**
 * The programs' targets, judged from this run's samples: the arena at least the classic pool's throughput
 * on the messaging programs; the churn within 1.5x of native mimalloc and of the floor; the idle return
 * within 5 s; the ratio to native mimalloc on the pair and the churn, stated.
 */
import { layout } from '../format.js';
import { change, fmtChange } from '../stats.js';
import type { ProgramResult } from './program-runs.js';
import { values } from './programs-report.js';

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
    const against = (peer: string, label: string): string => {
      const xs = peers.get(peer);
      const c = xs && xs.length > 0 ? change(xs, m) : null;
      return c ? `; ${label} ${c.ratio.toFixed(2)}x` : '';
    };
    out.push({
      rule,
      workload: w,
      status: 'stated',
      value: `arena ${ch.ratio.toFixed(2)}x (${fmtChange(ch)})${against('paddock-classic', 'classic')}${against('paddock-global', 'global')}`,
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
