/**
 * Realloc growth chains: one block starts at 64 KiB and is realloc'ed upward by 1.25x to 64 MiB (in
 * Paddock's large geometry that crosses 1 MiB into the large tier and `largeMax`, 8 MiB - 32 KiB, into
 * oversized mappings), each step writing into every page it gained (a growing buffer being filled),
 * then it is freed. A round is `chains` chains on one fresh instance. Paddock runs at several profile
 * rungs: a higher rung should keep more memory and run faster, and the table shows both.
 */
import { type MemPeer, resident, settledResident, touchPages } from './mem.js';
import { errorText } from './peers.js';

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

export type ChainResult = { ok: true; sample: ChainSample } | { ok: false; error: string };

export function runChains(peer: MemPeer, sizes: readonly number[], chains: number): ChainResult {
  const rss0 = settledResident();
  try {
    peer.setup();
  } catch (err) {
    return { ok: false, error: `setup threw: ${errorText(err)}` };
  }
  try {
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
      const rssTop = resident() - rss0;
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
        residentAfter: resident() - rss0,
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
