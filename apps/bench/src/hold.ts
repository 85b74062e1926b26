/**
 * Hold-then-free: malloc K blocks of S bytes and write into every page of each (a program uses what
 * it allocates), hold them, free them all; repeat for a number of cycles on one fresh instance. Timed
 * per phase; memory read between the phases (untimed).
 */
import { type MemPeer, resident, settledResident, touchPages } from './mem.js';
import { errorText } from './peers.js';
import { sizeLabel } from './workloads.js';

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

export type HoldResult = { ok: true; sample: HoldSample } | { ok: false; error: string };

export function runHold(peer: MemPeer, spec: HoldSpec, cycles: number): HoldResult {
  const rss0 = settledResident();
  try {
    peer.setup();
  } catch (err) {
    return { ok: false, error: `setup threw: ${errorText(err)}` };
  }
  try {
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
      const rssNow = resident() - rss0;
      if (rssNow > residentHeld) residentHeld = rssNow;
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
        residentAfterFree: resident() - rss0,
      },
    };
  } catch (err) {
    return { ok: false, error: `threw: ${errorText(err)}` };
  } finally {
    try {
      peer.teardown();
    } catch {
      // nothing to add
    }
  }
}
