/**
 * The timed loops: `pair`, `churn-<live>` (1k, 4k, 16k, 64k live blocks of random sizes) and the size
 * sweep `sweep-<size>` (fixed-size churn, 32 B to 16 MiB). For each workload: warm-up rounds, then measured
 * rounds; in every round each peer runs one batch (a fresh instance, the untimed prefill, one timed call of
 * its own copy of the loop), the order rotating round by round. The first warm-up round calibrates a time
 * cap: a slower peer runs a prefix of the same sequence in every round.
 */
import { elapsed, offers, type PeerEntry, running, type RunContext } from '../context.js';
import { runBatch, type Peer } from '../runner.js';
import {
  churnWorkload,
  isSweep,
  liveLabel,
  pairWorkload,
  sizeLabel,
  SWEEP_SIZES,
  sweepLive,
  sweepWorkload,
  type TimedWorkload,
} from '../timed-loops.js';
import type { Cell, TimedResult } from './timed-figures.js';
import { timedReport } from './timed-report.js';
import type { Failure, WorkloadDescriptor } from './workload.js';

export const LIVE_COUNTS = [1024, 4096, 16384, 65536];
/** A time-capped peer still runs at least this many ops a round. */
const MIN_OPS = 16;

function runTimed(ctx: RunContext, picked: (name: string) => boolean): TimedResult {
  const { opts } = ctx;
  const mode = opts.mode;
  const workloads: TimedWorkload[] = [];
  if (picked('pair')) workloads.push(pairWorkload(mode.pairOps));
  for (const live of LIVE_COUNTS) {
    if (picked(`churn-${liveLabel(live)}`)) workloads.push(churnWorkload(live, mode.churnOps(live), opts.seed));
  }
  for (const size of SWEEP_SIZES) {
    if (picked(`sweep-${sizeLabel(size)}`)) workloads.push(sweepWorkload(size, mode.churnOps(sweepLive(size)), opts.seed));
  }

  const all = running(ctx, 'pair-churn');
  /** The peers of one workload: the size sweep only has the peers that offer it. */
  const runningFor = (w: TimedWorkload): PeerEntry[] => (isSweep(w) ? all.filter((e) => offers(e, 'sweep')) : all);
  /** A peer as it runs `w`: in the size sweep, with the capacity it asks for there. */
  const peerFor = (w: TimedWorkload, e: PeerEntry): Peer => {
    const p = e.ready!.timed!;
    const big = e.ready!.sweepMaxBytes;
    return isSweep(w) && big !== undefined ? { ...p, maxBytes: big } : p;
  };
  const cells = new Map<string, Map<string, Cell>>();
  for (const w of workloads) {
    const row = new Map<string, Cell>();
    for (const e of runningFor(w)) {
      row.set(e.name, { peer: e.name, workload: w.name, opsPerRound: w.ops, samples: [], warmup: [], error: null, touched: false, peakRss: [] });
    }
    cells.set(w.name, row);
  }

  const budgetNs = mode.budgetMs * 1e6;
  const totalRounds = opts.warmup + opts.rounds;
  const totalBatches = workloads.reduce((n, w) => n + totalRounds * runningFor(w).length, 0);
  let batch = 0;
  for (const w of workloads) {
    const row = cells.get(w.name)!;
    const here = runningFor(w);
    for (let r = 0; r < totalRounds; r++) {
      for (let k = 0; k < here.length; k++) {
        const peer = peerFor(w, here[(k + r) % here.length]);
        const cell = row.get(peer.name)!;
        batch++;
        if (cell.error !== null) continue;
        const phase = r < opts.warmup ? `warm-up ${r + 1}/${opts.warmup}` : `round ${r - opts.warmup + 1}/${opts.rounds}`;
        ctx.progress.show(
          `[${String(batch).padStart(String(totalBatches).length)}/${totalBatches}] ${w.name} ${phase} ${peer.name} (${elapsed(ctx)})`,
          `${w.name} ${r}`,
        );
        if (r === 0) {
          const res = runBatch(peer, w, w.ops, opts.touch, budgetNs);
          if (!res.ok) {
            cell.error = res.error;
            continue;
          }
          cell.opsPerRound =
            res.ops >= w.ops ? w.ops : Math.min(w.ops, Math.max(MIN_OPS, Math.floor((res.ops * budgetNs) / res.ns)));
          cell.warmup.push(res.ns / res.ops);
          cell.touched = res.touched;
        } else {
          const res = runBatch(peer, w, cell.opsPerRound, opts.touch);
          if (!res.ok) {
            cell.error = res.error;
            continue;
          }
          (r < opts.warmup ? cell.warmup : cell.samples).push(res.ns / res.ops);
          if (r >= opts.warmup && res.peakRss !== undefined) cell.peakRss.push(res.peakRss);
        }
      }
    }
  }
  return { workloads, cells };
}

/** A peer that failed on any of these workloads, with every workload it failed on. */
function timedFailures(r: TimedResult): Failure[] {
  const errors = new Map<string, string[]>();
  for (const w of r.workloads) {
    for (const c of r.cells.get(w.name)!.values()) {
      if (c.error !== null) errors.set(c.peer, [...(errors.get(c.peer) ?? []), `${c.workload}: ${c.error}`]);
    }
  }
  return [...errors].map(([peer, errs]) => ({ peer, reason: errs.join('; ') }));
}

export const timed: WorkloadDescriptor<TimedResult> = {
  name: 'timed',
  members: [
    { name: 'pair', groups: [] },
    ...LIVE_COUNTS.map((live) => ({ name: `churn-${liveLabel(live)}`, groups: ['churn'] })),
    ...SWEEP_SIZES.map((size) => ({ name: `sweep-${sizeLabel(size)}`, groups: ['sweep'] })),
  ],
  run: runTimed,
  failures: timedFailures,
  report: timedReport,
};
