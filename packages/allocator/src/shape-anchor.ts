/**
 * The shape anchor: a small heap that keeps the classes ("maps") of the heap's objects alive, so that the
 * allocator's optimized hot paths survive a program that drops its heaps.
 *
 * V8 compiles the allocator's hot paths against the hidden classes of the heap's objects, and a map dies with
 * the last object that has it: every function optimized against it is then thrown away, and the call sites'
 * type feedback turns polymorphic. A program that drops a heap and creates another (a heap per job, a
 * benchmark's fresh heap per round) would re-optimize after every collection and run malloc and free from
 * worse code: measured here, a pair went from 19-21 ns to 35-50 ns. So the first heap an agent creates also
 * creates a small anchor heap that lives as long as this module, and whose objects keep those classes alive.
 * It is never used again; if it cannot be made (no memory to reserve), nothing else changes.
 */
import { createBackendHeap } from '#backend';
import type { Heap } from './types.js';

/**
 * Reserved bytes of the shape anchor (the smallest heap both backends accept; about 0.4 MiB of it becomes
 * resident).
 */
export const SHAPE_ANCHOR_BYTES = 128 * 1024 * 1024;
let shapeAnchor: Heap | null = null;
let anchorTried = false;

/** Makes this agent's shape anchor, once (the first time a heap is created). */
export function anchorShapes(): void {
  if (anchorTried) return;
  anchorTried = true;
  try {
    const anchor = createBackendHeap({ maxBytes: SHAPE_ANCHOR_BYTES });
    shapeAnchor = anchor;
  } catch {
    shapeAnchor = null;
  }
}

/** Whether this agent holds a shape anchor (for tests). @internal */
export function hasShapeAnchor(): boolean {
  return shapeAnchor !== null;
}
