/**
 * The shape anchor: a heap that keeps the classes ("maps") of the heap's objects alive, so that the
 * allocator's optimized hot paths survive a program that drops its heaps.
 *
 * V8 compiles the allocator's hot paths against the hidden classes of the heap's objects, and a map dies with
 * the last object that has it: every function optimized against it is then thrown away, and the call sites'
 * type feedback turns polymorphic. A program that drops a heap and creates another (a heap per job, a
 * benchmark's fresh heap per round) would re-optimize after every collection and run malloc and free from
 * worse code: measured here, a pair went from 19-21 ns to 35-50 ns. So the first heap an agent creates is
 * preceded by an anchor heap that lives as long as this module, and whose objects keep those classes alive.
 * It is never used again; if it cannot be made (no memory to reserve), nothing else changes.
 *
 * The anchor is as large as a heap gets in practice, 2 GiB: a map also records how each field is stored, and
 * a field that has only held small integers is stored as one until a larger number arrives (2 GiB is above
 * V8's small-integer range with or without pointer compression). A heap whose `maxBytes` is larger than
 * every heap before it then moves its objects to new maps with that field widened, and those maps die with it.
 * An anchor of 128 MiB kept the small-integer maps alive, and a 2 GiB heap dropped each round threw away the
 * oversized path's code every time (the bench's size sweep: 75-123 ns/op instead of about 45). Made first and
 * this large, the anchor's maps already have the widened fields, and every later heap shares them. The
 * reservation is address space: an agent's first `createHeap` grew the resident set by 0 to 0.4 MiB more than
 * with an anchor of 128 MiB (its header's bitmaps).
 */
import { createBackendHeap } from '#backend';
import type { Heap } from './types.js';

/** Reserved bytes of the shape anchor: 2 GiB, above the small-integer range (see above). */
export const SHAPE_ANCHOR_BYTES = 2 ** 31;
/** Where 2 GiB cannot be reserved: the smallest anchor that still keeps the classes themselves alive. */
const FALLBACK_ANCHOR_BYTES = 128 * 1024 * 1024;
let shapeAnchor: Heap | null = null;
let anchorTried = false;

/** Makes this agent's shape anchor, once (before the first heap it creates). */
export function anchorShapes(): void {
  if (anchorTried) return;
  anchorTried = true;
  for (const maxBytes of [SHAPE_ANCHOR_BYTES, FALLBACK_ANCHOR_BYTES]) {
    try {
      shapeAnchor = createBackendHeap({ maxBytes, watchWorkers: false }); // no worker ever attaches to it
      return;
    } catch {
      shapeAnchor = null;
    }
  }
}

/** Whether this agent holds a shape anchor (for tests). @internal */
export function hasShapeAnchor(): boolean {
  return shapeAnchor !== null;
}
