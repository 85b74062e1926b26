/**
 * Realloc growth chains (`realloc`): one block starts at 64 KiB and is realloc'ed upward by 1.25x to 64 MiB
 * (in Paddock's large geometry that crosses 1 MiB into the large tier and `largeMax`, 8 MiB - 32 KiB, into
 * oversized mappings), each step writing into every page it gained (a growing buffer being filled), then
 * it is freed. A round is `chains` chains on one fresh instance. Paddock runs at several profile rungs: a
 * higher rung should keep more memory and run faster, and the table shows both, then the dial (each rung
 * against the one below, memory kept against time).
 */
import { elapsed, type RunContext } from '../context.js';
import { fmtCount, fmtMiB, fmtNs, fmtSigned, layout } from '../format.js';
import type { MemPeer } from '../mem-peer.js';
import { rssNow, touchPages } from '../memory.js';
import { PADDOCK_BIG_BYTES } from '../peers/paddock-heap.js';
import { median } from '../stats.js';
import { sizeLabel } from '../timed-loops.js';
import { type Summary, summarize } from './timed-figures.js';
import { memPeers, onFreshInstance, phaseText, type RoundOutcome, type Rounds, suiteRounds } from './rounds.js';
import type { WorkloadDescriptor } from './workload.js';

export const CHAIN_START = 64 * 1024;
export const CHAIN_END = 64 * 1024 * 1024;
export const CHAIN_FACTOR = 1.25;
export const CHAIN_RUNGS = [1, 3, 5, 10];

/** The sizes of one chain: the first malloc, then one realloc per later entry. */
export function chainSizes(start = CHAIN_START, end = CHAIN_END, factor = CHAIN_FACTOR): number[] {
  const out = [start];
  let s = start;
  while (s < end) {
    s = Math.min(end, Math.ceil(s * factor));
    out.push(s);
  }
  return out;
}

export interface ChainSample {
  /** ns per realloc over the round (touches included, the first malloc and the frees too). */
  readonly nsPerRealloc: number;
  /** ms per chain, chain by chain. */
  readonly chainMs: number[];
  /** Most bytes held at any step of any chain. */
  readonly committedPeak: number;
  /** Bytes held after the last chain's free: what the peer kept. */
  readonly committedAfter: number;
  /** Paddock's retention ledger after the last free (null: not Paddock). */
  readonly ledgerAfter: number | null;
  /** Resident memory above the process's level before `setup`: at the top of a chain (largest), and after the last free. */
  readonly residentPeak: number;
  readonly residentAfter: number;
}

export function runChains(peer: MemPeer, sizes: readonly number[], chains: number): RoundOutcome<ChainSample> {
  return onFreshInstance(peer, (rss0) => {
    const chainMs: number[] = [];
    let total = 0;
    let committedPeak = 0;
    let residentPeak = 0;
    for (let c = 0; c < chains; c++) {
      const t0 = process.hrtime.bigint();
      let size = sizes[0];
      let p = peer.malloc(size);
      if (p === 0) return { ok: false, error: `malloc(${size}) returned 0 in chain ${c}` };
      let u8 = peer.bytes();
      if (p + size > u8.length) u8 = peer.bytes();
      touchPages(u8, p, p + size);
      for (let k = 1; k < sizes.length; k++) {
        const next = sizes[k];
        const q = peer.realloc(p, size, next);
        if (q === 0) return { ok: false, error: `realloc to ${next} returned 0 in chain ${c}` };
        if (q + next > u8.length) u8 = peer.bytes();
        touchPages(u8, q + size, q + next);
        p = q;
        size = next;
        const held = peer.committed();
        if (held > committedPeak) committedPeak = held;
      }
      const rssTop = rssNow() - rss0;
      if (rssTop > residentPeak) residentPeak = rssTop;
      peer.free(p, size);
      const t1 = process.hrtime.bigint();
      const ns = Number(t1 - t0);
      total += ns;
      chainMs.push(ns / 1e6);
    }
    return {
      ok: true,
      sample: {
        nsPerRealloc: total / (chains * (sizes.length - 1)),
        chainMs,
        committedPeak,
        committedAfter: peer.committed(),
        ledgerAfter: peer.ledger(),
        residentPeak,
        residentAfter: rssNow() - rss0,
      },
    };
  });
}

interface ChainCell {
  readonly peer: MemPeer;
  readonly samples: ChainSample[];
  readonly warmup: ChainSample[];
  error: string | null;
}

interface ReallocResult {
  readonly rounds: Rounds;
  readonly chains: number;
  readonly sizes: number[];
  readonly cells: ChainCell[];
}

