/**
 * Cross-agent free (`cross-32`): worker A mallocs 32 B blocks in batches and hands them to worker B, which
 * frees them (`cross-pair.ts` runs one pair of workers, `cross-worker.ts` is their script). Paddock's pair
 * shares one heap; plain JavaScript transfers buffers instead. Warm-up then measured rounds, the pairs
 * interleaved and rotated; the table gives blocks per second and how long each side waited.
 */
import { elapsed, type PeerEntry, running, type RunContext } from '../context.js';
import { fmtCount, fmtMiB, fmtNs, fmtPct, fmtRate, fmtRatio, layout } from '../format.js';
import { median } from '../stats.js';
import { CROSS_BATCH, CROSS_BLOCK, CROSS_HEAP_BYTES, CROSS_SLOTS, CrossPair, type CrossSample } from './cross-pair.js';
import type { CrossMode } from './cross-protocol.js';
import { phaseText, type Rounds, suiteRounds } from './rounds.js';
import { type Summary, summarize } from './timed-figures.js';
import type { WorkloadDescriptor } from './workload.js';

const CROSS_NAME = 'cross-32';

/** Paddock's heap gives the `paddock` pair; plain JavaScript the two JS baselines. */
function modesOf(e: PeerEntry): CrossMode[] {
  if (e.ready!.heap) return ['paddock'];
  return e.ready!.plainJs ? ['js-transfer', 'js-typed'] : [];
}

interface CrossCell {
  readonly peer: string;
  readonly mode: CrossMode;
  readonly samples: CrossSample[];
  readonly warmup: CrossSample[];
  error: string | null;
}

interface CrossResult {
  readonly rounds: Rounds;
  readonly durationMs: number;
  readonly cells: CrossCell[];
}

async function runCrossSuite(ctx: RunContext, picked: (name: string) => boolean): Promise<CrossResult | null> {
  if (!picked(CROSS_NAME)) return null;
  const rounds = suiteRounds(ctx);
  const durationMs = ctx.opts.mode.crossMs;
  const peers = running(ctx, 'cross').flatMap((e) => modesOf(e).map((mode) => ({ e, mode })));
  const cells = peers.map(({ e, mode }): CrossCell => ({ peer: e.name, mode, samples: [], warmup: [], error: null }));
  const pairs = new Map<CrossMode, CrossPair>();
  const total = rounds.warmup + rounds.rounds;
  try {
    for (const { e, mode } of peers) pairs.set(mode, new CrossPair(mode, e.ready!.heap?.url ?? null, e.ready!.heap?.createHeap ?? null));
    for (let r = 0; r < total; r++) {
      for (let k = 0; k < cells.length; k++) {
        const cell = cells[(k + r) % cells.length];
        if (cell.error !== null) continue;
        ctx.progress.show(`cross-32 ${phaseText(rounds, r)} ${cell.mode} (${elapsed(ctx)})`, `cross ${r}`);
        const res = await pairs.get(cell.mode)!.run(r, durationMs);
        if (!res.ok) cell.error = res.error;
        else if (res.sample.bad !== 0) cell.error = `${res.sample.bad} blocks arrived with a wrong serial`;
        else if (res.sample.liveBytesAfter !== null && res.sample.liveBytesAfter !== 0) {
          cell.error = `the producer still has ${res.sample.liveBytesAfter} live bytes after every block was freed, flushed and drained`;
        } else (r < rounds.warmup ? cell.warmup : cell.samples).push(res.sample);
      }
    }
  } finally {
    await Promise.all([...pairs.values()].map((p) => p.close()));
  }
  return { rounds, durationMs, cells };
}

function crossReport(res: CrossResult | null) {
  if (res === null) return { lines: [], json: { cross: null } };
  const { rounds, durationMs, cells } = res;
  const modes = cells.map((c) => c.mode);
  const lines: string[] = [''];
  lines.push(
    `cross-32: worker A mallocs ${CROSS_BLOCK} B blocks in batches of ${fmtCount(CROSS_BATCH)} and hands them to worker B, which frees them ` +
      `(at most ${CROSS_SLOTS} batches in flight); ${durationMs} ms a round, medians of ${rounds.rounds} rounds, end to end`,
  );
  const rows: string[][] = [['peer', 'blocks/s', 'ns/block', 'min .. max blocks/s', 'blocks a round', 'A blocked', 'B blocked', 'check']];
  const med = new Map<string, number>();
  for (const c of cells) {
    if (c.error !== null) {
      rows.push([c.mode, 'failed']);
      continue;
    }
    const rates = c.samples.map((s) => s.blocksPerSecond);
    const sm = summarize(rates) as Summary;
    med.set(c.mode, sm.median);
    const last = c.samples[c.samples.length - 1];
    const check =
      c.mode === 'paddock'
        ? `serials ok; A live after B's flush + A's drain: ${fmtCount(last.liveBytesAfter ?? 0)} B; committed ${fmtMiB(last.committedBytes)}`
        : 'serials ok';
    rows.push([
      c.mode,
      fmtRate(sm.median),
      fmtNs(1e9 / sm.median),
      `${fmtRate(sm.min)} .. ${fmtRate(sm.max)}`,
      fmtCount(Math.round(median(c.samples.map((s) => s.blocks)))),
      fmtPct(median(c.samples.map((s) => s.producerWaitShare))),
      c.samples[0].consumerWaitShare === null ? '-' : fmtPct(median(c.samples.map((s) => s.consumerWaitShare as number))),
      check,
    ]);
  }
  lines.push(layout(rows));
  const p = med.get('paddock');
  const ratios: Record<string, number | null> = {};
  for (const base of ['js-transfer', 'js-typed']) {
    const b = med.get(base);
    ratios[`paddock/${base}`] = p !== undefined && b !== undefined ? p / b : null;
  }
  const ratioText = Object.entries(ratios)
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${k} ${fmtRatio(v)}`);
  if (ratioText.length > 0) lines.push(`throughput ratios (blocks/s): ${ratioText.join(', ')}`);
  if (modes.includes('paddock')) {
    lines.push(
      `paddock: ${fmtMiB(CROSS_HEAP_BYTES)} heap made by the main thread, both workers attachHeap(); B flush()es after every batch, ` +
        'A drain()s before every batch.',
    );
  }
  lines.push(
    'js-transfer: one transferred ArrayBuffer per batch; js-typed: one Int32Array(8) per block, all transferred in one message per batch. ' +
      'A/B blocked: share of the run the producer waited on a full ring / the consumer on an empty one (the JS consumer waits in its event loop: not measured).',
  );
  const json = {
    name: 'cross-32',
    blockBytes: CROSS_BLOCK,
    batch: CROSS_BATCH,
    slots: CROSS_SLOTS,
    durationMs,
    paddockHeapBytes: CROSS_HEAP_BYTES,
    results: Object.fromEntries(
      cells.map((c) => [
        c.mode,
        {
          medianBlocksPerSecond: med.get(c.mode) ?? null,
          samples: c.samples,
          warmup: c.warmup,
          error: c.error,
        },
      ]),
    ),
    ratios,
  };
  return { lines, json: { cross: json } };
}

export const cross: WorkloadDescriptor<CrossResult | null> = {
  name: 'cross',
  members: [{ name: CROSS_NAME, groups: ['cross'] }],
  run: runCrossSuite,
  failures: (r) => (r?.cells ?? []).filter((c) => c.error !== null).map((c) => ({ peer: c.peer, reason: `${c.mode} cross-32: ${c.error}` })),
  report: crossReport,
};
