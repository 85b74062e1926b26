/**
 * The timed workloads (the pair, the churn and the size sweep): their operation sequences, the untimed
 * prefill, and the timed loops each peer runs its own copy of.
 *
 * - `pair`: `p = malloc(32); free(p)`, LIFO, on an empty heap. One pair is one op.
 * - `churn-<live>`: prefill `live` blocks of random sizes in 16..4096, then each step frees a random
 *   live block and mallocs a random size into its slot. One step (a free and a malloc) is one op.
 *
 * Every random number is drawn before timing, from a seeded PRNG, into typed arrays: every peer runs
 * the same operation sequence, and the timed loops do nothing but index arrays and call the adapter.
 */
import type { Adapter, Callee } from './adapter.js';
import { between, mulberry32 } from './draws.js';

export const MIN_SIZE = 16;
export const MAX_SIZE = 4096;
export const PAIR_SIZE = 32;

export interface PairWorkload {
  readonly kind: 'pair';
  readonly name: string;
  /** Pairs in the full sequence. */
  readonly ops: number;
}

export interface ChurnWorkload {
  readonly kind: 'churn';
  readonly name: string;
  readonly live: number;
  /** Steps in the full sequence. */
  readonly ops: number;
  /** Size of each prefilled block, by slot. */
  readonly prefill: Int32Array;
  /** Step i frees the block in slot `victim[i]`... */
  readonly victim: Int32Array;
  /** ...and mallocs `size[i]` bytes into that slot. */
  readonly size: Int32Array;
  /** 'sweep' for the size sweep (every block `blockSize` bytes); absent for the random-size churn. */
  readonly group?: 'sweep';
  readonly blockSize?: number;
  /** The seed the sequence came from (the native references draw the same sequence from it). */
  readonly seed: number;
}

export type TimedWorkload = PairWorkload | ChurnWorkload;

/** Whether `w` is a workload of the size sweep. */
export function isSweep(w: TimedWorkload): boolean {
  return w.kind === 'churn' && w.group === 'sweep';
}

export function liveLabel(live: number): string {
  return live % 1024 === 0 ? `${live / 1024}k` : String(live);
}

export function pairWorkload(ops: number): PairWorkload {
  return { kind: 'pair', name: 'pair', ops };
}

export function churnWorkload(live: number, ops: number, seed: number): ChurnWorkload {
  const next = mulberry32(seed ^ Math.imul(live, 0x9e3779b1));
  const prefill = new Int32Array(live);
  for (let i = 0; i < live; i++) prefill[i] = between(next, MIN_SIZE, MAX_SIZE);
  const victim = new Int32Array(ops);
  const size = new Int32Array(ops);
  for (let i = 0; i < ops; i++) {
    victim[i] = between(next, 0, live - 1);
    size[i] = between(next, MIN_SIZE, MAX_SIZE);
  }
  return { kind: 'churn', name: `churn-${liveLabel(live)}`, live, ops, prefill, victim, size, seed };
}

/** The size sweep's block sizes: the small classes, the top class, large and oversized. */
export const SWEEP_SIZES = [32, 256, 4096, 65536, 1 << 20, 2 << 20, 8 << 20, 16 << 20];
/** The sweep keeps at most this many bytes live (and never more than 4096 blocks, never fewer than 4). */
export const SWEEP_LIVE_BYTES = 64 << 20;

export function sweepLive(size: number): number {
  return Math.max(4, Math.min(4096, Math.floor(SWEEP_LIVE_BYTES / size)));
}

export function sizeLabel(bytes: number): string {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${bytes / (1 << 20)}m`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024}k`;
  return String(bytes);
}

/**
 * The size sweep at one size: `live` blocks of `blockSize` bytes, then each step frees a random live
 * block and mallocs `blockSize` bytes into its slot. A churn workload with one size, so it runs through
 * the same runner and timed loop as `churn-<live>`.
 */
export function sweepWorkload(blockSize: number, ops: number, seed: number): ChurnWorkload {
  const live = sweepLive(blockSize);
  const next = mulberry32(seed ^ Math.imul(blockSize, 0x85ebca6b) ^ 0x5eeb);
  const prefill = new Int32Array(live).fill(blockSize);
  const victim = new Int32Array(ops);
  for (let i = 0; i < ops; i++) victim[i] = between(next, 0, live - 1);
  const size = new Int32Array(ops).fill(blockSize);
  return { kind: 'churn', name: `sweep-${sizeLabel(blockSize)}`, live, ops, prefill, victim, size, group: 'sweep', blockSize, seed };
}

