/**
 * Per-class stacks in this agent's area of the shared buffer (so a reaper can recover the blocks of an
 * agent that died). Only the owning agent writes them; the blocks in them stay live in their slabs.
 */
import { CACHE_STACKS_OFFSET, CACHE_STRIDE, CLASS_COUNT, G_CACHE_COUNT, G_CACHE_DEPTH, G_ROUTING, popCached, pushCached, type ArenaHeap } from '@paddock/arena';

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
  /** Int32 index of the class counts in the agent area (the heap's fast path reads it too). */
  readonly countWord: number;
  /** Int32 index of the class depths. */
  readonly depthWord: number;
  /** Int32 index of class 0's stack; class c's starts CACHE_STRIDE words further per class. */
  readonly stackWord: number;
  /** Int32 index of the agent area's routing word. */
  private readonly routingWord: number;

  /** `depths[i]` is the most blocks class i may hold (from the profile, at most 512). */
  constructor(arena: ArenaHeap, depths: readonly number[]) {
    this.arena = arena;
    const aw = arena.agentArea >>> 2;
    this.countWord = aw + G_CACHE_COUNT;
    this.depthWord = aw + G_CACHE_DEPTH;
    this.stackWord = (arena.agentArea + CACHE_STACKS_OFFSET) >>> 2;
    this.routingWord = aw + G_ROUTING;
    const i32 = arena.i32;
    for (let c = 0; c < CLASS_COUNT; c++) {
      const d = depths[c] ?? 0;
      if (!Number.isInteger(d) || d < 0 || d > CACHE_STRIDE) {
        throw new RangeError(`cache depth of class ${c} must be an integer from 0 to ${CACHE_STRIDE}, got ${String(d)}`);
      }
      if (i32[this.countWord + c] !== 0) throw new RangeError('a thread cache can only be set up empty');
      i32[this.depthWord + c] = d;
    }
  }

  /** Takes a cached block of class `cls`, or 0 when there is none. Its freed mark is cleared. */
  pop(cls: number): number {
    return popCached(this.arena.u32, this.countWord, this.stackWord, cls);
  }

  /** Caches a checked freed block of class `cls` if its stack has room; returns whether it did. */
  push(cls: number, p: number): boolean {
    return pushCached(this.arena.u32, this.countWord, this.depthWord, this.stackWord, cls, p);
  }

  /** Sends every cached block home (its slab here, or its owner's chain) and empties the cache. Returns how many. */
  flush(): number {
    let sent = 0;
    for (let c = 0; c < CLASS_COUNT; c++) {
      const n = this.arena.u32[this.countWord + c]!;
      for (let i = n - 1; i >= 0; i--) {
        const p = this.arena.u32[this.stackWord + c * CACHE_STRIDE + i]!;
        // Taken off before it is routed (a throw leaves no duplicate), and named in the routing word until it
        // is on a list, so a reaper finds it if this agent dies in between.
        this.arena.u32[this.routingWord] = p;
        this.arena.u32[this.countWord + c] = i;
        this.arena.freeValidated(p);
        this.arena.u32[this.routingWord] = 0;
      }
      sent += n;
    }
    return sent;
  }

  /** Takes no more blocks: every depth becomes 0 (a detached agent's frees then all take the checked path). */
  close(): void {
    const u32 = this.arena.u32;
    for (let c = 0; c < CLASS_COUNT; c++) u32[this.depthWord + c] = 0;
  }

  /** Whether the cache holds no block at all. */
  isEmpty(): boolean {
    const u32 = this.arena.u32;
    for (let c = 0; c < CLASS_COUNT; c++) if (u32[this.countWord + c] !== 0) return false;
    return true;
  }

  /** Blocks held in class `cls`. */
  held(cls: number): number {
    return this.arena.u32[this.countWord + cls]!;
  }

  /** Whether `p` is in the cache (a linear search: for tests and checks, not hot paths). */
  holds(p: number): boolean {
    const u32 = this.arena.u32;
    for (let c = 0; c < CLASS_COUNT; c++) {
      for (let i = 0; i < u32[this.countWord + c]!; i++) if (u32[this.stackWord + c * CACHE_STRIDE + i] === p) return true;
    }
    return false;
  }

  stats(): CacheStats {
    const u32 = this.arena.u32;
    const blocks: number[] = [];
    const depth: number[] = [];
    let bytes = 0;
    for (let c = 0; c < CLASS_COUNT; c++) {
      blocks.push(u32[this.countWord + c]!);
      depth.push(u32[this.depthWord + c]!);
      bytes += u32[this.countWord + c]! * (32 << c);
    }
    return { blocks, depth, bytes };
  }
}
