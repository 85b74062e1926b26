/**
 * Per-class stacks in one Uint32Array, in JS memory (the cache is this agent's alone; the blocks in it
 * stay live in their slabs, so nothing in the shared buffer depends on it).
 */
import { CLASS_COUNT, type ArenaHeap } from '@paddock/arena';

/** What {@link ThreadCache.stats} reports. */
export interface CacheStats {
  /** Blocks held per class. */
  blocks: number[];
  /** Depth per class. */
  depth: number[];
  /** Bytes held (blocks times class size). */
  bytes: number;
}

export class ThreadCache {
  private readonly arena: ArenaHeap;
  private readonly slots: Uint32Array;
  private readonly start = new Int32Array(CLASS_COUNT);
  private readonly count = new Int32Array(CLASS_COUNT);
  private readonly depth = new Int32Array(CLASS_COUNT);

  /** `depths[i]` is the most blocks class i may hold (from the profile). */
  constructor(arena: ArenaHeap, depths: readonly number[]) {
    this.arena = arena;
    let total = 0;
    for (let c = 0; c < CLASS_COUNT; c++) {
      const d = depths[c] ?? 0;
      if (!Number.isInteger(d) || d < 0) throw new RangeError(`cache depth of class ${c} must be a non-negative integer, got ${String(d)}`);
      this.start[c] = total;
      this.depth[c] = d;
      total += d;
    }
    this.slots = new Uint32Array(total);
  }

  /** Takes a cached block of class `cls`, or 0 when there is none. Its freed mark is cleared. */
  pop(cls: number): number {
    const n = this.count[cls]! - 1;
    if (n < 0) return 0;
    this.count[cls] = n;
    const p = this.slots[this.start[cls]! + n]!;
    this.arena.clearMark(p);
    return p;
  }

  /** Caches a checked freed block of class `cls` if its stack has room; returns whether it did. */
  push(cls: number, p: number): boolean {
    const n = this.count[cls]!;
    if (n >= this.depth[cls]!) return false;
    this.slots[this.start[cls]! + n] = p;
    this.count[cls] = n + 1;
    this.arena.markFreed(p);
    return true;
  }

  /** Sends every cached block home (its slab here, or its owner's chain) and empties the cache. Returns how many. */
  flush(): number {
    let sent = 0;
    for (let c = 0; c < CLASS_COUNT; c++) {
      const s = this.start[c]!;
      const n = this.count[c]!;
      this.count[c] = 0;
      for (let i = n - 1; i >= 0; i--) this.arena.freeValidated(this.slots[s + i]!);
      sent += n;
    }
    return sent;
  }

  /** Blocks held in class `cls`. */
  held(cls: number): number {
    return this.count[cls]!;
  }

  /** Whether `p` is in the cache (a linear search: for tests and checks, not hot paths). */
  holds(p: number): boolean {
    for (let c = 0; c < CLASS_COUNT; c++) {
      const s = this.start[c]!;
      for (let i = 0; i < this.count[c]!; i++) if (this.slots[s + i] === p) return true;
    }
    return false;
  }

  stats(): CacheStats {
    const blocks: number[] = [];
    const depth: number[] = [];
    let bytes = 0;
    for (let c = 0; c < CLASS_COUNT; c++) {
      blocks.push(this.count[c]!);
      depth.push(this.depth[c]!);
      bytes += this.count[c]! * (32 << c);
    }
    return { blocks, depth, bytes };
  }
}
