/**
 * The `scopes` group's figures, from its part of the JSON: each variant's change against the arena with its
 * interval, the group's targets, and the reading (which design wins which lane, and the mechanism each design
 * pays with). The run's stdout (`scopes.ts`) and `docs/PERFORMANCE.md` (`report-md.ts`) both say what these
 * functions derive from the samples, so neither states a winner the figures do not show.
 */
import { type Change, change, decided, estimate, type Estimate, fmtChange } from '../stats.js';

export type VariantName = 'arena' | 'scope' | 'global';
export type LaneName = 'control' | 'scratch' | 'startup';

export interface Variant {
  readonly name: VariantName;
  /** The peer whose heap it runs on. */
  readonly peer: string;
  /** How its call sites allocate: a malloc and a free per allocation, or one scope per call. */
  readonly form: 'malloc' | 'scope';
  readonly what: string;
  /** What it pays per call, by design (the reading's "why"). */
  readonly pays: string;
}

/** The variants, the base first. */
export const VARIANTS: readonly Variant[] = [
  {
    name: 'arena',
    peer: 'paddock',
    form: 'malloc',
    what: 'pool_arena, malloc/free per allocation (the base)',
    pays: 'the arena serves a malloc and a free from the agent\'s own caches: a thread-local fast path, no atomics',
  },
  {
    name: 'scope',
    peer: 'paddock',
    form: 'scope',
    what: 'pool_arena, one `heap.scope()` per call closed in a `finally` (what `using` means), `s.malloc` for its allocations',
    pays: 'a scope pays a bump per allocation and its open and close per call (it starts in the spare chunk the last scope left; a long call takes more chunks from the heap, 64 KiB doubling to 1 MiB, fresh pages on a fresh heap)',
  },
  {
    name: 'global',
    peer: 'paddock-global',
    form: 'malloc',
    what: 'pool_global under every allocation, malloc/free',
    pays: 'pool_global pays two atomics per block (a CAS pop or a carve fetch-add to allocate, a CAS push to free) and, on fresh memory, the first touch of every 1 MiB slab it carves',
  },
];

/** The scope's allocation is held to this multiple of the bare bump's. */
export const BUMP_LIMIT = 2;

/** One variant in one lane, as the JSON holds it. */
export interface LaneCellJson {
  readonly samplesNsPerCall: readonly number[];
  readonly warmupNsPerCall: readonly number[];
  readonly error: string | null;
}

export interface LaneJson {
  readonly name: string;
  readonly lane: LaneName;
  readonly what: string;
  readonly callsPerRound: number;
  readonly results: Readonly<Partial<Record<VariantName, LaneCellJson>>>;
}

export interface BumpJson {
  /** ns per allocation of each measured round. */
  readonly samplesScopeNs: readonly number[];
  readonly samplesBumpNs: readonly number[];
  readonly error: string | null;
}

export interface ScopeTarget {
  readonly workload: string;
  readonly rule: string;
  readonly status: 'MET' | 'NOT MET' | 'n/a';
  readonly value: number | null;
  readonly limit: number | null;
  readonly note: string;
}

/** The group's part of the JSON (`scopes`). */
export interface ScopesJson {
  readonly command: string;
  readonly rounds: { readonly warmup: number; readonly rounds: number };
  readonly variants: readonly { readonly name: VariantName; readonly what: string }[];
  readonly missing: readonly { readonly variant: VariantName; readonly reason: string }[];
  readonly lanes: readonly LaneJson[];
  readonly bump: BumpJson | null;
  readonly targets: readonly ScopeTarget[];
}

/** A variant's measured samples in a lane (null: failed, not run, or nothing measured). */
function samplesOf(lane: LaneJson, v: VariantName): readonly number[] | null {
  const c = lane.results[v];
  return c && c.error === null && c.samplesNsPerCall.length > 0 ? c.samplesNsPerCall : null;
}

/** Each variant's change against the base in a lane (null where a side has no samples); the base is left out. */
export function laneChanges(lane: LaneJson): Map<VariantName, Change | null> {
  const base = samplesOf(lane, 'arena');
  const out = new Map<VariantName, Change | null>();
  for (const v of VARIANTS) {
    if (v.name === 'arena' || lane.results[v.name] === undefined) continue;
    const mine = samplesOf(lane, v.name);
    out.set(v.name, base && mine ? change(mine, base) : null);
  }
  return out;
}

/** Each variant's median per call in a lane, with its interval (null where it has no samples). */
export function laneEstimate(lane: LaneJson, v: VariantName): Estimate | null {
  const xs = samplesOf(lane, v);
  return xs ? estimate(xs) : null;
}

/**
 * The group's table, a row per lane and variant: lane, variant, median per call, its interval, the change
 * against the arena (`(the base)` for the arena). `time` writes a time in ns.
 */
