/**
 * Runs one batch: a fresh allocator instance, the untimed prefill, one timed call of the peer's own
 * copy of the workload's loop, teardown. Time is read around the whole batch, never per op.
 */
import type { Adapter } from './adapter.js';
import { errorText } from './format.js';
import { collectGarbage, peakRss, resetPeak, settle } from './memory.js';
import { type Loops, loopsFor, PAIR_SIZE, prefill, type TimedWorkload } from './timed-loops.js';

/** A peer as the driver sees it. */
export interface Peer {
  readonly name: string;
  readonly adapter: Adapter;
  /** This peer's private copy of the timed loops. */
  readonly loops: Loops;
  /** Capacity handed to `setup`. */
  readonly maxBytes: number;
  /**
   * A peer that runs outside this process (the native references): runs ops [0, ops) of the workload
   * itself and says how long they took. The adapter is then a placeholder.
   */
  readonly external?: (w: TimedWorkload, ops: number) => BatchResult;
}

/** `peakRss`: the batch's resident high-water mark above its level before the prefill, bytes. */
export type BatchResult = { ok: true; ns: number; ops: number; touched: boolean; peakRss?: number } | { ok: false; error: string };

/** An in-process peer with its own copy of the timed loops (see `loopsFor`). */
export function makePeer(adapter: Adapter, maxBytes: number): Peer {
  return { name: adapter.name, adapter, loops: loopsFor(adapter.name, adapter.sized === true), maxBytes };
}

/**
 * Runs ops [0, ops) of `w` on a fresh instance, in one timed call. In the calibration run
 * (`budgetNs` > 0) the ops go in doubling chunks, each timed, and the run stops once the time spent
 * passes the budget: `ops` in the result is how many ran. `touch`: see `prefill`.
 */
export function runBatch(peer: Peer, w: TimedWorkload, ops: number, touch: boolean, budgetNs = 0): BatchResult {
  if (peer.external) return peer.external(w, ops);
  const a = peer.adapter;
  settle(collectGarbage);
  try {
    a.setup(peer.maxBytes);
  } catch (err) {
    return { ok: false, error: `setup threw: ${errorText(err)}` };
  }
  const rss0 = resetPeak();
  try {
    let slotPtr: Int32Array = new Int32Array(0);
    let slotSize: Int32Array = new Int32Array(0);
    let touched = false;
    if (w.kind === 'churn') {
      const filled = prefill(a, w, touch);
      if (filled.failedAt >= 0) {
        return { ok: false, error: `out of memory in the prefill, block ${filled.failedAt} of ${w.live}` };
      }
      slotPtr = filled.slots.ptr;
      slotSize = filled.slots.size;
      touched = filled.touched;
    }
    collectGarbage();
    // The timed loops call the allocator's own object where the peer has one (see Adapter.callee).
    const target = a.callee ? a.callee() : a;
    let done = 0;
    let spent = 0;
    let chunk = budgetNs > 0 ? 16 : ops;
    while (done < ops && (budgetNs <= 0 || spent < budgetNs)) {
      const to = Math.min(ops, done + chunk);
      const t0 = process.hrtime.bigint();
      const failed =
        w.kind === 'pair'
          ? peer.loops.pair(target, done, to, PAIR_SIZE)
          : peer.loops.churn(target, done, to, w.victim, w.size, slotPtr, slotSize);
      const t1 = process.hrtime.bigint();
      if (failed >= 0) return { ok: false, error: `malloc returned 0 at op ${failed} (out of memory)` };
      spent += Number(t1 - t0);
      done = to;
      chunk *= 2;
    }
    return { ok: true, ns: spent, ops: done, touched, peakRss: peakRss() - rss0 };
  } catch (err) {
    return { ok: false, error: `threw: ${errorText(err)}` };
  } finally {
    try {
      a.teardown();
    } catch {
      // nothing to add to the result
    }
  }
}
