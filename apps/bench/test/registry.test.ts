// The bench's two registries: the peers (their order is the tables' columns) and the workloads (the names
// `--only` takes), and what `--only` picks from them.
import { describe, expect, it } from 'vitest';
import { PEERS } from '../src/peers/index.js';
import type { Offer, Ready } from '../src/peers/peer.js';
import { peerNames, select, workloadNames } from '../src/selection.js';
import { WORKLOADS } from '../src/workloads/index.js';

describe('the peers', () => {
  it('have distinct names, the main table in its column order first', () => {
    expect(new Set(PEERS.map((p) => p.name)).size).toBe(PEERS.length);
    expect(peerNames()).toEqual(['floor', 'thi.ng', 'as-tlsf', 'wasi-dlmalloc', 'paddock', 'paddock-classic', 'paddock-global', 'glibc', 'mimalloc', 'js']);
  });

  /** What each offer needs from a loaded peer. */
  const needs: Record<Offer, (r: Ready) => boolean> = {
    'pair-churn': (r) => r.timed !== undefined,
    sweep: (r) => r.timed !== undefined,
    memory: (r) => r.memory !== undefined,
    cross: (r) => r.heap !== undefined || r.plainJs === true,
    'one-agent': (r) => r.adapter !== undefined || r.bin !== undefined || r.plainJs === true,
    agents: (r) => r.heap !== undefined || r.bin !== undefined || r.plainJs === true,
  };

  it.each(PEERS.filter((p) => p.build === undefined && !p.name.startsWith('paddock')).map((p) => [p.name, p] as const))(
    '%s, loaded, gives what each workload it offers needs',
    async (name, p) => {
      const ready = await p.load(name, null);
      expect('skip' in ready).toBe(false);
      for (const offer of p.offers) expect(needs[offer](ready as Ready), offer).toBe(true);
      if ((ready as Ready).timed) expect((ready as Ready).timed!.name).toBe(name);
    },
  );
});

describe('--only', () => {
  it('takes every workload by name, and names no workload twice', () => {
    const members = WORKLOADS.flatMap((w) => w.members.map((m) => m.name));
    expect(new Set(members).size).toBe(members.length);
    for (const name of [...members, 'churn', 'sweep', 'hold', 'cross', 'programs', 'pony', 'pathology', 'standard', 'scopes']) {
      expect(workloadNames()).toContain(name);
    }
    for (const p of PEERS) expect(workloadNames()).not.toContain(p.name);
  });

  it('picks peers and workloads apart; a group picks its members; nothing picks everything', () => {
    expect(select(null)).toEqual({ peers: null, workloads: null });
    const s = select(['paddock', 'floor', 'churn', 'pair']);
    expect(s.peers).toEqual(new Set(['paddock', 'floor']));
    expect(s.workloads).toEqual(new Set(['churn-1k', 'churn-4k', 'churn-16k', 'churn-64k', 'pair']));
    expect(select(['cross']).workloads).toEqual(new Set(['cross-32']));
    expect(select(['js']).workloads).toBeNull();
    expect(select(['standard']).workloads).toEqual(new Set(['larson', 'xmalloc-test', 'mstress', 'rptest', 'glibc-thread', 'cache-scratch']));
    expect(select(['programs']).workloads!.size).toBe(21);
  });

  it('refuses a name that is neither a peer nor a workload', () => {
    expect(() => select(['pair', 'bogus'])).toThrow(new RangeError('--only: unknown name bogus'));
  });
});
