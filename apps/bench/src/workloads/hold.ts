/**
 * Hold-then-free (`hold-128k`, `hold-256k`, `hold-1m`): malloc K blocks of S bytes and write into every
 * page of each (a program uses what it allocates), hold them, free them all; repeat for a number of cycles
 * on one fresh instance. Timed per phase; memory read between the phases (untimed). The floor, thi.ng and
 * Paddock at three profile rungs, in interleaved rounds; the table gives time per block and what each
 * holds with the blocks live and after the frees.
 */
import { elapsed, type RunContext } from '../context.js';
import { fmtMiB, fmtNs, layout } from '../format.js';
import type { MemPeer } from '../mem-peer.js';
import { rssNow, touchPages } from '../memory.js';
import { PADDOCK_BIG_BYTES } from '../peers/paddock-heap.js';
import { median } from '../stats.js';
import { sizeLabel } from '../timed-loops.js';
import { memPeers, onFreshInstance, phaseText, type RoundOutcome, suiteRounds } from './rounds.js';
import type { WorkloadDescriptor } from './workload.js';

export interface HoldSpec {
  readonly name: string;
  readonly size: number;
  readonly count: number;
}

export const HOLD_SPECS: readonly HoldSpec[] = [
  { size: 128 * 1024, count: 128 },
  { size: 256 * 1024, count: 64 },
  { size: 1024 * 1024, count: 16 },
].map((s) => ({ ...s, name: `hold-${sizeLabel(s.size)}` }));

/** One round (one fresh instance, `cycles` hold/free cycles). */
export interface HoldSample {
  /** (malloc + touch + free) ns per block over all cycles. */
  readonly nsPerBlock: number;
  /** malloc + touch, ns per block. */
  readonly holdNsPerBlock: number;
  /** free, ns per block. */
  readonly freeNsPerBlock: number;
  /** The first cycle alone (a fresh instance: every page is new), ns per block. */
  readonly firstCycleNsPerBlock: number;
  /** Cycles 2.. (what a steady program sees), ns per block; null with one cycle. */
  readonly laterCyclesNsPerBlock: number | null;
  /** Most bytes the peer held with every block live (over the cycles). */
  readonly committedHeld: number;
  /** Bytes the peer holds after the last cycle's frees. */
  readonly committedAfterFree: number;
  /** Paddock's retention ledger after the last free (null: not Paddock). */
  readonly ledgerAfterFree: number | null;
  /** Resident memory of the process above its level before `setup`, with the blocks held (largest) and after the last free. */
  readonly residentHeld: number;
  readonly residentAfterFree: number;
}

export function runHold(peer: MemPeer, spec: HoldSpec, cycles: number): RoundOutcome<HoldSample> {
  return onFreshInstance(peer, (rss0) => {
    const { size, count } = spec;
    const ptr = new Array<number>(count).fill(0);
    let holdNs = 0;
    let freeNs = 0;
    let firstNs = 0;
    let committedHeld = 0;
    let residentHeld = 0;
    let u8 = peer.bytes();
    for (let c = 0; c < cycles; c++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < count; i++) {
        const p = peer.malloc(size);
        if (p === 0) return { ok: false, error: `malloc returned 0 (out of memory) at block ${i}, cycle ${c}` };
        ptr[i] = p;
        if (p + size > u8.length) u8 = peer.bytes();
        touchPages(u8, p, p + size);
      }
      const t1 = process.hrtime.bigint();
      const heldNow = peer.committed();
      if (heldNow > committedHeld) committedHeld = heldNow;
      const rssHeld = rssNow() - rss0;
      if (rssHeld > residentHeld) residentHeld = rssHeld;
      const t2 = process.hrtime.bigint();
      for (let i = 0; i < count; i++) peer.free(ptr[i], size);
      const t3 = process.hrtime.bigint();
      holdNs += Number(t1 - t0);
      freeNs += Number(t3 - t2);
      if (c === 0) firstNs = Number(t1 - t0) + Number(t3 - t2);
    }
    const blocks = count * cycles;
    return {
      ok: true,
      sample: {
        nsPerBlock: (holdNs + freeNs) / blocks,
        holdNsPerBlock: holdNs / blocks,
        freeNsPerBlock: freeNs / blocks,
        firstCycleNsPerBlock: firstNs / count,
        laterCyclesNsPerBlock: cycles > 1 ? (holdNs + freeNs - firstNs) / (blocks - count) : null,
        committedHeld,
        committedAfterFree: peer.committed(),
        ledgerAfterFree: peer.ledger(),
        residentHeld,
        residentAfterFree: rssNow() - rss0,
      },
    };
  });
}

/** Paddock runs hold-then-free at the default rung and at both ends of the dial. */
export const HOLD_RUNGS = [1, 3, 10];

interface HoldCell {
  readonly peer: MemPeer;
  readonly samples: HoldSample[];
  readonly warmup: HoldSample[];
  error: string | null;
}