export function scopeRows(lanes: readonly LaneJson[], time: (ns: number) => string): string[][] {
  const rows: string[][] = [];
  for (const lane of lanes) {
    const changes = laneChanges(lane);
    for (const v of VARIANTS) {
      const c = lane.results[v.name];
      if (c === undefined) continue;
      const e = laneEstimate(lane, v.name);
      rows.push([
        lane.name,
        v.name,
        c.error !== null ? `FAILED: ${c.error}` : e ? time(e.median) : '-',
        e ? `[${time(e.lo)} .. ${time(e.hi)}]` : '-',
        v.name === 'arena' ? '(the base)' : fmtChange(changes.get(v.name) ?? null),
      ]);
    }
  }
  return rows;
}

/** The targets: the control lane's interval spans 0 for every variant; the scope's allocation within 2x the bump. */
export function scopeTargets(s: Omit<ScopesJson, 'targets'>): ScopeTarget[] {
  const out: ScopeTarget[] = [];
  const control = s.lanes.find((l) => l.lane === 'control');
  if (control) {
    const changes = laneChanges(control);
    for (const v of VARIANTS.filter((x) => x.name !== 'arena')) {
      const rule = `control lane: ${v.name} vs arena, the interval spans 0`;
      const c = changes.get(v.name) ?? null;
      if (c === null) {
        const why =
          s.missing.find((m) => m.variant === v.name || m.variant === 'arena')?.reason ??
          control.results[v.name]?.error ??
          control.results.arena?.error ??
          'no samples';
        out.push({ workload: 'scopes-control', rule, status: 'n/a', value: null, limit: null, note: why });
      } else {
        const spans = decided(c) === 'same';
        out.push({ workload: 'scopes-control', rule, status: spans ? 'MET' : 'NOT MET', value: c.change, limit: 0, note: fmtChange(c) });
      }
    }
  }
  if (s.bump) {
    const rule = `scope.malloc <= ${BUMP_LIMIT}x the bare bump (ns per allocation)`;
    const c = s.bump.error === null ? change(s.bump.samplesScopeNs, s.bump.samplesBumpNs) : null;
    out.push(
      c === null
        ? { workload: 'scopes-bump', rule, status: 'n/a', value: null, limit: BUMP_LIMIT, note: s.bump.error ?? 'no samples' }
        : {
            workload: 'scopes-bump',
            rule,
            status: c.ratio <= BUMP_LIMIT ? 'MET' : 'NOT MET',
            value: c.ratio,
            limit: BUMP_LIMIT,
            note: `${c.ratio.toFixed(2)}x: scope vs bump ${fmtChange(c)}`,
          },
    );
  }
  return out;
}

/**
 * What one lane says: for the control, whether each interval spans 0; for the others, which variant has the
 * lowest median and whether its interval against every other variant lies below 0 (then it wins the lane), each
 * variant's change against the arena beside it.
 */
export function laneReading(lane: LaneJson): string {
  const changes = laneChanges(lane);
  const against = [...changes].map(([v, c]) => `${v} ${fmtChange(c)}`).join(', ');
  if (lane.lane === 'control') {
    const off = [...changes].filter(([, c]) => c !== null && decided(c) !== 'same').map(([v]) => v);
    const none = [...changes].every(([, c]) => c === null);
    if (none) return `${lane.name}: no comparison (a variant has no samples).`;
    return off.length === 0
      ? `${lane.name} (no allocation): every interval against the arena spans 0 (${against}): the harness favours no variant.`
      : `${lane.name} (no allocation): ${off.join(' and ')} read apart from the arena (${against}): the harness is biased in this run, and the other lanes' changes carry that bias.`;
  }
  const measured = VARIANTS.map((v) => ({ v: v.name, xs: samplesOf(lane, v.name) })).filter((x): x is { v: VariantName; xs: readonly number[] } => x.xs !== null);
  if (measured.length < 2) return `${lane.name}: fewer than two variants measured.`;
  const ranked = measured.map((x) => ({ ...x, m: estimate(x.xs)!.median })).sort((a, b) => a.m - b.m);
  const best = ranked[0];
  const unresolved = ranked.slice(1).filter((o) => decided(change(best.xs, o.xs)) !== 'lower').map((o) => o.v);
  const head =
    unresolved.length === 0
      ? `${best.v} wins: the lowest median, its interval against every other variant below 0`
      : `${best.v} has the lowest median, but this run does not tell it apart from ${unresolved.join(' and ')}`;
  return `${lane.name}: ${head} (against the arena: ${against}).`;
}

/** The reading of the whole group: a line per lane, then what each design pays with. */
export function scopesReading(s: ScopesJson): string[] {
  return [...s.lanes.map(laneReading), ...VARIANTS.map((v) => `${v.name}: ${v.pays}.`)];
}
