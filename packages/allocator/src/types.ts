/**
 * What every backend of the umbrella package offers: the options, the handle and the `Heap` interface (its
 * stats are in stats.ts). The backend itself is chosen at build time (`pnpm build use=pool_classic`).
 */
import type { ReapReport } from '@paddock/arena';
import type { AddressSpace, AddressSpaceHandle, BackingKind, PageReturnMode } from '@paddock/platform';
import type { Scope } from './scope.js';
import type { HeapSnapshot } from './snapshot.js';
import type { HeapStats } from './stats.js';

/** Which background work an error reported to {@link Heap.onError} came from. */
export type BackgroundWork = 'idle tick' | 'reap';

/**
 * Receives an error of a heap object's background work (see {@link Heap.onError}); `during` says which. What it
 * throws is reported by the default warning instead.
 */
export type BackgroundErrorHandler = (error: unknown, during: BackgroundWork) => void;

/** Options for {@link attachHeap}. */
export interface AttachOptions {
  /** `'auto'` (default), `'native'` (require the page-return addon) or `'none'`. */
  pageReturn?: 'auto' | PageReturnMode;
  /** Sets {@link Heap.onError} of the heap object made: where errors of its background work go. */
  onError?: BackgroundErrorHandler;
  /**
   * Whether the heap object watches every Worker its thread creates from now on, pools' included (default true; Node,
   * Bun and Deno, through `process`'s `worker` event): when one exits for any reason, the agents its thread left in
   * the heap are reaped by this heap object (live blocks kept), as {@link Heap.watch} does, and until then `reap`
   * refuses them. `false` leaves the thread's workers to explicit `watch` calls and `reap`: for a heap object that
   * should never reap (a short-lived reader such as an inspector, a thread whose workers another thread's heap
   * object judges) or whose caller reaps by hand. A worker that never attaches costs one `exit` listener, dropped
   * when it exits. Browsers emit no such event: there `watch(worker)` is still needed.
   */
  watchWorkers?: boolean;
}

/** Options for {@link createHeap}. */
export interface HeapOptions extends AttachOptions {
  /** Upper bound of the heap in bytes (up to 4 GiB). Required unless `memory` is a SharedArrayBuffer. */
  maxBytes?: number;
  /** Memory/speed dial, 1 (return memory eagerly) to 10 (keep it); default 3. */
  profile?: number;
  /** Build the heap in an existing shared `WebAssembly.Memory` or `SharedArrayBuffer`. */
  memory?: WebAssembly.Memory | SharedArrayBuffer;
  /** `'growable'` (default), `'wasm'` or `'fixed'`, when Paddock creates the buffer. */
  backing?: BackingKind;
}

/** The idle tick's first delay, and its delay again after any allocation. */
export const TICK_MIN_MS = 10;
/** The idle tick's cap; reaching it runs the idle return. A bounded wait never blocks longer than this. */
export const TICK_MAX_MS = 500;

/** What a worker needs to attach to the heap: pass it in `workerData` or `postMessage`. */
export interface HeapHandle {
  readonly kind: 'paddock-heap';
  readonly version: number;
  readonly backend: string;
  readonly space: AddressSpaceHandle;
  /** The profile rung (the classic pool keeps it here; the arena keeps it in the heap header too). */
  readonly profile?: number;
}

/**
 * What {@link Heap.watch} takes: a `worker_threads` Worker (its `threadId` names the thread, its `'exit'`
 * event says when it is gone).
 */
export interface WatchableWorker {
  readonly threadId: number;
  once(event: 'exit', listener: (code: number) => void): unknown;
}

/** What {@link Heap.watch} takes in a browser: a Web Worker. */
export interface BrowserWorker {
  terminate(): void;
}

/** Options of {@link Heap.watch}. */
export interface WatchOptions {
  /**
   * Also release the live blocks of the dead worker's arenas (default false: another agent may still hold
   * and free them). Set it for a worker that shares nothing that outlives it.
   */
  releaseLive?: boolean;
}

