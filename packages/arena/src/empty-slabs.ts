/**
 * Empty slabs kept for reuse. When frees (usually another agent's, drained from the inbox) empty a slab that
 * is not the class's current one, the slab is not released at once: it stays laid out, reset to bump from its
 * start, on an agent-local stack per class (newest on top), and the class's next refill takes the newest before
 * it searches the unit map for a new slab. A producer whose consumers keep emptying its slabs then reuses them
 * without releasing units, marking them dirty, searching and laying out records again on every cycle (4 KiB
 * objects fill a 16 KiB slab with four: a slab per four handed-over blocks; a producer that drains a ring's
 * worth of frees at once empties hundreds of slabs and fills them again right after).
 *
 * Only one-unit slabs are kept (classes up to 16 KiB, where a slab holds 1 to 512 objects and is emptied and
 * laid out again most often); a block of several units (32 KiB to 1 MiB) is released as before, so an agent that
 * frees a large working set gives it back without waiting (the idle return of 512 KiB blocks measured 21 ms to
 * half before keeping, 32 ms when blocks were kept too).
 *
 * What is kept is bounded the way dirty units are: once the kept units pass the profile's sweep threshold, the
 * ones above it that are still kept {@link SWEEP_DELAY_MS} after a look first found them there (the oldest first)
 * are released. The refill path looks every {@link TRIM_EVERY}th refill, the idle tick and any sweep look too;
 * only a look reads the clock, so keeping and taking slabs never does, even when the kept units go up and down
 * across the threshold on every refill. So a steady producer keeps its working set of slabs, and a burst of
 * frees is given back as released units would have been.
 *
 * An agent whose arenas have no room for a new slab releases every kept slab before it carves another arena.
 *
 * A kept slab is an ordinary slab record with nothing live and nothing listed (neither current nor partial),
 * so `check()` finds it consistent and a reaper's repair releases it as an empty slab if the agent dies. The
 * idle return and leaving the heap release every kept slab first (see release.ts `releaseIdle`).
 */
import type { ArenaHeap } from './arena-heap.js';
import { R_BUMP, R_FREE, R_SPAN, UNIT_SHIFT, recordIndex } from './layout.js';
import { SWEEP_DELAY_MS, releaseSlab } from './release.js';
import { CLASS_COUNT } from './size-class.js';

/** The refill path looks at the clock for a due trim on every this many refills (a clock read costs). */
export const TRIM_EVERY = 16;

/** The kept slabs of one agent, by class: a stack of slab addresses per class. */
export class EmptySlabs {
  /** Slab addresses, one stack per class, oldest at the bottom (each grows by doubling). */
  private readonly slabs: Uint32Array[] = Array.from({ length: CLASS_COUNT }, () => new Uint32Array(8));
  /** Slabs kept per class. */
  private readonly counts = new Int32Array(CLASS_COUNT);
  /** Units kept, all classes together. */
  private units = 0;
  /** Whether the kept units are above the sweep threshold. */
  over = false;
  /** When a look first found them above it (ms, `performance.now()`); 0 until then, and while they are not. */
  overSince = 0;

  /**
   * Keeps the empty slab `s` of class `cls` (record index `ri`, neither current nor partial any more), reset to
   * bump from its start. Returns false (the caller releases it) for a block of several units or a slab in an
   * inherited arena.
   */
  keep(h: ArenaHeap, s: number, ri: number, cls: number): boolean {
    const span = h.i32[ri + R_SPAN]!;
    if (span !== 1) return false;
    // An arena taken over from an agent that left goes back as soon as it is empty: nothing is kept there.
    if (h.inherited.size !== 0 && h.inherited.has((s & h.arenaMask) >>> 0)) return false;
    h.u32[ri + R_FREE] = 0;
    h.u32[ri + R_BUMP] = s;
    const n = this.counts[cls]!;
    let stack = this.slabs[cls]!;
    if (n === stack.length) {
      stack = new Uint32Array(n * 2);
      stack.set(this.slabs[cls]!);
      this.slabs[cls] = stack;
    }
    stack[n] = s;
    this.counts[cls] = n + 1;
    this.units += span;
    if (this.units > h.sweepThreshold) this.over = true;
    return true;
  }

  /** The newest kept empty slab of class `cls`, taken off its stack; 0 when there is none. */
  take(h: ArenaHeap, cls: number): number {
    const n = this.counts[cls]!;
    if (n === 0) return 0;
    const s = this.slabs[cls]![n - 1]!;
    this.counts[cls] = n - 1;
    this.units -= slabSpan(h, s);
    if (this.units <= h.sweepThreshold) {
      this.over = false;
      this.overSince = 0;
    }
    return s;
  }

  /**
   * A look at the kept slabs: releases the oldest until the kept units are at the sweep threshold if an earlier
   * look found them above it {@link SWEEP_DELAY_MS} ago or more (at once with `force`); the first look that finds
   * them above it starts the clock. Returns the slabs released.
   */
  trim(h: ArenaHeap, force: boolean): number {
    if (!this.over) return 0;
    if (!force) {
      const now = performance.now();
      if (this.overSince === 0) {
        this.overSince = now;
        return 0;
      }
      if (now - this.overSince < SWEEP_DELAY_MS) return 0;
    }
    let released = 0;
    for (let cls = 0; cls < CLASS_COUNT && this.units > h.sweepThreshold; cls++) {
      const stack = this.slabs[cls]!;
      const n = this.counts[cls]!;
      let k = 0;
      while (k < n && this.units > h.sweepThreshold) {
        const s = stack[k++]!;
        this.units -= slabSpan(h, s);
        release(h, s);
        released++;
      }
      stack.copyWithin(0, k, n);
      this.counts[cls] = n - k;
    }
    this.over = false;
    this.overSince = 0;
    return released;
  }

  /** Bytes of the slabs kept now, every class. */
  get bytes(): number {
    return this.units << UNIT_SHIFT;
  }

  /** Slabs kept now, every class. */
  get count(): number {
    let n = 0;
    for (let c = 0; c < CLASS_COUNT; c++) n += this.counts[c]!;
    return n;
  }

  /** Releases every kept slab (the idle return, leaving the heap). */
  releaseAll(h: ArenaHeap): void {
    for (let cls = 0; cls < CLASS_COUNT; cls++) {
      for (let s = this.take(h, cls); s !== 0; s = this.take(h, cls)) release(h, s);
    }
  }
}

/** Units the slab at `s` spans. */
function slabSpan(h: ArenaHeap, s: number): number {
  const base = (s & h.arenaMask) >>> 0;
  return h.i32[recordIndex(base, (s - base) >>> UNIT_SHIFT, h.arenaBytes) + R_SPAN]!;
}

/** Releases the kept slab at `s`. */
function release(h: ArenaHeap, s: number): void {
  const base = (s & h.arenaMask) >>> 0;
  const u = (s - base) >>> UNIT_SHIFT;
  releaseSlab(h, base, u, h.i32[recordIndex(base, u, h.arenaBytes) + R_SPAN]!, false);
}
