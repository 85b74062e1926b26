/**
 * The single-agent programs, run on the main thread through the `Adapter` of every in-process peer
 * (the floor, thi.ng, TLSF, dlmalloc, the three Paddock backends) and in plain JavaScript:
 *
 * - `binary-trees-1`: the binary-trees program with one agent: a stretch tree of depth D+1 built, checked
 *   and freed, a long-lived tree of depth D held throughout, and 2^(D-d+4) trees of each depth d = 4, 6,
 *   .., D built, checked (a walk of every node) and freed. A node is a 32 B block holding its children's
 *   pointers. One op is one node allocated.
 * - `class-no-reuse`: the classic pool's second pathology (memory of one size class never serving
 *   another): `bytes` of 64 B blocks allocated (one byte written into every page), all freed, then the same
 *   bytes in 1 KiB blocks, then in 16 KiB blocks. What it measures is the peak resident memory: an
 *   allocator that lets freed memory serve the next class peaks near `bytes`, one that does not near 3x.
 * - `build-then-free`: a structure of many mixed-size blocks built, then freed whole in random order, on one
 *   heap, three times; nothing written into the blocks. One op is one malloc or one free; the ns per malloc and
 *   per free are its extras.
 *
 * The loops reference nothing outside their parameters: each peer gets its own recompiled copy (as in
 * `timed-loops.ts`), so the adapter calls in it stay monomorphic.
 */
import type { Adapter } from '../adapter.js';
import { between, mulberry32 } from '../draws.js';

export interface SingleResult {
  readonly ops: number;
  readonly bad: number;
  readonly error: string | null;
  /** The program's own figures besides its rate (build-then-free: ns per malloc and per free). */
  readonly extra?: Record<string, number>;
  /** The time of the program's own steps, where it times them itself (build-then-free: its mallocs and frees, not the heap's set-up). */
  readonly seconds?: number;
}

/** Each single-agent program's loop, one copy per peer (recompiled, so its adapter calls stay monomorphic). */
export interface SingleLoops {
  readonly 'binary-trees': typeof binaryTreesLoop;
  readonly 'class-no-reuse': typeof classNoReuseLoop;
  readonly 'build-then-free': typeof buildThenFreeLoop;
}

export function binaryTreesLoop(a: Adapter, depth: number): SingleResult {
  let v: Int32Array = new Int32Array(0);
  const view = (p: number): Int32Array => {
    if (p + 8 > v.length * 4) {
      const u8 = a.bytes() as Uint8Array;
      v = new Int32Array(u8.buffer, u8.byteOffset, u8.length >> 2);
    }
    return v;
  };
  let n = 0;
  let oom = false;
  const build = (d: number): number => {
    const p = a.malloc(32);
    if (p === 0) {
      oom = true;
      return 0;
    }
    n++;
    let l = 0;
    let r = 0;
    if (d > 0) {
      l = build(d - 1);
      r = build(d - 1);
    }
    const w = view(p);
    w[p >>> 2] = l;
    w[(p >>> 2) + 1] = r;
    return p;
  };
  const check = (p: number): number => {
    const l = v[p >>> 2] >>> 0;
    return l === 0 ? 1 : 1 + check(l) + check(v[(p >>> 2) + 1] >>> 0);
  };
  const drop = (p: number): void => {
    const l = v[p >>> 2] >>> 0;
    if (l !== 0) {
      drop(l);
      drop(v[(p >>> 2) + 1] >>> 0);
    }
    a.free(p, 32);
  };
  let bad = 0;
  const stretch = build(depth + 1);
  if (oom) return { ops: n, bad, error: 'out of memory' };
  if (check(stretch) !== 2 ** (depth + 2) - 1) bad++;
  drop(stretch);
  const longLived = build(depth);
  for (let d = 4; d <= depth; d += 2) {
    const iters = 2 ** (depth - d + 4);
    for (let i = 0; i < iters; i++) {
      const t = build(d);
      if (oom) return { ops: n, bad, error: 'out of memory' };
      if (check(t) !== 2 ** (d + 1) - 1) bad++;
      drop(t);
    }
  }
  if (check(longLived) !== 2 ** (depth + 1) - 1) bad++;
  drop(longLived);
  return { ops: n, bad, error: null };
}

