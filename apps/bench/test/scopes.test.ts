// The `scopes` group run tiny on the built backends (pool_arena, pool_global): its shape (three lanes, three
// variants, a sample per measured round, the bump target), that every variant does the same work, the JSON
// and the targets; a variant whose peer does not run is reported missing; and the reading names a winner only
// where the intervals decide it.
import { describe, expect, it } from 'vitest';
import type { PeerEntry, RunContext } from '../src/context.js';
import { parseArgs } from '../src/options.js';
import type { CreateHeap } from '../src/peers/paddock-heap.js';
import type { PeerDescriptor } from '../src/peers/peer.js';
import { runScopes, type ScopesSizes, scopesReport, startupPayload } from '../src/workloads/scopes.js';
import { type LaneJson, laneReading, type ScopesJson } from '../src/workloads/scopes-figures.js';

/** A backend's built file (the bench loads them the same way, from the workspace's dist). */
async function backend(file: string): Promise<CreateHeap> {
  const mod = (await import(new URL(`../../../packages/allocator/dist/${file}`, import.meta.url).href)) as { createHeap: CreateHeap };
  return mod.createHeap;
}
const createArenaHeap = await backend('pool-arena.js');
const createGlobalHeap = await backend('pool-global.js');

const TINY: ScopesSizes = { warmup: 1, rounds: 3, slices: 2, sliceCalls: 5, records: 300, bumpSlices: 2, bumpAllocs: 1000 };

function entry(name: string, createHeap: CreateHeap | null): PeerEntry {
  const descriptor: PeerDescriptor = { name, offers: ['pair-churn'], load: () => ({ skip: 'not loaded here' }) };
  return createHeap === null
    ? { name, descriptor, status: 'skipped', reason: 'not built', selfCheck: null, ready: null }
    : { name, descriptor, status: 'ran', reason: null, selfCheck: 'ok', ready: { heap: { createHeap, url: '' } } };
}

function context(global: boolean): RunContext {
  return {
    opts: parseArgs([]),
    started: Date.now(),
    peers: [entry('paddock', createArenaHeap), entry('paddock-global', global ? createGlobalHeap : null)],
    progress: { show: () => {}, done: () => {} },
    largeMax: null,
    command: 'test',
  };
}

describe('the scopes group, run tiny', () => {
  it('prices three lanes for three variants, the same work in each, and judges its targets', () => {
    const ctx = context(true);
    const r = runScopes(ctx, () => true, TINY);
    expect(r.missing).toEqual([]);
    expect(r.lanes.map((l) => l.lane)).toEqual(['control', 'scratch', 'startup']);
    for (const lane of r.lanes) {
      expect(lane.cells.map((c) => c.variant)).toEqual(['arena', 'scope', 'global']);
      for (const c of lane.cells) {
        expect(c.error, `${lane.lane} ${c.variant}`).toBeNull();
        expect(c.samples).toHaveLength(TINY.rounds);
        expect(c.warmup).toHaveLength(TINY.warmup);
        for (const x of c.samples) expect(x).toBeGreaterThan(0);
      }
    }
    expect(r.bump!.error).toBeNull();
    expect(r.bump!.scope).toHaveLength(TINY.rounds);
    expect(r.bump!.bump).toHaveLength(TINY.rounds);

    const report = scopesReport(r, ctx);
    const doc = report.json.scopes as ScopesJson;
    expect(doc.lanes.map((l) => l.name)).toEqual(['scopes-control', 'scopes-scratch', 'scopes-startup']);
    expect(doc.targets.map((t) => t.workload)).toEqual(['scopes-control', 'scopes-control', 'scopes-bump']);
    for (const t of doc.targets) expect(['MET', 'NOT MET']).toContain(t.status);
    expect(report.lines.join('\n')).toContain('scopes-startup');
    expect(report.lines.join('\n')).toContain('reading (from these figures):');
  });

  it('reports a variant whose peer does not run as missing, and runs the others', () => {
    const r = runScopes(context(false), (name) => name === 'scopes-scratch', TINY);
    expect(r.missing.map((m) => m.variant)).toEqual(['global']);
    expect(r.lanes).toHaveLength(1);
    expect(r.lanes[0].cells.map((c) => c.variant)).toEqual(['arena', 'scope']);
    expect(r.bump).toBeNull();
    const doc = scopesReport(r, context(false)).json.scopes as ScopesJson;
    expect(doc.targets).toEqual([]);
  });

  it('draws the same start-up payload from the same seed, every length in 8..120', () => {
    const a = startupPayload(100, 7);
    expect(startupPayload(100, 7)).toEqual(a);
    let at = 0;
    for (let r = 0; r < 100; r++) {
      expect(a[at]).toBeGreaterThanOrEqual(8);
      expect(a[at]).toBeLessThanOrEqual(120);
      at += 1 + a[at];
    }
    expect(at).toBe(a.length);
  });
});

describe('the reading', () => {
  const lane = (arena: number[], scope: number[], global: number[]): LaneJson => ({
    name: 'scopes-scratch',
    lane: 'scratch',
    what: '',
    callsPerRound: 1,
    results: {
      arena: { samplesNsPerCall: arena, warmupNsPerCall: [], error: null },
      scope: { samplesNsPerCall: scope, warmupNsPerCall: [], error: null },
      global: { samplesNsPerCall: global, warmupNsPerCall: [], error: null },
    },
  });

  it('names a winner only where its interval against every other variant lies below 0', () => {
    expect(laneReading(lane([10, 11, 10, 11, 10], [5, 6, 5, 6, 5], [20, 21, 20, 21, 20]))).toMatch(/^scopes-scratch: scope wins/);
    expect(laneReading(lane([10, 11, 10, 11, 10], [9, 12, 9, 12, 10], [20, 21, 20, 21, 20]))).toMatch(/does not tell it apart from/);
  });
});