interface HoldResult {
  readonly cycles: number;
  readonly results: { spec: HoldSpec; cells: HoldCell[] }[];
}

function runHoldSuite(ctx: RunContext, picked: (name: string) => boolean): HoldResult | null {
  const specs = HOLD_SPECS.filter((h) => picked(h.name));
  if (specs.length === 0) return null;
  const cycles = ctx.opts.mode.holdCycles;
  const rounds = suiteRounds(ctx);
  const peers = memPeers(ctx, HOLD_RUNGS);
  const total = rounds.warmup + rounds.rounds;
  const results: { spec: HoldSpec; cells: HoldCell[] }[] = [];
  for (const spec of specs) {
    const cells = peers.map((peer): HoldCell => ({ peer, samples: [], warmup: [], error: null }));
    for (let r = 0; r < total; r++) {
      for (let k = 0; k < cells.length; k++) {
        const cell = cells[(k + r) % cells.length];
        if (cell.error !== null) continue;
        ctx.progress.show(`${spec.name} ${phaseText(rounds, r)} ${cell.peer.name} (${elapsed(ctx)})`, `${spec.name} ${r}`);
        const res = runHold(cell.peer, spec, cycles);
        if (!res.ok) cell.error = res.error;
        else (r < rounds.warmup ? cell.warmup : cell.samples).push(res.sample);
      }
    }
    results.push({ spec, cells });
  }
  return { cycles, results };
}

function holdReport(r: HoldResult | null, ctx: RunContext) {
  if (r === null) return { lines: [], json: { hold: null } };
  const { cycles, results } = r;
  const lines: string[] = [''];
  lines.push(
    `hold-then-free: K blocks of S bytes, one byte written into every page of each, held, all freed; ${cycles} cycles a round ` +
      `on a fresh instance; medians of ${suiteRounds(ctx).rounds} rounds (Paddock: ${fmtMiB(PADDOCK_BIG_BYTES)} heap, rungs ${HOLD_RUNGS.join(', ')})`,
  );
  const rows: string[][] = [
    ['workload', 'blocks', 'peer', 'ns/block', 'malloc+touch', 'free', '1st cycle', 'later cycles', 'held: committed', 'after free', 'ledger', 'rss held', 'rss after free'],
  ];
  for (const { spec, cells } of results) {
    for (const c of cells) {
      const label = [spec.name, `${spec.count} x ${sizeLabel(spec.size)}`, c.peer.name];
      if (c.error !== null) {
        rows.push([...label, 'failed']);
        continue;
      }
      const s = c.samples;
      const m = (f: (x: HoldSample) => number) => median(s.map(f));
      rows.push([
        ...label,
        fmtNs(m((x) => x.nsPerBlock)),
        fmtNs(m((x) => x.holdNsPerBlock)),
        fmtNs(m((x) => x.freeNsPerBlock)),
        fmtNs(m((x) => x.firstCycleNsPerBlock)),
        s[0].laterCyclesNsPerBlock === null ? '-' : fmtNs(m((x) => x.laterCyclesNsPerBlock as number)),
        fmtMiB(m((x) => x.committedHeld)),
        fmtMiB(m((x) => x.committedAfterFree)),
        s[0].ledgerAfterFree === null ? '-' : fmtMiB(m((x) => x.ledgerAfterFree as number)),
        fmtMiB(m((x) => x.residentHeld)),
        fmtMiB(m((x) => x.residentAfterFree)),
      ]);
    }
  }
  lines.push(layout(rows));
  lines.push(
    'committed: Paddock\'s committed bytes; the floor\'s and thi.ng\'s high-water mark (they never give memory back). ' +
      'rss: resident memory of the process above its level before the instance was made.',
  );
  const json = results.map(({ spec, cells }) => ({
    name: spec.name,
    blockBytes: spec.size,
    blocks: spec.count,
    cycles,
    results: Object.fromEntries(
      cells.map((c) => [
        c.peer.name,
        {
          rung: c.peer.rung,
          medianNsPerBlock: c.samples.length > 0 ? median(c.samples.map((x) => x.nsPerBlock)) : null,
          samples: c.samples,
          warmup: c.warmup,
          error: c.error,
        },
      ]),
    ),
  }));
  return { lines, json: { hold: json } };
}

export const hold: WorkloadDescriptor<HoldResult | null> = {
  name: 'hold',
  members: HOLD_SPECS.map((s) => ({ name: s.name, groups: ['hold'] })),
  run: runHoldSuite,
  failures: (r) =>
    (r?.results ?? []).flatMap(({ spec, cells }) =>
      cells.filter((c) => c.error !== null).map((c) => ({ peer: c.peer.family, reason: `${c.peer.name} ${spec.name}: ${c.error}` })),
    ),
  report: holdReport,
};
