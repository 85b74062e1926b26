/**
 * What a pointer is, before anything changes: the pure check every free makes (`freeableClass`, inlined by the
 * heaps' free), the exact reason a refused free is refused (`locate`), and whether a pointer found where a dead
 * agent left it is a live object, or a block held freed (`isLiveObject`, `isHeldFreed`). One classifier,
 * `classifyPointer`, serves `locate` and the liveness tests; `freeableClass` stays a separate, branch-lean
 * function over plain constants because the free fast path inlines it.
 */
import { HeapError, formatAddress } from '@paddock/platform';
import type { ArenaHeap } from './arena-heap.js';
import {
  ARENA_MAGIC,
  A_KIND_OWNER,
  A_MAGIC,
  CLASS_MASK,
  CLASS_SHIFT,
  FREED_MARK,
  IN_MAPPING,
  KIND_ARENA,
  LARGE_CLASS,
  META_HEADER_WORDS,
  META_OFFSET,
  NOT_FREEABLE,
  RECORD_SHIFT,
  R_BUMP,
  R_FREE,
  R_INFO,
  R_LIVE,
  R_SIZE,
  STATE_CONT,
  STATE_HEAD,
  STATE_MASK,
  UNIT_SHIFT,
  headerIndex,
  recordIndex,
} from './layout.js';
import { objectSize } from './slab.js';
import { CLASS_COUNT, LARGE_ROUND, MAX_CLASS_SIZE, badSize, classIndex } from './size-class.js';

/**
 * The checks every free makes, as one pure function over a view so the heap's free can inline it: returns the
 * class (0-15, or 16 for a large object) of the live, not yet freed block at `p`, {@link IN_MAPPING}, or
 * {@link NOT_FREEABLE} for anything else (not a uint32, misaligned, past the view, no arena, a free or
 * continuation unit, off the class grid, an empty slab, never handed out, or carrying the freed mark).
 * It reads and never writes; `arenaMask` is the heap's {@link ArenaHeap.arenaMask}, `regionMap` and `regionShift`
 * its {@link ArenaHeap.regionMap} and {@link ArenaHeap.regionShift}. A pointer outside every region is
 * {@link IN_MAPPING} with no further look (0 included: the caller handles a null free first): only an oversized
 * mapping can be freed there, and its tier checks the mapping's header. Nothing is read at `p`'s arena mask
 * outside a region, where it would be an oversized mapping's user data.
 */
export function freeableClass(u32: Uint32Array, arenaMask: number, regionMap: number, regionShift: number, p: number): number {
  // Written out with plain constants (esbuild inlines them): a call to an exported helper or a computed
  // module constant would cost the inlined free a module-binding load and a check each.
  if ((p >>> 0) === p && (p & 31) === 0 && (p >>> 2) + 2 <= u32.length) {
    if (u32[regionMap + (p >>> regionShift)] === 0) return IN_MAPPING;
    const base = (p & arenaMask) >>> 0;
    // The arena's header (arenaMeta): META_OFFSET into chunk `slot` of its region's slot 0. `arenaMask << 5` masks
    // the region, `~arenaMask` is arenaBytes - 1. It lies below `p`, so inside the view.
    const hw = ((base & (arenaMask << 5)) + ((base >>> 5) & ~arenaMask) + META_OFFSET) >>> 2;
    const u = (p - base) >>> UNIT_SHIFT;
    // Both magics are below 2^31, so a Uint32Array reads them as they are written.
    if (u32[hw + A_MAGIC] === ARENA_MAGIC && (u32[hw + A_KIND_OWNER]! & 255) === KIND_ARENA) {
      const ri = hw + META_HEADER_WORDS + (u << RECORD_SHIFT); // recordIndex(base, u, arenaBytes)
      const info = u32[ri + R_INFO]!;
      const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
      if (
        (info & STATE_MASK) === STATE_HEAD &&
        ((p - base - (u << UNIT_SHIFT)) & ((32 << cls) - 1)) === 0 &&
        (u32[ri + R_LIVE]! | 0) > 0 &&
        p < u32[ri + R_BUMP]! &&
        (u32[(p >>> 2) + 1]! | 0) !== (FREED_MARK ^ p)
      ) {
        return cls;
      }
    }
  }
  return NOT_FREEABLE;
}

/** Whether a sized free's `size` names the class recorded in `info`. */
export function sizeMatches(size: number, info: number, largeBytes: number): boolean {
  if ((size >>> 0) !== size) return false;
  const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
  if (cls === LARGE_CLASS) return size > MAX_CLASS_SIZE && Math.ceil(size / LARGE_ROUND) * LARGE_ROUND === largeBytes;
  return size <= MAX_CLASS_SIZE && classIndex(size) === cls;
}

// What `classifyPointer` finds wrong with a pointer, in the order it looks (each a negative number, so that a
// record index, which is positive, means none of them).
const NOT_A_POINTER = -1;
const NOT_ALIGNED = -2;
const OUTSIDE_HEAP = -3;
const NO_ARENA = -4;
const INTERIOR = -5;
const IN_FREE_UNIT = -6;
const OFF_CLASS_GRID = -7;
const SLAB_EMPTY = -8;
const NEVER_HANDED_OUT = -9;

/**
 * Whether `p` is an object some arena handed out, and not yet reclaimed by its owner: a uint32, 32-byte aligned,
 * inside the heap (the views are refreshed if it lies past them), in a laid-out arena, in a head
 * unit, on its class's grid, in a slab with live objects, below the bump. Returns its slab's record index, or
 * the first of the reasons above that it is not. Whether it was freed since (the freed mark) is not looked at.
 */
