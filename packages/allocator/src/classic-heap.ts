/**
 * The classic pool behind the same `Heap` interface as the arena, so a program switches backends with a
 * build flag and nothing else. What the classic pool does not have (owner adoption, reaping, a retention
 * ledger, a thread cache of foreign blocks) is reported as such: reap throws `UNSUPPORTED`, watch returns
 * false (a worker stopped from outside strands what it held), flushCache and purgeRetention return 0, and its
 * stats carry only the figures it has. Its idle return keeps its memory: that is the documented difference.
 * malloc, realloc, usableSize and free are the pool's own (its in-place rule and its pointer checks live there).
 */
import type { ReapReport } from '@paddock/arena';
import { HeapError, rss, type AddressSpace } from '@paddock/platform';
import { ClassicPool } from '@paddock/pool-classic';
import { DEFAULT_PROFILE, validateProfile } from '@paddock/profile';
import { HANDLE_VERSION, createHeapSpace, openHeapSpace } from './handle.js';
import { addonOf, closedError, withOptions } from './heap-base.js';
import { releaseSpareChunk } from './scope.js';
import { PoolHeapBase, wrongSize } from './pool-heap.js';
import type { ClassicHeapStats } from './stats.js';
import { TICK_MIN_MS, type AttachOptions, type Heap, type HeapHandle, type HeapOptions } from './types.js';
import type { HeapView } from './views.js';

/** This backend's name. */
export const CLASSIC_BACKEND = 'pool_classic';

export class ClassicBackedHeap extends PoolHeapBase implements Heap {
  readonly handle: HeapHandle;
  readonly backend = CLASSIC_BACKEND;
  profile: number;
  readonly space: AddressSpace;
  /** The pool itself. */
  readonly pool: ClassicPool;
  private interval = TICK_MIN_MS;
  protected override detached = false;

  /** @internal use createClassicHeap / attachClassicHeap. */
  constructor(space: AddressSpace, pool: ClassicPool, profile: number) {
    super();
    this.space = space;
    this.pool = pool;
    this.profile = profile;
    this.handle = { kind: 'paddock-heap', version: HANDLE_VERSION, backend: CLASSIC_BACKEND, space: space.handle, profile };
    this.leaveWithThread();
  }

  malloc(size: number): number {
    if (this.detached) throw closedError();
    return this.pool.malloc(size);
  }
  realloc(ptr: number, size: number): number {
    if (this.detached) throw closedError();
    return this.pool.realloc(ptr, size);
  }
  free(ptr: number | HeapView, size?: number): void {
    if (typeof ptr !== 'number') ptr = this.viewPointer(ptr, 'free'); // a typed array: the block it starts (views.ts)
    if (this.detached) throw closedError();
    if (size !== undefined && ptr !== 0) {
      const usable = this.pool.usableSize(ptr);
      // Same class (powers of two up to 1 MiB) or, above, the same 4 KiB-rounded size.
      const small = usable <= 1 << 20;
      if ((size >>> 0) !== size || size > usable || (small ? usable > 32 && size <= usable >>> 1 : size <= Math.max(1 << 20, usable - 4096))) {
        throw wrongSize(ptr, size, usable);
      }
    }
    this.pool.free(ptr);
  }
  usableSize(ptr: number): number {
    if (this.detached) throw closedError();
    return this.pool.usableSize(ptr);
  }
  flush(): number {
    if (this.detached) throw closedError();
    this.pool.flush();
    return 0;
  }
  drain(): number {
    if (this.detached) throw closedError();
    this.pool.drain();
    return 0;
  }
  stats(): ClassicHeapStats {
    if (this.detached) throw closedError();
    const s = this.pool.stats();
    return {
      backend: CLASSIC_BACKEND,
      pageReturn: s.pageReturn,
      pageReturnAddon: addonOf(s.pageReturn),
      profile: this.profile,
      committedBytes: s.committedBytes,
      residentBytes: rss(),
      liveBytes: s.liveBytes,
      perClass: s.perClass.map((c) => ({ size: c.size, live: c.live, free: c.free })),
      nextTickMs: this.interval,
      largeFreeBytes: s.largeFreeBytes,
    };
  }
  check(): void {
    if (this.detached) throw closedError();
    this.pool.check();
  }
  tick(): number {
    if (this.detached) throw closedError();
    this.interval = this.pool.tick();
    return this.interval;
  }
  returnIdle(): void {
    if (this.detached) throw closedError();
    releaseSpareChunk(this);
    this.pool.returnIdle();
  }
  /** Before a wait: this agent's free lists go to the global lists, where other agents find them. */
  protected beforeWait(): void {
    this.pool.flush();
  }
  /** After a wait that timed out: the pool's idle return (which keeps its memory). */
  protected afterWait(timedOut: boolean): void {
    if (timedOut) {
      releaseSpareChunk(this);
      this.pool.returnIdle();
    }
  }
  /** Leaves the heap: this agent's free lists go back to the global stacks (its memory stays with the pool). */
  detach(): void {
    if (this.detached) return;
    releaseSpareChunk(this);
    this.forgetThreadExit();
    this.stopIdle();
    this.pool.detach();
    this.detached = true;
  }
  reap(_agentId: number): ReapReport & { stashReleased: number } {
    if (this.detached) throw closedError();
    throw new HeapError('UNSUPPORTED', 'the classic pool keeps agent state in JS memory: an agent that died cannot be reaped (use pool_arena)');
  }
}

/** Creates a heap with the classic pool backend. */
export function createClassicHeap(options: HeapOptions = {}, retain = false): ClassicBackedHeap {
  const { space, profile } = createHeapSpace(options);
  return withOptions(new ClassicBackedHeap(space, ClassicPool.create(space, { retain }), profile), options);
}

/** Attaches this agent to a classic-pool heap. */
export function attachClassicHeap(handle: HeapHandle, options: AttachOptions = {}): ClassicBackedHeap {
  const space = openHeapSpace(handle, CLASSIC_BACKEND, options);
  return withOptions(new ClassicBackedHeap(space, ClassicPool.open(space), validateProfile(handle.profile ?? DEFAULT_PROFILE)), options);
}