export function classNoReuseLoop(a: Adapter, bytes: number, sizes: readonly number[], sample: () => void): SingleResult {
  const ptr = new Int32Array(Math.ceil(bytes / sizes[0]));
  let ops = 0;
  for (const size of sizes) {
    const n = Math.floor(bytes / size);
    let u8 = a.bytes();
    for (let i = 0; i < n; i++) {
      const p = a.malloc(size);
      if (p === 0) return { ops, bad: 0, error: `out of memory at ${size} B block ${i}` };
      ptr[i] = p;
      if (u8 !== null) {
        if (p + size > u8.length) u8 = a.bytes() as Uint8Array;
        for (let q = p; q < p + size; q = (q & ~4095) + 4096) u8[q] = 1;
        u8[p + size - 1] = 1;
      }
    }
    sample();
    for (let i = 0; i < n; i++) a.free(ptr[i] >>> 0, size);
    ops += n;
  }
  return { ops, bad: 0, error: null };
}

/**
 * build-then-free: `rounds` times, `sizes.length` blocks allocated one after another (a structure built), then
 * all freed in the order `order` gives (a permutation), nothing written into them. The sizes and the order are
 * drawn before the clock starts (the C twin draws the same). Times the mallocs and the frees apart.
 */
export function buildThenFreeLoop(a: Adapter, sizes: Int32Array, order: Int32Array, rounds: number): SingleResult {
  const n = sizes.length;
  const ptr = new Float64Array(n);
  let mallocNs = 0;
  let freeNs = 0;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const p = a.malloc(sizes[i]!);
      if (p === 0) return { ops: 2 * r * n, bad: 0, error: `out of memory at block ${i} of round ${r + 1} (${sizes[i]} B)` };
      ptr[i] = p;
    }
    const t1 = performance.now();
    for (let i = 0; i < n; i++) {
      const k = order[i]!;
      a.free(ptr[k]!, sizes[k]!);
    }
    const t2 = performance.now();
    mallocNs += (t1 - t0) * 1e6;
    freeNs += (t2 - t1) * 1e6;
  }
  return { ops: 2 * rounds * n, bad: 0, error: null, extra: { mallocNs: mallocNs / (rounds * n), freeNs: freeNs / (rounds * n) }, seconds: (mallocNs + freeNs) / 1e9 };
}

/** build-then-free's draws: uniform sizes in [lo, hi] and a free order (Fisher-Yates), as native/programs.c draws them. */
export function buildThenFreeDraws(blocks: number, lo: number, hi: number, seed: number): { sizes: Int32Array; order: Int32Array } {
  const next = mulberry32(seed);
  const sizes = new Int32Array(blocks);
  for (let i = 0; i < blocks; i++) sizes[i] = between(next, lo, hi);
  const order = new Int32Array(blocks);
  for (let i = 0; i < blocks; i++) order[i] = i;
  for (let i = blocks - 1; i > 0; i--) {
    const j = between(next, 0, i);
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  return { sizes, order };
}

interface JsNode {
  l: JsNode | null;
  r: JsNode | null;
}

/** Plain JavaScript: each node an object; dropping the tree is the free. */
export function binaryTreesJs(depth: number): SingleResult {
  let n = 0;
  const build = (d: number): JsNode => {
    n++;
    return d > 0 ? { l: build(d - 1), r: build(d - 1) } : { l: null, r: null };
  };
  const check = (t: JsNode): number => (t.l === null ? 1 : 1 + check(t.l) + check(t.r as JsNode));
  let bad = 0;
  if (check(build(depth + 1)) !== 2 ** (depth + 2) - 1) bad++;
  const longLived = build(depth);
  for (let d = 4; d <= depth; d += 2) {
    const iters = 2 ** (depth - d + 4);
    for (let i = 0; i < iters; i++) if (check(build(d)) !== 2 ** (d + 1) - 1) bad++;
  }
  if (check(longLived) !== 2 ** (depth + 1) - 1) bad++;
  return { ops: n, bad, error: null };
}

/** Plain JavaScript: each block an ArrayBuffer; dropping the array is the free. */
export function classNoReuseJs(bytes: number, sizes: readonly number[], sample: () => void): SingleResult {
  let ops = 0;
  for (const size of sizes) {
    const n = Math.floor(bytes / size);
    let held: Uint8Array[] = new Array<Uint8Array>(n);
    for (let i = 0; i < n; i++) {
      const b = new Uint8Array(size);
      for (let q = 0; q < size; q += 4096) b[q] = 1;
      b[size - 1] = 1;
      held[i] = b;
    }
    sample();
    held = [];
    ops += n;
    void held;
  }
  return { ops, bad: 0, error: null };
}