function runReallocSuite(ctx: RunContext, picked: (name: string) => boolean): ReallocResult | null {
  if (!picked('realloc')) return null;
  const rounds = suiteRounds(ctx);
  const chains = ctx.opts.mode.chains;
  const peers = memPeers(ctx, CHAIN_RUNGS);
  // Paddock's rungs first: they are what the table is about.
  peers.sort((a, b) => (a.family === 'paddock' ? 0 : 1) - (b.family === 'paddock' ? 0 : 1));
  const sizes = chainSizes();
  const cells = peers.map((peer): ChainCell => ({ peer, samples: [], warmup: [], error: null }));
  const total = rounds.warmup + rounds.rounds;
  for (let r = 0; r < total; r++) {
    for (let k = 0; k < cells.length; k++) {
      const cell = cells[(k + r) % cells.length];
      if (cell.error !== null) continue;
      ctx.progress.show(`realloc ${phaseText(rounds, r)} ${cell.peer.name} (${elapsed(ctx)})`, `realloc ${r}`);
      const res = runChains(cell.peer, sizes, chains);
      if (!res.ok) cell.error = res.error;
      else (r < rounds.warmup ? cell.warmup : cell.samples).push(res.sample);
    }
  }
  return { rounds, chains, sizes, cells };
}

function reallocReport(res: ReallocResult | null, ctx: RunContext) {
  if (res === null) return { lines: [], json: { realloc: null } };
  const { rounds, chains, sizes, cells } = res;
  const largeMax = ctx.largeMax;
  const reallocs = sizes.length - 1;
  const lines: string[] = [''];
  const crossing =
    largeMax === null
      ? ''
      : `, crossing 1 MiB (class -> large) and largeMax ${fmtCount(largeMax)} B (large -> oversized)`;
  lines.push(
    `realloc: one block from ${sizeLabel(CHAIN_START)} to ${sizeLabel(CHAIN_END)} by ${CHAIN_FACTOR}x (${reallocs} reallocs${crossing}), ` +
      `every page it gains written, then freed; ${chains} chains a round on a fresh instance; medians of ${rounds.rounds} rounds`,
  );
  const rows: string[][] = [
    ['peer', 'ns/realloc', 'min .. max', '1st chain ms', 'later chains ms', 'committed peak', 'kept after', 'ledger after', 'rss peak', 'rss after'],
  ];
  interface Fig {
    ns: Summary;
    kept: number;
    later: number;
  }
  const figs = new Map<string, Fig>();
  for (const c of cells) {
    if (c.error !== null) {
      rows.push([c.peer.name, 'failed']);
      continue;
    }
    const s = c.samples;
    const m = (f: (x: ChainSample) => number) => median(s.map(f));
    const ns = summarize(s.map((x) => x.nsPerRealloc)) as Summary;
    const later = chains > 1 ? m((x) => x.chainMs.slice(1).reduce((a, b) => a + b, 0) / (chains - 1)) : NaN;
    figs.set(c.peer.name, { ns, kept: m((x) => x.committedAfter), later });
    rows.push([
      c.peer.name,
      fmtNs(ns.median),
      `${fmtNs(ns.min)} .. ${fmtNs(ns.max)}`,
      m((x) => x.chainMs[0]).toFixed(2),
      chains > 1 ? later.toFixed(2) : '-',
      fmtMiB(m((x) => x.committedPeak)),
      fmtMiB(m((x) => x.committedAfter)),
      s[0].ledgerAfter === null ? '-' : fmtMiB(m((x) => x.ledgerAfter as number)),
      fmtMiB(m((x) => x.residentPeak)),
      fmtMiB(m((x) => x.residentAfter)),
    ]);
  }
  lines.push(layout(rows));
  lines.push(
    'kept after: committed bytes (floor, thi.ng: high-water mark) once the last chain is freed. ns/realloc includes writing the new pages; ' +
      'the floor and thi.ng never give memory back (thi.ng grows a block at the top of its buffer in place, without a copy).',
  );

  // The dial: each measured Paddock rung against the one below it.
  const rungs = cells.filter((c) => c.peer.family === 'paddock' && figs.has(c.peer.name)).map((c) => c.peer);
  const dial: { from: number; to: number; keptDeltaBytes: number; nsChange: number; laterChange: number; faster: boolean; slower: boolean; keepsMore: boolean }[] = [];
  /** Fewer measured rounds than this and no min..max range says anything: no speed verdict. */
  const judgeable = rounds.rounds >= 3;
  if (rungs.length >= 2) {
    lines.push(
      judgeable
        ? 'the dial (Paddock, each rung against the one below; "beyond the spread": the two rungs\' min..max ranges do not overlap):'
        : `the dial (Paddock, each rung against the one below; ${rounds.rounds} measured round(s): too few to tell a speed difference from noise, so no speed verdict):`,
    );
    const drows: string[][] = [];
    for (let i = 1; i < rungs.length; i++) {
      const a = figs.get(rungs[i - 1].name) as Fig;
      const b = figs.get(rungs[i].name) as Fig;
      const keptDelta = b.kept - a.kept;
      const change = b.ns.median / a.ns.median - 1;
      const laterChange = b.later / a.later - 1;
      const faster = judgeable && b.ns.max < a.ns.min;
      const slower = judgeable && b.ns.min > a.ns.max;
      const keepsMore = keptDelta >= 4096;
      dial.push({ from: rungs[i - 1].rung as number, to: rungs[i].rung as number, keptDeltaBytes: keptDelta, nsChange: change, laterChange, faster, slower, keepsMore });
      const speed = !judgeable ? 'not judged' : faster ? 'faster, beyond the spread' : slower ? 'SLOWER, beyond the spread' : 'within the spread';
      const mem = keepsMore ? `keeps ${fmtMiB(keptDelta)} more` : keptDelta <= -4096 ? `keeps ${fmtMiB(-keptDelta)} LESS` : 'keeps the same';
      let verdict: string;
      if (!judgeable) verdict = keepsMore ? 'memory up; speed not judged' : 'speed not judged';
      else if (keepsMore && faster) verdict = 'trade: more memory, less time';
      else if (!keepsMore && Math.abs(keptDelta) < 4096 && !faster && !slower) verdict = 'FLAT: same memory, same time';
      else if (keepsMore && !faster) verdict = 'memory up, no measured speed-up';
      else if (!keepsMore && faster) verdict = 'faster with no more memory';
      else verdict = 'no trade';
      drows.push([
        `  r${rungs[i - 1].rung} -> r${rungs[i].rung}:`,
        mem,
        `ns/realloc ${fmtSigned(change)} (${speed})`,
        `later chains ${fmtSigned(laterChange)}`,
        verdict,
      ]);
    }
    lines.push(layout(drows));
    const first = figs.get(rungs[0].name) as Fig;
    const last = figs.get(rungs[rungs.length - 1].name) as Fig;
    const overall = !judgeable
      ? `r${rungs[0].rung} -> r${rungs[rungs.length - 1].rung}: kept ${fmtMiB(last.kept - first.kept)} more, ns/realloc ${fmtSigned(last.ns.median / first.ns.median - 1)} (not judged: too few rounds)`
      : last.kept - first.kept >= 4096 && last.ns.max < first.ns.min
        ? `r${rungs[0].rung} -> r${rungs[rungs.length - 1].rung}: ${fmtMiB(last.kept - first.kept)} more kept for ${fmtSigned(last.ns.median / first.ns.median - 1)} ns/realloc: a measured trade`
        : `r${rungs[0].rung} -> r${rungs[rungs.length - 1].rung}: kept ${fmtMiB(last.kept - first.kept)} more, ns/realloc ${fmtSigned(last.ns.median / first.ns.median - 1)}: ` +
          'NOT a measured trade at this spread (FLAT or no speed-up)';
    lines.push(`  overall ${overall}`);
  }

  const json = {
    name: 'realloc',
    startBytes: CHAIN_START,
    endBytes: CHAIN_END,
    factor: CHAIN_FACTOR,
    sizes,
    reallocsPerChain: reallocs,
    chains,
    paddockHeapBytes: PADDOCK_BIG_BYTES,
    paddockLargeMax: largeMax,
    results: Object.fromEntries(
      cells.map((c) => [
        c.peer.name,
        {
          rung: c.peer.rung,
          medianNsPerRealloc: figs.get(c.peer.name)?.ns.median ?? null,
          samples: c.samples,
          warmup: c.warmup,
          error: c.error,
        },
      ]),
    ),
    dial,
  };
  return { lines, json: { realloc: json } };
}

export const realloc: WorkloadDescriptor<ReallocResult | null> = {
  name: 'realloc',
  members: [{ name: 'realloc', groups: [] }],
  run: runReallocSuite,
  failures: (r) => (r?.cells ?? []).filter((c) => c.error !== null).map((c) => ({ peer: c.peer.family, reason: `${c.peer.name} realloc: ${c.error}` })),
  report: reallocReport,
};
