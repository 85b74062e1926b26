/**
 * The `snapshots` group: what `heap.snapshot()` costs (pool_arena, the `paddock` peer).
 *
 * - `snapshot-1g`: one agent fills a heap with 1 GiB of blocks of mixed sizes (32 B to 400 KB, about 110,000
 *   blocks), then takes a snapshot per round; the figure is ms per snapshot. Target: under 50 ms.
 * - `snapshot-load`: on that same heap two worker agents churn (free a random block of a window of 4,096, malloc a
 *   random 16..4096 B in its place) while the main thread alternates slices: in an `on` slice it takes a snapshot
 *   every 100 ms (two per slice), in an `off` slice it takes none. The figure is the workers' operations per
 *   second in each slice; the change of the `on` median against the `off` median, with its 95% bootstrap
 *   interval, is what snapshots cost the other agents. Target: less than 5% lost.
 */
import { Worker } from 'node:worker_threads';
import { elapsed, running, type RunContext } from '../context.js';
import { errorText } from '../format.js';
import { roundsOr } from '../options.js';
import type { PaddockHeap } from '../peers/paddock-heap.js';
import { change, estimate, fmtChange, type Change, type Estimate } from '../stats.js';
import { L_COUNTERS, L_STOP, type SnapshotLoadWorkerData } from './snapshot-protocol.js';
import type { Failure, WorkloadDescriptor, WorkloadReport } from './workload.js';

/** The heap both members use: room for the 1 GiB of blocks and the workers' churn. */
const HEAP_BYTES = 2 * 1024 * 1024 * 1024;
const FILL_BYTES = 1024 * 1024 * 1024;
const FILL_SIZES = [32, 64, 100, 256, 1000, 4096, 16384, 50000];
const WORKERS = 2;
const WINDOW = 4096;
const SLICE_MS = 200;
const EVERY_MS = 100;
/** The targets. */
export const SNAPSHOT_MS_TARGET = 50;
export const LOAD_LOSS_TARGET = 0.05;

export interface SnapshotsJson {
  /** Live blocks and bytes of the filled heap, arenas it took. */
  readonly heap: { readonly blocks: number; readonly bytes: number; readonly arenas: number } | null;
  /** ms per snapshot, each round. */
  readonly snapshotMs: number[];
  readonly snapshot: Estimate | null;
  /** The workers' operations per second in each slice, with and without snapshots every 100 ms. */
  readonly on: number[];
  readonly off: number[];
  /** Median of `on` against median of `off`. */
  readonly load: Change | null;
  /** Snapshots taken during the `on` slices. */
  readonly taken: number;
  readonly error: string | null;
}

