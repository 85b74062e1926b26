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
import { CLASS_COUNT, H_ENTRY, H_MIBS, LARGE, MiB, classSize, entryKind, freeMark, topClass, topOffset } from './layout.js';
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

/** Walks and counts the pool whose header words are `hdr` (TOP table at word `topAt`). @throws HeapError `CORRUPTION`. */
export function walkPool(space: AddressSpace, hdr: Int32Array, lists: FreeLists, topAt: number): GlobalPoolCounts {
  const perClass = Array.from({ length: CLASS_COUNT }, (_, c) => ({ size: classSize(c), slabs: 0, carved: 0, free: 0, live: 0 }));
  let largeBlocks = 0;
  let largeBytes = 0;
  const mibs = hdr[H_MIBS]!;
  for (let m = 0; m < mibs; m++) {
    const e = entryKind(Atomics.load(hdr, H_ENTRY + m));
    if (e >= 1 && e <= CLASS_COUNT) {
      const k = perClass[e - 1]!;
      const t = Atomics.load(hdr, topAt + m);
      if (topClass(t) !== e - 1) corrupt(`the class ${e - 1} slab's carve word names class ${topClass(t)}`, m * MiB);
      k.slabs++;
      k.carved += topOffset(t) / k.size;
    } else if (e === LARGE) {
      const mapping = m * MiB;
      space.covers(mapping + LARGE_HEADER);
      largeBlocks++;
      largeBytes += space.i32[mapping >>> 2]! - LARGE_HEADER;
    } else if (e !== 0) {
      corrupt(`ENTRY[${m}] holds ${e}, which is neither a slab nor a large block`, m * MiB);
    }
  }
  const seen = new Set<number>();
  for (let c = 0; c < CLASS_COUNT; c++) {
    const k = perClass[c]!;
    for (let p = lists.first(lists.load(c)); p !== 0; ) {
      if (k.free >= k.carved) corrupt(`class ${c}'s free list holds more blocks than the class ever carved (${k.carved}): a cycle?`, p);
      const m = p >>> 20;
      if (entryKind(Atomics.load(hdr, H_ENTRY + m)) !== 1 + c) corrupt(`class ${c}'s free list names a block outside the class's slabs`, p);
      const off = p % MiB;
      if (off % k.size !== 0 || off >= topOffset(Atomics.load(hdr, topAt + m))) {
        corrupt(`class ${c}'s free list names a block off the slab's boundaries or above its carve offset`, p);
      }
      space.covers(p + 8);
      if (space.i32[(p >>> 2) + 1] !== freeMark(p, c)) corrupt(`class ${c}'s free list names a block without its free mark (it was handed out)`, p);
      if (seen.has(p)) corrupt(`class ${c}'s free list names a block twice`, p);
      seen.add(p);
      k.free++;
      p = space.u32[p >>> 2]!;
    }
    k.live = k.carved - k.free;
  }
  const liveBytes = perClass.reduce((sum, k) => sum + k.live * k.size, largeBytes);
  return { perClass, largeBlocks, largeBytes, liveBytes };
}
