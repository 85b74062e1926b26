/**
 * The self-check: a small churn run, untimed, that proves a peer's blocks are real. Every block gets a
 * pattern derived from its allocation serial written over all of its bytes at malloc and checked at
 * free, so two live blocks that overlap, or a free list that writes into a live block, show up as a
 * broken pattern. Every so often the live blocks are sorted by address and checked for overlap
 * directly. A peer that cannot show its bytes gets the pointer checks only.
 */
import type { Adapter } from './adapter.js';
import type { PeerEntry } from './context.js';
import { between, mulberry32 } from './draws.js';
import { fmtCount } from './format.js';
import type { Progress } from './progress.js';
import { MAX_SIZE, MIN_SIZE, PAIR_SIZE } from './timed-loops.js';

export interface CheckOptions {
  readonly live: number;
  readonly steps: number;
  readonly pairs: number;
  readonly seed: number;
  readonly maxBytes: number;
}

export const QUICK_CHECK: Omit<CheckOptions, 'seed' | 'maxBytes'> = { live: 256, steps: 4000, pairs: 1000 };
export const FULL_CHECK: Omit<CheckOptions, 'seed' | 'maxBytes'> = { live: 1024, steps: 50_000, pairs: 100_000 };

export interface CheckResult {
  /** null when every check passed. */
  readonly error: string | null;
  /** Whether the patterns were checked (false: pointer checks only). */
  readonly patterns: boolean;
}

function patternByte(serial: number, k: number): number {
  return (Math.imul(serial, 0x9e3779b1) + k * 13 + 1) & 255;
}

/** Runs the self-check on a fresh instance of `a`; tears it down afterwards. */
export function selfCheck(a: Adapter, o: CheckOptions): CheckResult {
  a.setup(o.maxBytes);
  let patterns = a.bytes() !== null;
  try {
    const next = mulberry32(o.seed);
    const rand = (lo: number, hi: number) => between(next, lo, hi);
    const ptr = new Array<number>(o.live).fill(0);
    const size = new Array<number>(o.live).fill(0);
    const serial = new Array<number>(o.live).fill(0);
    let serials = 0;

    const place = (slot: number, bytes: number): string | null => {
      const p = a.malloc(bytes);
      if (p === 0) return `malloc(${bytes}) returned 0`;
      if (!Number.isInteger(p) || p < 0) return `malloc(${bytes}) returned ${p}`;
      if (p % 8 !== 0) return `malloc(${bytes}) returned ${p}, not 8-byte aligned`;
      const u8 = a.bytes();
      if (u8 !== null) {
        if (p + bytes > u8.length) return `block ${p}+${bytes} ends past the buffer (${u8.length})`;
        const tag = ++serials;
        for (let k = 0; k < bytes; k++) u8[p + k] = patternByte(tag, k);
        serial[slot] = tag;
      }
      ptr[slot] = p;
      size[slot] = bytes;
      return null;
    };
    const intact = (slot: number): string | null => {
      const u8 = a.bytes();
      if (u8 === null) return null;
      const p = ptr[slot];
      for (let k = 0; k < size[slot]; k++) {
        if (u8[p + k] !== patternByte(serial[slot], k)) {
          return `block ${p} (${size[slot]} B) was overwritten at byte ${k} while live`;
        }
      }
      return null;
    };
    const disjoint = (): string | null => {
      const order = ptr.map((_, i) => i).sort((x, y) => ptr[x] - ptr[y]);
      for (let i = 1; i < order.length; i++) {
        const lo = order[i - 1];
        const hi = order[i];
        if (ptr[lo] + size[lo] > ptr[hi]) {
          return `live blocks overlap: ${ptr[lo]}+${size[lo]} and ${ptr[hi]}+${size[hi]}`;
        }
      }
      return null;
    };

    // LIFO pairs, with a pattern each time.
    for (let i = 0; i < o.pairs; i++) {
      const err = place(0, PAIR_SIZE) ?? intact(0);
      if (err) return { error: `pair ${i}: ${err}`, patterns };
      a.free(ptr[0], PAIR_SIZE);
    }
    // Prefill, then churn.
    for (let i = 0; i < o.live; i++) {
      const err = place(i, rand(MIN_SIZE, MAX_SIZE));
      if (err) return { error: `prefill ${i}: ${err}`, patterns };
    }
    let err = disjoint();
    if (err) return { error: `after prefill: ${err}`, patterns };
    for (let i = 0; i < o.steps; i++) {
      const v = rand(0, o.live - 1);
      err = intact(v);
      if (err) return { error: `step ${i}: ${err}`, patterns };
      a.free(ptr[v], size[v]);
      err = place(v, rand(MIN_SIZE, MAX_SIZE));
      if (err) return { error: `step ${i}: ${err}`, patterns };
      if (i % 1000 === 999) {
        err = disjoint();
        if (err) return { error: `step ${i}: ${err}`, patterns };
      }
    }
    for (let i = 0; i < o.live; i++) {
      err = intact(i);
      if (err) return { error: `at the end: ${err}`, patterns };
    }
    err = disjoint();
    if (err) return { error: `at the end: ${err}`, patterns };
    for (let i = 0; i < o.live; i++) a.free(ptr[i], size[i]);
    patterns = patterns && serials > 0;
    return { error: null, patterns };
  } catch (e) {
    return { error: `threw: ${e instanceof Error ? e.message : String(e)}`, patterns };
  } finally {
    try {
      a.teardown();
    } catch {
      // a teardown failure after a failed check adds nothing
    }
  }
}

/**
 * Runs the self-check on every loaded peer of the timed loops (a native one runs in its own process: n/a);
 * a peer that fails it is marked failed. Returns the report's self-check line.
 */
export function checkPeers(entries: readonly PeerEntry[], check: Omit<CheckOptions, 'seed' | 'maxBytes'>, seed: number, progress: Progress): string {
  const results: string[] = [];
  for (const e of entries) {
    const peer = e.ready?.timed;
    if (peer === undefined) continue;
    if (peer.external) {
      e.selfCheck = 'n/a (native process)';
      continue;
    }
    progress.show(`self-check ${e.name}`, `check ${e.name}`);
    const r = selfCheck(peer.adapter, { ...check, seed, maxBytes: peer.maxBytes });
    if (r.error !== null) {
      e.status = 'failed';
      e.reason = `self-check: ${r.error}`;
      e.selfCheck = r.error;
      results.push(`${e.name} FAILED (${r.error})`);
    } else {
      e.selfCheck = r.patterns ? 'ok' : 'ok (pointers only: no byte view)';
      results.push(`${e.name} ${e.selfCheck}`);
    }
  }
  progress.done();
  return (
    `self-check (${check.live} live, ${fmtCount(check.steps)} churn steps, ${fmtCount(check.pairs)} pairs, ` +
    `patterns in every block): ${results.join(', ') || 'no peer'}`
  );
}
