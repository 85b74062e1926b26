/**
 * The `scopes` group's calls: the work of each lane, the lane loops in the two forms a call site takes (a
 * malloc and a free per allocation, or one scope per call), and the bare bump floor the scope's allocation
 * is held to.
 *
 * - control: the scratch lane's work into buffers allocated once, before timing: no allocation in the call.
 * - scratch: per call a 4 KiB scratch buffer and three small strings; the call encodes a stream of words into
 *   the buffer, hashes it, writes the hash as decimal text into the strings and hashes those.
 * - startup: one call decodes a payload of length-prefixed records: each record gets a block, its bytes
 *   unmasked into it and hashed; the blocks stay live until the call ends.
 *
 * A loop that runs on more than one heap (control; the malloc form on the arena and the global pool) is
 * recompiled per variant (`recompile`), so it must reference nothing outside its parameters; the scope form
 * runs on one variant only.
 *
 * The scope form closes its scope in a `finally`, which is what `using s = heap.scope()` means. Node 20 has no
 * `using`: a bundler that targets it compiles each `using` block into a disposal stack (an array, an entry
 * and two closures per block), which costs more than the scope itself; the lane prices the scope.
 */
import type { PaddockHeap } from '../peers/paddock-heap.js';

export const SCRATCH_BYTES = 4096;
/** The small strings of a scratch call: their sizes in bytes. */
export const STRING_BYTES = [24, 40, 72] as const;

/** A heap as the lanes use it. */
export type LaneHeap = Pick<PaddockHeap, 'malloc' | 'free' | 'u8' | 'i32' | 'scope'>;

/** The work of a call, apart from its allocations (a private copy per variant: see `laneWork`). */
export interface LaneWork {
  /** The scratch lane's call into buffers it was given; returns its hash. */
  scratch(heap: LaneHeap, buf: number, s0: number, s1: number, s2: number, seed: number): number;
  /** One record of the payload unmasked into `dst` and hashed into `h`. */
  record(u8: Uint8Array, dst: number, payload: Uint8Array, at: number, len: number, h: number): number;
}

/** The scratch call's work: a word stream encoded into the buffer, hashed, its hash written out as text three times. */
export function scratchWork(heap: LaneHeap, buf: number, s0: number, s1: number, s2: number, seed: number): number {
  const i32 = heap.i32;
  const u8 = heap.u8;
  let x = seed | 1;
  const w0 = buf >> 2;
  const words = 4096 >> 2;
  for (let i = 0; i < words; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    i32[w0 + i] = x;
  }
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < words; i++) h = Math.imul(h ^ i32[w0 + i], 0x01000193);
  for (let k = 0; k < 3; k++) {
    const p = k === 0 ? s0 : k === 1 ? s1 : s2;
    const n = k === 0 ? 24 : k === 1 ? 40 : 72;
    let v = h >>> 0;
    for (let i = 0; i < n; i++) {
      u8[p + i] = 48 + (v % 10);
      v = v < 10 ? (h >>> (i & 15)) + i : (v / 10) | 0;
    }
    for (let i = 0; i < n; i++) h = Math.imul(h ^ u8[p + i], 0x01000193);
  }
  return h;
}

/** One payload record unmasked into its block and hashed. */
export function recordWork(u8: Uint8Array, dst: number, payload: Uint8Array, at: number, len: number, h: number): number {
  for (let i = 0; i < len; i++) {
    const b = payload[at + i] ^ 0x5a;
    u8[dst + i] = b;
    h = Math.imul(h ^ b, 0x01000193);
  }
  return h;
}

/** Control: the scratch call's work `calls` times into buffers allocated before timing; no allocation. */
export function controlLoop(heap: LaneHeap, work: LaneWork, calls: number, seed: number, fixed: Int32Array): number {
  let acc = 0;
  for (let c = 0; c < calls; c++) acc ^= work.scratch(heap, fixed[0], fixed[1], fixed[2], fixed[3], seed + c);
  return acc;
}

/** Scratch, the malloc form: each buffer a malloc, each freed before the call returns. Returns 0 when a malloc failed. */
export function scratchMallocLoop(heap: LaneHeap, work: LaneWork, calls: number, seed: number): number {
  let acc = 0;
  for (let c = 0; c < calls; c++) {
    const buf = heap.malloc(4096);
    const s0 = heap.malloc(24);
    const s1 = heap.malloc(40);
    const s2 = heap.malloc(72);
    if (buf === 0 || s0 === 0 || s1 === 0 || s2 === 0) return 0;
    acc ^= work.scratch(heap, buf, s0, s1, s2, seed + c);
    heap.free(s2);
    heap.free(s1);
    heap.free(s0);
    heap.free(buf);
  }
  return acc | 1;
}

/** Scratch, the scope form: one scope per call, everything in it, released at the end of the call. */
export function scratchScopeLoop(heap: LaneHeap, work: LaneWork, calls: number, seed: number): number {
  let acc = 0;
  for (let c = 0; c < calls; c++) {
    const s = heap.scope();
    try {
      acc ^= work.scratch(heap, s.malloc(SCRATCH_BYTES), s.malloc(STRING_BYTES[0]), s.malloc(STRING_BYTES[1]), s.malloc(STRING_BYTES[2]), seed + c);
    } finally {
      s.close();
    }
  }
  return acc | 1;
}

/** Start-up, the malloc form: a block per record, all freed at the end. Returns 0 when a malloc failed. */
export function startupMallocLoop(heap: LaneHeap, work: LaneWork, payload: Uint8Array, records: number, ptrs: Int32Array): number {
  let h = 0x811c9dc5 | 0;
  let at = 0;
  for (let r = 0; r < records; r++) {
    const len = payload[at];
    const p = heap.malloc(len);
    if (p === 0) return 0;
    ptrs[r] = p;
    h = work.record(heap.u8, p, payload, at + 1, len, h);
    at += 1 + len;
  }
  for (let r = 0; r < records; r++) heap.free(ptrs[r]);
  return h | 1;
}

/** Start-up, the scope form: the decode in one scope, released at once at the end. */
export function startupScopeLoop(heap: LaneHeap, work: LaneWork, payload: Uint8Array, records: number, ptrs: Int32Array): number {
  const s = heap.scope();
  try {
    let h = 0x811c9dc5 | 0;
    let at = 0;
    for (let r = 0; r < records; r++) {
      const len = payload[at];
      const p = s.malloc(len);
      ptrs[r] = p;
      h = work.record(heap.u8, p, payload, at + 1, len, h);
      at += 1 + len;
    }
    return h | 1;
  } finally {
    s.close();
  }
}

/**
 * The bare floor of a bump allocator: a pointer into a typed array, each allocation rounded up to 16 bytes
 * as a scope rounds it (`malloc(0)` takes 16), bounds checked; nothing else.
 */
export class BumpFloor {
  private top: number;
  private readonly end: number;

  /** A bump over `u8`, from its 16th byte (0 stays the failure, as in a heap). */
  constructor(readonly u8: Uint8Array) {
    this.top = 16;
    this.end = u8.length;
  }

  malloc(size: number): number {
    const p = this.top;
    const next = p + (size === 0 ? 16 : (size + 15) & -16);
    if (next > this.end) return 0;
    this.top = next;
    return p;
  }
}

/** The bump target's loop: `sizes.length` allocations, their pointers folded so none is dropped. */
export function bumpLoop(a: { malloc(size: number): number }, sizes: Int32Array): number {
  let acc = 0;
  for (let i = 0; i < sizes.length; i++) acc ^= a.malloc(sizes[i]);
  return acc;
}