/** The live blocks of a churn round: pointer and size by slot (every heap here is at most 2 GiB, so a
 * pointer is below 2^31 and fits an Int32Array). */
export interface Slots {
  readonly ptr: Int32Array;
  readonly size: Int32Array;
}

const PAGE = 4096;

/**
 * Fills every slot with a fresh block (untimed) and, when `touch` is set and the peer shows its bytes,
 * writes one byte into every page each block covers, as a program writes what it allocates. Without
 * that, the first free of each prefilled block is the first touch of its page (the floor and Paddock
 * write a free-list link there), and the timed churn mostly measures page faults on fresh memory until
 * every block has been freed once (about live x ln(live) steps). Returns the slot that failed, or -1.
 */
export function prefill(a: Adapter, w: ChurnWorkload, touch: boolean): { slots: Slots; failedAt: number; touched: boolean } {
  const ptr = new Int32Array(w.live);
  const size = new Int32Array(w.prefill);
  let u8 = touch ? a.bytes() : null;
  for (let i = 0; i < w.live; i++) {
    const s = size[i];
    const p = a.malloc(s);
    if (p === 0) return { slots: { ptr, size }, failedAt: i, touched: false };
    ptr[i] = p;
    if (u8 !== null) {
      if (p + s > u8.length) u8 = a.bytes(); // the peer's buffer grew: take its new view
      if (u8 === null || p + s > u8.length) continue;
      for (let q = p; q < p + s; q = (q & ~(PAGE - 1)) + PAGE) u8[q] = 1;
      u8[p + s - 1] = 1;
    }
  }
  return { slots: { ptr, size }, failedAt: -1, touched: touch && u8 !== null };
}

// ---------------------------------------------------------------------------------------------------
// Timed loops. Each returns -1 on success, or the index of the op whose malloc returned 0.
// They must reference nothing outside their parameters: `loopsFor` recompiles them from source for
// each peer, so that every peer gets its own copy with its own type feedback and the `a.malloc` /
// `a.free` call sites stay monomorphic (one shared copy would turn polymorphic across peers and stop
// inlining the adapter).
// ---------------------------------------------------------------------------------------------------

export function pairLoop(a: Callee, from: number, to: number, size: number): number {
  for (let i = from; i < to; i++) {
    const p = a.malloc(size);
    if (p === 0) return i;
    a.free(p, size);
  }
  return -1;
}

export function churnLoop(
  a: Callee,
  from: number,
  to: number,
  victim: Int32Array,
  size: Int32Array,
  slotPtr: Int32Array,
  slotSize: Int32Array,
): number {
  for (let i = from; i < to; i++) {
    const v = victim[i];
    a.free(slotPtr[v], slotSize[v]);
    const s = size[i];
    const p = a.malloc(s);
    if (p === 0) return i;
    slotPtr[v] = p;
    slotSize[v] = s;
  }
  return -1;
}

export interface Loops {
  readonly pair: typeof pairLoop;
  readonly churn: typeof churnLoop;
}

let copies = 0;

/**
 * Compiles `fn` again from its source. The source gets a unique comment: V8 caches evaluated code by
 * source text, feedback included, and two identical copies could end up sharing type feedback.
 */
export function recompile<F extends (...args: never[]) => unknown>(fn: F, owner: string): F {
  const tag = `/* ${owner.replace(/\*\//g, '')} copy ${++copies} */`;
  return new Function(`"use strict"; ${tag} return (${fn.toString()});`)() as F;
}

/**
 * Compiles `fn` again with its `free` calls passing the pointer alone (`a.free(x, y)` -> `a.free(x)`), for a peer
 * whose free takes no size: it is called as its users call it.
 */
function unsized<F extends (...args: never[]) => unknown>(fn: F): F {
  const text = fn.toString();
  const out = text.replace(/a\.free\(([^,()]+(?:\[[^\]]+\])?), [^)]+\)/g, 'a.free($1)');
  if (out === text) throw new Error(`no sized free to rewrite in ${fn.name}`);
  return new Function(`return (${out});`)() as F;
}

/**
 * A private copy of the timed loops for one peer. `sized`: whether its free takes the size (the floor);
 * every other peer's loops call `free(ptr)`.
 */
export function loopsFor(owner: string, sized = true): Loops {
  const pair = sized ? pairLoop : unsized(pairLoop);
  const churn = sized ? churnLoop : unsized(churnLoop);
  return { pair: recompile(pair, owner), churn: recompile(churn, owner) };
}
