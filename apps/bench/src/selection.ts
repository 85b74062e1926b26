/**
 * `--only`: the names it takes (every peer; every workload and group the workloads' descriptors list) and
 * what a list of them picks: peers, workloads, or both (an empty side picks everything).
 */
import { PEERS } from './peers/index.js';
import { WORKLOADS } from './workloads/index.js';

export interface Selection {
  /** Peer names picked; null: every peer. */
  readonly peers: ReadonlySet<string> | null;
  /** Workload names picked; null: every workload. */
  readonly workloads: ReadonlySet<string> | null;
}

/** The peers' names: those of the main table first, then the others. */
export function peerNames(): string[] {
  const table = PEERS.filter((p) => p.offers.includes('pair-churn'));
  return [...table, ...PEERS.filter((p) => !table.includes(p))].map((p) => p.name);
}

/** The workloads' names, each group just before its first member. */
export function workloadNames(): string[] {
  const names: string[] = [];
  for (const w of WORKLOADS) {
    for (const m of w.members) {
      for (const g of m.groups) if (!names.includes(g)) names.push(g);
      names.push(m.name);
    }
  }
  return names;
}

/** What `only` picks; throws a RangeError naming the first name that is neither a peer, a workload nor a group. */
export function select(only: readonly string[] | null): Selection {
  if (only === null) return { peers: null, workloads: null };
  const peers = new Set<string>();
  const workloads = new Set<string>();
  for (const name of only) {
    if (PEERS.some((p) => p.name === name)) {
      peers.add(name);
      continue;
    }
    const members = WORKLOADS.flatMap((w) => w.members).filter((m) => m.name === name || m.groups.includes(name));
    if (members.length === 0) throw new RangeError(`--only: unknown name ${name}`);
    for (const m of members) workloads.add(m.name);
  }
  return { peers: peers.size > 0 ? peers : null, workloads: workloads.size > 0 ? workloads : null };
}
