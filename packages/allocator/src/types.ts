/**
 * What every backend of the umbrella package offers: the options, the handle and the `Heap` interface (its
 * stats are in stats.ts). The backend itself is chosen at build time (`pnpm build use=pool_classic`).
 */
import type { ReapReport } from '@paddock/arena';
import type { AddressSpace, AddressSpaceHandle, BackingKind, PageReturnMode } from '@paddock/platform';
import type { Scope } from './scope.js';
import type { HeapSnapshot } from './snapshot.js';
import type { HeapStats } from './stats.js';
import type { HeapView, HeapViewConstructor, ViewOf } from './views.js';

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
  /** `'growable'`, `'wasm'` or `'fixed'`, when Paddock creates the buffer; default `'growable'`, and `'wasm'` under Bun, whose engine reads a growable SharedArrayBuffer slower. */
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
  /**
   * Frees the block at `ptr`; `free(0)` does nothing. With `size` (a sized free) the size must name the block's class.
   * @throws HeapError `BAD_POINTER`, `MISALIGNED`, `DOUBLE_FREE` or `WRONG_SIZE` (nothing changes).
   */
  free(ptr: number, size?: number): void;
  /**
   * Frees the block `view` starts (a view from {@link Heap.mallocAs}, {@link Heap.viewAs}, or any typed array whose
   * `byteOffset` is a block's pointer), checked before anything changes: its buffer must be this heap's memory (the
   * current buffer, an older buffer of a grown wasm memory, or the heap's buffer as another agent sent it) and its
   * offset a live block's start. Only the start is looked at: a view shorter than the block frees the whole block.
   * @throws TypeError when `view` is not a typed array (or DataView).
   * @throws HeapError `BAD_POINTER` for a view of another buffer or at offset 0; the errors of `free(ptr)` for an
   * offset that starts no live block (a subarray inside a block, a block freed already).
   */
  free(view: HeapView): void;
  usableSize(ptr: number): number;
  /**
   * Allocates a block for `length` elements of `ctor` (`Float64Array`, `BigInt64Array`, any integer or float typed
   * array) and returns a view of them: `malloc(length * ctor.BYTES_PER_ELEMENT)` and one typed-array construction.
   * Every block starts at an address aligned to 32 bytes or more, so every element type is aligned. The contents are
   * not zeroed. Length 0 gives a minimal block (as `malloc(0)`) and an empty view whose `byteOffset` is its pointer:
   * free it with `free(view)` like any other. The view is fixed-length and stays valid when the buffer grows (see
   * docs/design/allocator.md); free it with `free(view)` or `free(view.byteOffset)`.
   * @throws TypeError when `ctor` is not a typed array constructor.
   * @throws RangeError when `length` is not a non-negative integer or its bytes are above `maxBytes`.
   * @throws HeapError `OUT_OF_MEMORY` as {@link Heap.malloc}; `DETACHED` once closed.
   */
  mallocAs<C extends HeapViewConstructor>(ctor: C, length: number): ViewOf<C>;
  /**
   * {@link Heap.mallocAs} with the elements zeroed (as {@link Heap.calloc}).
   * @throws TypeError, RangeError and HeapError as {@link Heap.mallocAs}.
   */
  callocAs<C extends HeapViewConstructor>(ctor: C, length: number): ViewOf<C>;
  /**
   * Resizes the block `view` starts to `length` elements of the view's type, as {@link Heap.realloc}: the elements up
   * to the smaller length are kept, and a new view (of the same type) is returned; `view` must not be used after,
   * unless the call threw.
   * @throws TypeError when `view` is not a typed array.
   * @throws RangeError for a bad `length`, as {@link Heap.mallocAs}.
   * @throws HeapError `BAD_POINTER` as {@link Heap.free} for a view that starts no live block of this heap;
   * `OUT_OF_MEMORY` as {@link Heap.realloc} (the old block then stays live, where it was).
   */
  reallocAs<V extends HeapView>(view: V, length: number): V;
  /**
   * A view of `length` elements of `ctor` over the block at `ptr`: a pointer received from another agent, say. The
   * pointer must be a live block's start (the backend's own pointer check, `usableSize`), aligned for `ctor`, and the
   * view must fit in the block's usable size.
   * @throws TypeError when `ctor` is not a typed array constructor.
   * @throws RangeError when `length` is not a non-negative integer, or the view would run past the block's usable size.
   * @throws HeapError `MISALIGNED` for a `ptr` that is not a multiple of the element size; `BAD_POINTER` for one that
   * is not a live block's start (its message says what the backend found); `DETACHED` once closed.
   */
  viewAs<C extends HeapViewConstructor>(ctor: C, ptr: number, length: number): ViewOf<C>;
  /**
   * The pointer of the block `view` starts (its `byteOffset`), checked as {@link Heap.free} checks a view, and the
   * block live: what to send another agent, which makes its own view with {@link Heap.viewAs}.
   * @throws TypeError when `view` is not a typed array; HeapError `BAD_POINTER` as {@link Heap.free} and
   * {@link Heap.viewAs}.
   */
  pointerOf(view: HeapView): number;
  /**
   * Allocates a block holding `s` as a string record: its UTF-8 byte length (a Uint32) at the pointer, the UTF-8 bytes
   * right after (exactly `TextEncoder`'s: a lone surrogate becomes U+FFFD). Returns the pointer; read it back with
   * {@link Heap.readString}, free it with `free`. The empty string takes a 4-byte record.
   * @throws TypeError when `s` is not a string.
   * @throws HeapError `OUT_OF_MEMORY` as {@link Heap.malloc}; `DETACHED` once closed.
   */
  mallocString(s: string): number;
  /**
   * Writes `s` as a string record (as {@link Heap.mallocString} lays it out) at `ptr`, into memory the caller holds
   * (inside a block of its own, say), within `capacity` bytes; returns the bytes written (4 + the UTF-8 length).
   * Nothing is written when it throws.
   * @throws TypeError when `s` is not a string.
   * @throws RangeError when `capacity` is not a non-negative integer, or the record needs more than `capacity`.
   * @throws HeapError `BAD_POINTER` unless `ptr` is 4-aligned, past the space header, and `capacity` bytes from it
   * lie within the heap's memory; `DETACHED` once closed.
   */
  writeString(s: string, ptr: number, capacity: number): number;
  /**
   * The string of the record at `ptr` (from {@link Heap.mallocString} or {@link Heap.writeString}), decoded as
   * `TextDecoder` does (bytes that are not UTF-8 become U+FFFD). The pointer is checked to lie in the heap, not to be
   * a live block: a record in a block freed since reads whatever is there now.
   * @throws HeapError `BAD_POINTER` as {@link Heap.writeString}; `CORRUPTION` when the length there runs past the
   * heap's memory (no record starts there); `DETACHED` once closed.
   */
  readString(ptr: number): string;
  /**
   * The UTF-8 bytes of `s` (what `TextEncoder` makes of it); a record takes 4 more.
   * @throws TypeError when `s` is not a string.
   */
  stringBytes(s: string): number;
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