/** One agent's handle on a shared heap, whatever the backend. */
export interface Heap {
  /** Send this to another agent and call `attachHeap` there. */
  readonly handle: HeapHandle;
  /** `'pool_arena'`, `'pool_classic'` or `'pool_global'`. */
  readonly backend: string;
  /** The profile rung this agent runs with. */
  readonly profile: number;
  /** The address space underneath. */
  readonly space: AddressSpace;
  /** This agent's id in the heap (what `reap` takes). */
  readonly agentId: number;
  /** The largest size served from arena units (or its equivalent); above it, an oversized mapping. */
  readonly largeMax: number;
  /**
   * Allocates a block of at least `size` bytes and returns its pointer: a byte offset into the views, never 0,
   * the block wholly inside the buffer. The memory is not zeroed.
   * @throws RangeError for a size that is not an integer from 0 to `maxBytes`.
   * @throws HeapError `OUT_OF_MEMORY` when the heap cannot serve the size: every backend, every size (a
   * class size, a large or an oversized block, one whose rounding or header would take more than the whole
   * heap), never a 0 pointer nor another error. The heap is left as it was and stays usable: frees, and
   * mallocs that fit, go on working.
   * @throws HeapError `DETACHED` once this heap object has left the heap.
   */
  malloc(size: number): number;
  /**
   * Allocates `count * size` bytes, zeroed, as {@link Heap.malloc} does.
   * @throws RangeError when `count` or `size` is not a non-negative integer, or `count * size` is above
   * `maxBytes`.
   * @throws HeapError `OUT_OF_MEMORY` as {@link Heap.malloc}: a total within `maxBytes` that the heap cannot serve.
   */
  calloc(count: number, size: number): number;
  /**
   * Resizes the block at `ptr`: `realloc(0, size)` is `malloc(size)`; a size the block already serves keeps
   * the pointer; otherwise the first `min(old, size)` bytes move to a new block and the old one is freed.
   * @throws RangeError for a size that is not an integer from 0 to `maxBytes`.
   * @throws HeapError `OUT_OF_MEMORY` as {@link Heap.malloc} when no new block can be had: the block at `ptr`
   * then stays live, where it was, its contents untouched (free it or keep using it).
   * @throws HeapError `BAD_POINTER`, `MISALIGNED` or `DOUBLE_FREE` for a pointer that names no live block
   * (nothing changes).
   */
  realloc(ptr: number, size: number): number;
  free(ptr: number, size?: number): void;
  usableSize(ptr: number): number;
  /** Sends pending cross-agent frees home. Returns how many objects went. */
  flush(): number;
  /** Reclaims frees other agents delivered. Returns how many objects came back. */
  drain(): number;
  /** Sends every block in this agent's thread cache home (0 where the backend has none). */
  flushCache(): number;
  /** Returns retained memory to the OS (0 where the backend retains nothing it can return). */
  purgeRetention(): number;
  readonly u8: Uint8Array;
  readonly i32: Int32Array;
  readonly u32: Uint32Array;
  readonly f64: Float64Array;
  readonly view: DataView;
  stats(): HeapStats;
  check(): void;
  /** A description of the whole heap, taken without stopping other agents (see snapshot.ts). */
  snapshot(): HeapSnapshot;
  tick(): number;
  /**
   * Errors of background work, which no caller of this heap object could catch: a visit of the idle tick
   * ({@link startIdle}) that throws (a `HeapError` CORRUPTION it found, say), and a reap that {@link watch} starts
   * when a worker exits (in a browser: when an agent's lock goes). They go to this handler, with what was running;
   * null (the default) warns on the console, once per error code per heap object. Either way the process goes on,
   * the tick is rescheduled (after the longest delay), and the heap object stays usable as far as the error
   * allows (a corruption stays where it was: `check()` names it). Also set by the `onError` option of
   * `createHeap` and `attachHeap`.
   */
  onError: BackgroundErrorHandler | null;
  startIdle(): void;
  stopIdle(): void;
  returnIdle(): void;
  wait(array: Int32Array, index: number, value: number, timeoutMs?: number): 'ok' | 'not-equal' | 'timed-out';
  waitAsync(array: Int32Array, index: number, value: number, timeoutMs?: number): Promise<'ok' | 'not-equal' | 'timed-out'>;
  detach(): void;
  /** Leaves the heap (the same as `detach`); again is harmless; any other use afterwards throws `DETACHED`. */
  close(): void;
  [Symbol.dispose](): void;
  readonly isDetached: boolean;
  /**
   * Reaps the agents of `worker` that did not leave when it exits; false where the backend cannot reap. A worker
   * this thread created is watched already (the `watchWorkers` option): call it for `releaseLive`, or in a browser.
   */
  watch(worker: WatchableWorker | BrowserWorker, options?: WatchOptions): boolean;
  /**
   * Recovers an agent that died without detaching. An agent it can tell is alive (its worker watched and not exited,
   * or its thread answering) is refused with `HeapError` AGENT_ALIVE; see the backend for when it cannot tell.
   */
  reap(agentId: number, options?: { releaseLive?: boolean }): ReapReport & { stashReleased: number };
  setProfile(rung: number): void;
  /** Opens a scope: bump allocation from chunks of this heap, all given back when it closes (see scope.ts). */
  scope(): Scope;
}
