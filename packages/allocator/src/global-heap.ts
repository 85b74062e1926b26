/**
 * The global pool behind the same `Heap` interface as the arena: any agent mallocs and frees any block
 * through shared lists only, and no agent keeps state of its own. So there is nothing to hand over when an
 * agent leaves and nothing to reap when one dies (a dead agent strands only the blocks it held): reap throws
 * `UNSUPPORTED` and says so, watch returns false, flush, drain, flushCache and purgeRetention return 0.
 * Idle memory: a large block's pages go back when it is freed; a slab whose blocks are all free goes back
 * on `returnIdle()`, and from the idle tick or a wait that timed out once its class's free list has not
 * changed since the previous look (a class some agent still uses keeps its slabs until it goes quiet). Only a
 * heap object on the main thread returns slabs: the return holds a class's free list while it counts, and
 * a worker may be terminated at any instruction, which would strand that list; the main thread is never
 * stopped half way (it ends with the process).
 * malloc, usableSize, free and the pointer checks are the pool's own.
 */
import type { ReapReport } from '@paddock/arena';
import { HeapError, describeValue, onMainThread, rss, type AddressSpace } from '@paddock/platform';
import { CLASS_COUNT, GlobalPool, LARGE_HEADER, MAX_CLASS_SIZE, classIndex } from '@paddock/pool-global';
import { DEFAULT_PROFILE, validateProfile } from '@paddock/profile';
import { HANDLE_VERSION, createHeapSpace, openHeapSpace } from './handle.js';
import { addonOf, closedError, withOptions } from './heap-base.js';
import { releaseSpareChunk } from './scope.js';
import { PoolHeapBase, wrongSize } from './pool-heap.js';
import type { GlobalHeapStats } from './stats.js';
import { TICK_MAX_MS, type AttachOptions, type Heap, type HeapHandle, type HeapOptions } from './types.js';
import type { HeapView } from './views.js';

/** This backend's name. */
export const GLOBAL_BACKEND = 'pool_global';

/** Bytes a large block of `size` bytes holds (its mapping is rounded to 4 KiB pages, header included). */
function largeHolds(size: number): number {
  return Math.ceil((size + LARGE_HEADER) / 4096) * 4096 - LARGE_HEADER;
}

/** Whether a block of `usable` bytes is the one a request of `size` bytes gets: its class, or its large size. */
function sameBlockSize(size: number, usable: number): boolean {
  if (usable <= MAX_CLASS_SIZE) return size <= MAX_CLASS_SIZE && classIndex(size) === classIndex(usable);
  return size > MAX_CLASS_SIZE && largeHolds(size) === usable;
}

export class GlobalBackedHeap extends PoolHeapBase implements Heap {
  protected override detached: boolean;
  /** The pool itself. */
  readonly pool: GlobalPool;
  readonly space: AddressSpace;
  readonly handle: HeapHandle;
  readonly backend: string;
  profile: number;
  /**
   * Each class's list head at this agent's previous idle look, and whether its empty slabs went back since
   * (this agent's own notes, not pool state: losing them loses nothing).
   */
  private readonly idleHeads: bigint[];
  private readonly idleReturned: boolean[];
  /** Whether this heap object returns empty slabs: only on the main thread (see above). */
  private readonly returnsSlabs: boolean;

  /** @internal use createGlobalHeap / attachGlobalHeap. */
  constructor(space: AddressSpace, pool: GlobalPool, profile: number) {
    super();
    // malloc and free read these two first: they are assigned first.
    this.detached = false;
    this.pool = pool;
    this.space = space;
    this.backend = GLOBAL_BACKEND;
    this.profile = profile;
    this.handle = { kind: 'paddock-heap', version: HANDLE_VERSION, backend: GLOBAL_BACKEND, space: space.handle, profile };
    this.idleHeads = Array.from({ length: CLASS_COUNT }, (_, c) => pool.listHead(c));
    this.idleReturned = new Array<boolean>(CLASS_COUNT).fill(false);
    this.returnsSlabs = onMainThread();
    this.leaveWithThread();
  }