function emptyResult(error: string | null): SnapshotsJson {
  return { heap: null, snapshotMs: [], snapshot: null, on: [], off: [], load: null, taken: 0, error };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runSnapshots(ctx: RunContext, picked: (name: string) => boolean): Promise<SnapshotsJson | null> {
  const wantOne = picked('snapshot-1g');
  const wantLoad = picked('snapshot-load');
  if (!wantOne && !wantLoad) return null;
  const peer = running(ctx, 'agents').find((e) => e.name === 'paddock');
  if (peer?.ready?.heap === undefined) return emptyResult('the paddock peer does not run');
  const full = ctx.opts.mode.name === 'full';
  const rounds = roundsOr(ctx.opts.roundsGiven, full ? 31 : 15);
  const slices = roundsOr(ctx.opts.roundsGiven, full ? 60 : 30);
  let heap: PaddockHeap | null = null;
  try {
    heap = peer.ready.heap.createHeap({ maxBytes: HEAP_BYTES });
    ctx.progress.show(`snapshot-1g filling 1 GiB (${elapsed(ctx)})`, 'snapshot fill');
    let blocks = 0;
    let bytes = 0;
    for (let i = 0; bytes < FILL_BYTES; i++) {
      const size = FILL_SIZES[i % FILL_SIZES.length] * (i % 97 === 0 ? 8 : 1);
      heap.malloc(size);
      blocks++;
      bytes += size;
    }
    const first = heap.snapshot();
    const filled = { blocks, bytes, arenas: first.arena?.arenas.length ?? 0 };
    const snapshotMs: number[] = [];
    if (wantOne) {
      for (let r = 0; r < 3 + rounds; r++) {
        ctx.progress.show(`snapshot-1g round ${r + 1}/${3 + rounds} (${elapsed(ctx)})`, `snapshot-1g ${r}`);
        const t = performance.now();
        heap.snapshot();
        if (r >= 3) snapshotMs.push(performance.now() - t);
      }
    }
    const on: number[] = [];
    const off: number[] = [];
    let taken = 0;
    if (wantLoad) taken = await loadSlices(ctx, heap, peer.ready.heap.url, slices, on, off);
    return { heap: filled, snapshotMs, snapshot: estimate(snapshotMs), on, off, load: change(on, off), taken, error: null };
  } catch (err) {
    return emptyResult(errorText(err));
  } finally {
    heap?.detach();
  }
}

/** Starts the workers on `heap`, runs `slices` pairs of slices (the order alternating), stops them. Returns snapshots taken. */
async function loadSlices(ctx: RunContext, heap: PaddockHeap, url: string, slices: number, on: number[], off: number[]): Promise<number> {
  const control = new SharedArrayBuffer(4 * (L_COUNTERS + WORKERS));
  const ctl = new Int32Array(control);
  const workers = Array.from({ length: WORKERS }, (_, index) => {
    const data: SnapshotLoadWorkerData = { paddockUrl: url, handle: heap.handle, control, index, window: WINDOW, seed: ctx.opts.seed + index };
    return new Worker(new URL('./snapshot-worker.js', import.meta.url), { workerData: data });
  });
  const message = (w: Worker) =>
    new Promise<void>((resolve, reject) => {
      w.once('message', () => resolve());
      w.once('error', reject);
    });
  let taken = 0;
  try {
    await Promise.all(workers.map(message));
    const ops = () => {
      let n = 0;
      for (let i = 0; i < WORKERS; i++) n += Atomics.load(ctl, L_COUNTERS + i);
      return n;
    };
    await sleep(SLICE_MS); // the workers settle
    for (let s = 0; s < 2 * slices; s++) {
      const snapshots = (s + (s >> 1)) % 2 === 0; // on, off, off, on, on, off, ...
      ctx.progress.show(`snapshot-load slice ${s + 1}/${2 * slices} (${elapsed(ctx)})`, `snapshot-load ${s}`);
      const t0 = performance.now();
      const n0 = ops();
      for (let k = 0; k < SLICE_MS / EVERY_MS; k++) {
        if (snapshots) {
          heap.snapshot();
          taken++;
        }
        await sleep(t0 + (k + 1) * EVERY_MS - performance.now());
      }
      const rate = ((ops() - n0) * 1000) / (performance.now() - t0);
      (snapshots ? on : off).push(rate);
    }
  } finally {
    Atomics.store(ctl, L_STOP, 1);
    await Promise.all(workers.map((w) => message(w).catch(() => undefined)));
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return taken;
}

function fmtMs(x: number): string {
  return `${x.toFixed(2)} ms`;
}

function fmtOps(x: number): string {
  return `${(x / 1e6).toFixed(2)} M/s`;
}

/** The group's figures as lines (for stdout and docs/PERFORMANCE.md), and how many targets are not met. */
export function snapshotsLines(r: SnapshotsJson): { lines: string[]; notMet: number } {
  if (r.error !== null) return { lines: [`FAILED: ${r.error}`], notMet: 0 };
  const lines: string[] = [];
  let notMet = 0;
  if (r.heap !== null) lines.push(`heap: ${r.heap.blocks} live blocks, ${(r.heap.bytes / 2 ** 20).toFixed(0)} MiB, ${r.heap.arenas} arenas`);
  if (r.snapshot !== null) {
    const met = r.snapshot.median < SNAPSHOT_MS_TARGET;
    if (!met) notMet++;
    lines.push(
      `snapshot-1g: ${fmtMs(r.snapshot.median)} [${fmtMs(r.snapshot.lo)} .. ${fmtMs(r.snapshot.hi)}] per snapshot ` +
        `(target < ${SNAPSHOT_MS_TARGET} ms: ${met ? 'met' : 'NOT MET'})`,
    );
  }
  if (r.load !== null) {
    const met = r.load.change > -LOAD_LOSS_TARGET;
    if (!met) notMet++;
    lines.push(
      `snapshot-load: ${WORKERS} churning agents ${fmtOps(estimate(r.off)!.median)} without snapshots, ${fmtOps(estimate(r.on)!.median)} with one ` +
        `every ${EVERY_MS} ms (${r.taken} taken; ${r.on.length} slices of ${SLICE_MS} ms each way): ${fmtChange(r.load)} ` +
        `(target: under ${LOAD_LOSS_TARGET * 100}% lost: ${met ? 'met' : 'NOT MET'})`,
    );
  }
  return { lines, notMet };
}

function snapshotsReport(r: SnapshotsJson | null): WorkloadReport {
  if (r === null) return { lines: [], json: {} };
  const { lines, notMet } = snapshotsLines(r);
  return { lines: ['', 'snapshots: heap.snapshot() on pool_arena (paddock)', ...lines.map((l) => `  ${l}`)], json: { snapshots: r }, notMet };
}

export const snapshots: WorkloadDescriptor<SnapshotsJson | null> = {
  name: 'snapshots',
  members: [
    { name: 'snapshot-1g', groups: ['snapshots'] },
    { name: 'snapshot-load', groups: ['snapshots'] },
  ],
  run: runSnapshots,
  failures(r): readonly Failure[] {
    return r !== null && r.error !== null ? [{ peer: 'paddock', reason: `snapshots: ${r.error}` }] : [];
  },
  report: (r) => snapshotsReport(r),
};
