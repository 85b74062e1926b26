/**
 * The classic pool behind the same `Heap` interface as the arena, so a program switches backends with a
 * build flag and nothing else. What the classic pool does not have (owner adoption, reaping, a retention
 * ledger, a thread cache of foreign blocks) is reported as such: reap throws `UNSUPPORTED`, watch returns
 * false (a worker stopped from outside strands what it held), the rest count zero. Its idle return keeps its memory: that is the documented difference.
 */
import type { ReapReport } from '@paddock/arena';
import {
  HeapError,
  createAddressSpace,
  describeValue,
  openAddressSpace,
  rss,
  type AddressSpace,
  type PageReturnMode,
} from '@paddock/platform';
import { ClassicPool, TICK_MAX_MS as CLASSIC_TICK_MAX_MS } from '@paddock/pool-classic';
import { DEFAULT_PROFILE, validateProfile } from '@paddock/profile';
import { HANDLE_VERSION, HeapViews, checkHandle, closedError } from './views.js';
import { TICK_MAX_MS, TICK_MIN_MS, type Heap, type HeapHandle, type HeapOptions, type HeapStats } from './types.js';

/** This backend's name. */
export const CLASSIC_BACKEND = 'pool_classic';

export class ClassicBackedHeap extends HeapViews implements Heap {
  readonly handle: HeapHandle;
  readonly backend = CLASSIC_BACKEND;
  profile: number;
  readonly space: AddressSpace;
  /** The pool itself. */
  readonly pool: ClassicPool;
  private interval = TICK_MIN_MS;
  private detached = false;

  /** @internal use createClassicHeap / attachClassicHeap. */
  constructor(space: AddressSpace, pool: ClassicPool, profile: number) {
    super();
    this.space = space;
    this.pool = pool;
    this.profile = profile;
    this.handle = { kind: 'paddock-heap', version: HANDLE_VERSION, backend: CLASSIC_BACKEND, space: space.handle, profile };
    this.leaveWithThread();
  }

  protected get canReap(): boolean {
    return false;
  }

  /** The classic pool serves every size above 1 MiB from its large lists. */
  get largeMax(): number {
    return this.space.maxBytes;
  }
  malloc(size: number): number {
    if (this.detached) throw closedError();
    return this.pool.malloc(size);
  }
  calloc(count: number, size: number): number {
    if (this.detached) throw closedError();
    return this.pool.calloc(count, size);
  }
  realloc(ptr: number, size: number): number {
    if (this.detached) throw closedError();
    return this.pool.realloc(ptr, size);
  }
  free(ptr: number, size?: number): void {
    if (this.detached) throw closedError();
    if (size !== undefined && ptr !== 0) {
      const usable = this.pool.usableSize(ptr);
      // Same class (powers of two up to 1 MiB) or, above, the same 4 KiB-rounded size.
      const small = usable <= 1 << 20;
      if ((size >>> 0) !== size || size > usable || (small ? usable > 32 && size <= usable >>> 1 : size <= Math.max(1 << 20, usable - 4096))) {
        throw new HeapError('WRONG_SIZE', `free of ${ptr} with size ${describeValue(size)}: the block holds ${usable} bytes`, ptr);
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
  flushCache(): number {
    if (this.detached) throw closedError();
    return 0;
  }
  purgeRetention(): number {
    if (this.detached) throw closedError();
    return 0;
  }
  stats(): HeapStats {
    if (this.detached) throw closedError();
    const s = this.pool.stats();
    return {
      backend: CLASSIC_BACKEND,
      pageReturn: s.pageReturn as PageReturnMode,
      profile: this.profile,
      committedBytes: s.committedBytes,
      residentBytes: rss(),
      liveBytes: s.liveBytes,
      ownerSlot: 0,
      arenas: 0,
      pendingChainObjects: 0,
      perClass: s.perClass.map((c) => ({ size: c.size, slabs: 0, live: c.live, free: c.free })),
      cacheBytes: 0,
      cacheBlocks: new Array<number>(16).fill(0),
      largeObjects: 0,
      largeBytes: 0,
      retention: { budgetBytes: 0, ledgerBytes: 0, retainedBytes: s.largeFreeBytes, stashEntries: 0, stashBytes: 0, mappingsAllocated: 0 },
      quarantinedBytes: 0,
      adoptedSlots: [],
      nextTickMs: this.interval,
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
    this.pool.returnIdle();
  }
  wait(array: Int32Array, index: number, value: number, timeoutMs: number = TICK_MAX_MS): 'ok' | 'not-equal' | 'timed-out' {
    if (this.detached) throw closedError();
    if (!(array instanceof Int32Array)) throw new TypeError('wait needs an Int32Array over a SharedArrayBuffer');
    this.pool.flush();
    const result = Atomics.wait(array, index, value, Math.min(timeoutMs, CLASSIC_TICK_MAX_MS));
    if (result === 'timed-out') this.pool.returnIdle();
    return result;
  }
  /** Leaves the heap: this agent's free lists go back to the global stacks (its memory stays with the pool). */
  detach(): void {
    if (this.detached) return;
    this.forgetThreadExit();
    this.stopIdle();
    this.pool.detach();
    this.detached = true;
  }
  /** The classic pool keeps its agent state in JS memory and cannot be reaped: hand back what it can. */
  protected threadCrashed(): void {
    this.detach();
  }
  protected reapThread(): number {
    return 0;
  }
  protected watchByLocks(): boolean {
    return false;
  }
  get isDetached(): boolean {
    return this.detached;
  }
  reap(_agentId: number): ReapReport & { stashReleased: number } {
    if (this.detached) throw closedError();
    throw new HeapError('UNSUPPORTED', 'the classic pool keeps agent state in JS memory: an agent that died cannot be reaped (use pool_arena)');
  }
  setProfile(rung: number): void {
    if (this.detached) throw closedError();
    this.profile = validateProfile(rung);
    (this.handle as { profile?: number }).profile = this.profile;
  }
}

/** Creates a heap with the classic pool backend. */
export function createClassicHeap(options: HeapOptions = {}, retain = false): ClassicBackedHeap {
  if (options === null || typeof options !== 'object') throw new TypeError('createHeap options must be an object');
  const profile = validateProfile(options.profile ?? DEFAULT_PROFILE);
  const space = createAddressSpace({ maxBytes: options.maxBytes, memory: options.memory, backing: options.backing, pageReturn: options.pageReturn });
  return new ClassicBackedHeap(space, ClassicPool.create(space, { retain }), profile);
}

/** Attaches this agent to a classic-pool heap. */
export function attachClassicHeap(handle: HeapHandle, options: { pageReturn?: 'auto' | PageReturnMode } = {}): ClassicBackedHeap {
  checkHandle(handle, CLASSIC_BACKEND);
  const space = openAddressSpace(handle.space, options);
  return new ClassicBackedHeap(space, ClassicPool.open(space), validateProfile(handle.profile ?? DEFAULT_PROFILE));
}