  malloc(size: number): number {
    if (this.detached) throw closedError();
    return this.pool.malloc(size);
  }
  /**
   * `ptr = 0` is malloc; a size the block already serves (its class, or its page-rounded large size) keeps
   * the pointer; otherwise the first `min(old, new)` bytes move to a new block and the old one is freed.
   * The size and the pointer are both checked before anything changes.
   */
  realloc(ptr: number, size: number): number {
    if (this.detached) throw closedError();
    if ((size >>> 0) !== size || size > this.space.maxBytes) {
      throw new RangeError(`realloc size must be an integer from 0 to maxBytes ${this.space.maxBytes}, got ${describeValue(size)}`);
    }
    if (ptr === 0) return this.pool.malloc(size);
    const usable = this.pool.usableSize(ptr);
    if (sameBlockSize(size, usable)) return ptr;
    const moved = this.pool.malloc(size);
    this.space.covers(moved + size);
    this.space.u8.copyWithin(moved, ptr, ptr + Math.min(usable, size));
    this.pool.free(ptr);
    return moved;
  }
  free(ptr: number | HeapView, size?: number): void {
    if (typeof ptr !== 'number') ptr = this.viewPointer(ptr, 'free'); // a typed array: the block it starts (views.ts)
    if (this.detached) throw closedError();
    if (size !== undefined && ptr !== 0) {
      const usable = this.pool.usableSize(ptr);
      if ((size >>> 0) !== size || !sameBlockSize(size, usable)) {
        throw wrongSize(ptr, size, usable);
      }
    }
    this.pool.free(ptr);
  }
  usableSize(ptr: number): number {
    if (this.detached) throw closedError();
    return this.pool.usableSize(ptr);
  }
  /** Nothing is pending: every free goes straight to the shared lists. */
  flush(): number {
    if (this.detached) throw closedError();
    return 0;
  }
  drain(): number {
    if (this.detached) throw closedError();
    return 0;
  }
  /**
   * Counts the whole pool (a walk of every slab and list: meant for a quiet moment, not a hot loop). It never
   * throws for what other agents change meanwhile; its counts are exact while no agent allocates or frees.
   */
  stats(): GlobalHeapStats {
    if (this.detached) throw closedError();
    const counts = this.pool.counts();
    return {
      backend: GLOBAL_BACKEND,
      pageReturn: this.space.pageReturn,
      pageReturnAddon: addonOf(this.space.pageReturn),
      profile: this.profile,
      committedBytes: this.space.committedBytes,
      residentBytes: rss(),
      liveBytes: counts.liveBytes,
      perClass: counts.perClass.map((k) => ({ size: k.size, live: k.live, free: k.free, slabs: k.slabs })),
      nextTickMs: TICK_MAX_MS,
      largeBlocks: counts.largeBlocks,
      largeBytes: counts.largeBytes,
    };
  }
  check(): void {
    if (this.detached) throw closedError();
    this.pool.check();
  }
  /** The idle tick: returns the empty slabs of the classes quiet since the previous tick; asks for the longest delay. */
  tick(): number {
    if (this.detached) throw closedError();
    this.returnQuietSlabs();
    return TICK_MAX_MS;
  }
  /**
   * Returns every slab whose blocks are all free, in every class, now (see `GlobalPool.returnEmptySlabs`); on
   * a worker, only the scopes' spare chunk (a worker leaves the slabs to the main thread).
   */
  returnIdle(): void {
    if (this.detached) throw closedError();
    releaseSpareChunk(this);
    if (this.returnsSlabs) this.pool.returnEmptySlabs();
  }
  protected beforeWait(): void {}
  /** After a wait that timed out: the empty slabs of the classes quiet since the previous look go back. */
  protected afterWait(timedOut: boolean): void {
    if (timedOut) this.returnQuietSlabs();
  }
  /**
   * Gives the scopes' spare chunk back; then, for each class whose list head is the one this agent saw at
   * its previous look (no agent popped or pushed since), and whose empty slabs have not gone back since,
   * returns them; notes the heads for the next look. Comparing heads costs one load per class, so a busy heap pays nothing here but the look.
   */
  private returnQuietSlabs(): void {
    releaseSpareChunk(this);
    if (!this.returnsSlabs) return;
    const pool = this.pool;
    for (let c = 0; c < CLASS_COUNT; c++) {
      const head = pool.listHead(c);
      if (head !== this.idleHeads[c]) {
        this.idleHeads[c] = head;
        this.idleReturned[c] = false;
      } else if (!this.idleReturned[c]) {
        pool.returnEmptySlabs(c);
        this.idleHeads[c] = pool.listHead(c);
        this.idleReturned[c] = true;
      }
    }
  }
  /** Leaves the heap: this agent holds nothing of its own, so nothing is handed over. */
  detach(): void {
    if (this.detached) return;
    releaseSpareChunk(this);
    this.forgetThreadExit();
    this.stopIdle();
    this.detached = true;
  }
  reap(_agentId: number): ReapReport & { stashReleased: number } {
    if (this.detached) throw closedError();
    throw new HeapError('UNSUPPORTED', 'the global pool keeps no agent state: a dead agent strands only the blocks it held, and there is nothing to reap');
  }
}

/** Creates a heap with the global pool backend. */
export function createGlobalHeap(options: HeapOptions = {}): GlobalBackedHeap {
  const { space, profile } = createHeapSpace(options);
  return withOptions(new GlobalBackedHeap(space, GlobalPool.create(space), profile), options);
}

/** Attaches this agent to a global-pool heap. */
export function attachGlobalHeap(handle: HeapHandle, options: AttachOptions = {}): GlobalBackedHeap {
  const space = openHeapSpace(handle, GLOBAL_BACKEND, options);
  return withOptions(new GlobalBackedHeap(space, GlobalPool.open(space), validateProfile(handle.profile ?? DEFAULT_PROFILE)), options);
}
