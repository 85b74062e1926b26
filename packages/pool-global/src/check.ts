/**
 * The global pool's consistency check: walks every slab (through the ENTRY and TOP tables) and every class
 * free list, and counts. Every listed block must lie in a slab of its class, on a block boundary, below the
 * slab's carve offset, carry its free mark, and be listed once; no list may hold more blocks than its class
 * ever carved (which also ends a walk around a cycle). Meant for a quiescent pool: while agents change it
 * the counts are a blur.
 */
import type { AddressSpace } from '@paddock/platform';
import { corrupt } from './errors.js';
import type { FreeLists } from './free-lists.js';
import { CLASS_COUNT, H_ENTRY, H_MIBS, LARGE, MIN_BLOCK, MiB, classSize, entryKind, freeMark, topClass, topOffset } from './layout.js';
import { LARGE_HEADER } from './large.js';

/** What the walk counted, per class and for large blocks (`GlobalPool.check()` returns it). */
export interface GlobalPoolCounts {
  perClass: { size: number; slabs: number; carved: number; free: number; live: number }[];
  /** Live large blocks and their usable bytes. */
  largeBlocks: number;
  largeBytes: number;
  /** Bytes handed out and not freed: live class blocks at their class size, plus large usable bytes. */
  liveBytes: number;
}

/**
 * Walks and counts the pool whose header words are `hdr` (TOP table at word `topAt`).
 *
 * `strict` (check()): anything out of place throws `CORRUPTION`. Otherwise (stats() in a running heap) the walk
 * never throws: other agents may pop and push while it follows a list, so a link may lead into a block handed
 * out meanwhile; the walk of that list stops there, and the counts are an estimate (free blocks under-counted,
 * live ones over-counted) that is exact when no agent is changing the pool.
 */
export function walkPool(space: AddressSpace, hdr: Int32Array, lists: FreeLists, topAt: number, strict = true): GlobalPoolCounts {
  const perClass = Array.from({ length: CLASS_COUNT }, (_, c) => ({ size: classSize(c), slabs: 0, carved: 0, free: 0, live: 0 }));
  let largeBlocks = 0;
  let largeBytes = 0;
  const mibs = hdr[H_MIBS]!;
  for (let m = 0; m < mibs; m++) {
    const e = entryKind(Atomics.load(hdr, H_ENTRY + m));
    if (e >= 1 && e <= CLASS_COUNT) {
      const k = perClass[e - 1]!;
      const t = Atomics.load(hdr, topAt + m);
      if (topClass(t) !== e - 1) {
        if (strict) corrupt(`the class ${e - 1} slab's carve word names class ${topClass(t)}`, m * MiB);
        continue; // being published or returned right now
      }
      k.slabs++;
      k.carved += topOffset(t) / k.size;
    } else if (e === LARGE) {
      const mapping = m * MiB;
      space.covers(mapping + LARGE_HEADER);
      largeBlocks++;
      largeBytes += Math.max(0, space.i32[mapping >>> 2]! - LARGE_HEADER);
    } else if (e !== 0 && strict) {
      corrupt(`ENTRY[${m}] holds ${e}, which is neither a slab nor a large block`, m * MiB);
    }
  }
  // Blocks already found on a list, one bit per 32 bytes of the space (bit p >>> 5: every block starts on a
  // 32-byte boundary): maxBytes / 256 bytes (16 MiB for 4 GiB), however many blocks are free.
  const seen = strict ? new Int32Array(Math.ceil(space.maxBytes / (MIN_BLOCK * 32))) : null;
  for (let c = 0; c < CLASS_COUNT; c++) {
    const k = perClass[c]!;
    for (let p = lists.first(lists.load(c)); p !== 0; ) {
      const problem = listProblem(space, hdr, topAt, c, k, p, seen);
      if (problem !== null) {
        if (strict) corrupt(`class ${c}'s free list ${problem}`, p);
        break;
      }
      if (seen !== null) seen[p >>> 10] |= 1 << ((p >>> 5) & 31);
      k.free++;
      p = space.u32[p >>> 2]!;
    }
    k.live = Math.max(0, k.carved - k.free);
  }
  const liveBytes = perClass.reduce((sum, k) => sum + k.live * k.size, largeBytes);
  return { perClass, largeBlocks, largeBytes, liveBytes };
}

/** What is wrong with `p` as the next block on class `c`'s free list (counted so far in `k`); null when nothing. */
function listProblem(
  space: AddressSpace,
  hdr: Int32Array,
  topAt: number,
  c: number,
  k: { carved: number; free: number },
  p: number,
  seen: Int32Array | null,
): string | null {
  if (k.free >= k.carved) return `holds more blocks than the class ever carved (${k.carved}): a cycle?`;
  const problem = freeBlockProblem(space, hdr, topAt, c, p);
  if (problem !== null) return problem;
  if (seen !== null && (seen[p >>> 10]! & (1 << ((p >>> 5) & 31))) !== 0) return 'names a block twice';
  return null;
}

/**
 * What is wrong with `p` as a free block of class `c` (the checks every walk of a list makes: `check()` and the
 * return of empty slabs); null when nothing: inside the space, in a slab of the class, on a block boundary
 * below the slab's carve offset, carrying its free mark.
 */
export function freeBlockProblem(space: AddressSpace, hdr: Int32Array, topAt: number, c: number, p: number): string | null {
  if (p >= space.maxBytes) return `names ${p}, outside the space`;
  const m = p >>> 20;
  if (entryKind(Atomics.load(hdr, H_ENTRY + m)) !== 1 + c) return `names ${p}, outside the class's slabs`;
  const off = p % MiB;
  if (off % (32 << c) !== 0 || off >= topOffset(Atomics.load(hdr, topAt + m))) return `names ${p}, off the slab's boundaries or above its carve offset`;
  space.covers(p + 8);
  if (space.i32[(p >>> 2) + 1] !== freeMark(p, c)) return `names ${p}, which has no free mark (it was handed out)`;
  return null;
}