function classifyPointer(h: ArenaHeap, p: number): number {
  if (typeof p !== 'number' || (p >>> 0) !== p) return NOT_A_POINTER;
  if ((p & 31) !== 0) return NOT_ALIGNED;
  if (!h.cover(p + 8)) return OUTSIDE_HEAP;
  const i32 = h.i32;
  if (i32[h.regionMap + (p >>> h.regionShift)] === 0) return NO_ARENA; // outside every region: never read at its arena mask
  const base = (p & h.arenaMask) >>> 0;
  const hb = headerIndex(base, h.arenaBytes);
  if (i32[hb + A_MAGIC] !== ARENA_MAGIC || (i32[hb + A_KIND_OWNER]! & 255) !== KIND_ARENA) return NO_ARENA;
  const u = (p - base) >>> UNIT_SHIFT;
  const ri = recordIndex(base, u, h.arenaBytes);
  const info = i32[ri + R_INFO]!;
  const state = info & STATE_MASK;
  if (state === STATE_CONT) return INTERIOR;
  if (state !== STATE_HEAD) return IN_FREE_UNIT;
  const size = 32 << ((info >>> CLASS_SHIFT) & CLASS_MASK);
  if (((p - base - (u << UNIT_SHIFT)) & (size - 1)) !== 0) return OFF_CLASS_GRID;
  if (i32[ri + R_LIVE]! <= 0) return SLAB_EMPTY;
  if (p >= h.u32[ri + R_BUMP]!) return NEVER_HANDED_OUT;
  return ri;
}

/**
 * Checks that `p` is an object some arena handed out and returns its record index.
 * `what` names the operation in messages.
 * @throws HeapError BAD_POINTER, MISALIGNED or DOUBLE_FREE naming the first check `p` fails.
 */
export function locate(h: ArenaHeap, p: number, what: string): number {
  const ri = classifyPointer(h, p);
  if (ri >= 0) return ri;
  if (ri === NOT_A_POINTER) throw new HeapError('BAD_POINTER', `${what}: ${String(p)} is not a pointer (a uint32 byte offset)`);
  const at = formatAddress(p);
  switch (ri) {
    case NOT_ALIGNED:
      throw new HeapError('MISALIGNED', `${what}: ${at} is not aligned to 32 bytes`, p);
    case OUTSIDE_HEAP:
      throw new HeapError('BAD_POINTER', `${what}: ${at} lies outside the heap's memory`, p);
    case NO_ARENA:
      throw new HeapError('BAD_POINTER', `${what}: no arena owns ${at}`, p);
    case INTERIOR:
      throw new HeapError('BAD_POINTER', `${what}: ${at} is an interior address of a block`, p);
    case IN_FREE_UNIT:
      throw new HeapError('DOUBLE_FREE', `${what}: ${at} lies in a free unit`, p);
    case OFF_CLASS_GRID: {
      const base = (p & h.arenaMask) >>> 0;
      const info = h.i32[recordIndex(base, (p - base) >>> UNIT_SHIFT, h.arenaBytes) + R_INFO]!;
      throw new HeapError('MISALIGNED', `${what}: ${at} is not aligned to its ${32 << ((info >>> CLASS_SHIFT) & CLASS_MASK)}-byte class`, p);
    }
    case SLAB_EMPTY:
      throw new HeapError('DOUBLE_FREE', `${what}: ${at}: its slab has no live objects`, p);
    default:
      throw new HeapError('BAD_POINTER', `${what}: ${at} was never handed out`, p);
  }
}

/** The slow path of a refused free of `p` (with `size`, a sized one): finds the exact reason and throws it. */
export function refuse(h: ArenaHeap, p: number, size: number | undefined): never {
  const ri = locate(h, p, 'free');
  if (size !== undefined && !sizeMatches(size, h.i32[ri + R_INFO]!, h.u32[ri + R_SIZE]!)) {
    if ((size >>> 0) !== size) throw badSize(size);
    throw new HeapError('WRONG_SIZE', `free of ${formatAddress(p)} with size ${size}: the block holds ${objectSize(h, ri)} bytes`, p);
  }
  throw new HeapError('DOUBLE_FREE', `double free of ${formatAddress(p)}`, p);
}

/** Whether `p` is an object of a slab (small or large) with live objects: in an arena, in a head unit, aligned, below the bump. */
export function isLiveObject(h: ArenaHeap, p: number): boolean {
  if (p === 0) return false;
  const ri = classifyPointer(h, p);
  if (ri < 0) return false;
  const cls = (h.i32[ri + R_INFO]! >>> CLASS_SHIFT) & CLASS_MASK;
  return cls < CLASS_COUNT || cls === LARGE_CLASS;
}

/** Whether `p` looks like a block held freed (in a cache or chain): in a live slab, aligned, marked. */
export function isHeldFreed(h: ArenaHeap, p: number): boolean {
  return isLiveObject(h, p) && h.i32[(p >>> 2) + 1] === (FREED_MARK ^ p);
}

/** Whether `p` is on its slab's free list (a bounded walk). */
export function onFreeList(h: ArenaHeap, p: number): boolean {
  const base = (p & h.arenaMask) >>> 0;
  const ri = recordIndex(base, (p - base) >>> UNIT_SHIFT, h.arenaBytes);
  let steps = 0;
  for (let q = h.u32[ri + R_FREE]!; q !== 0 && steps < 1024; q = h.u32[q >>> 2]!, steps++) if (q === p) return true;
  return false;
}
