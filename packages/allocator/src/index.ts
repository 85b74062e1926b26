/**
 * @packageDocumentation
 * `@paddock/allocator`: Paddock's public API. One heap lives in a shared buffer; every agent (the main
 * thread, each worker) attaches to it and calls `malloc`/`free`/`realloc` from anywhere. A block freed by
 * an agent that did not allocate it goes home in a batch, without locks; memory an idle agent no longer
 * needs goes back to the operating system.
 *
 * The backend is chosen when Paddock is built: `pnpm build` gives `pool_arena` (the default),
 * `pnpm build use=pool_classic` the classic pool, `pnpm build use=pool_global` the lock-free global pool. A bundler or Node can also pick one without a rebuild
 * through export conditions (`node --conditions=paddock-pool-classic`).
 *
 * ```ts
 * import { createHeap, attachHeap } from '@paddock/allocator';
 * const heap = createHeap({ maxBytes: 1 << 30 });
 * new Worker(url, { workerData: heap.handle });   // in the worker: const h = attachHeap(workerData)
 * const p = heap.malloc(64);
 * heap.u8.set(bytes, p);
 * heap.free(p);
 * ```
 */
import { BACKEND, attachBackendHeap, createBackendHeap } from '#backend';
import { shadowFor, withChecks, withTrace, type CheckedHandle, type Traced } from './instrument.js';
import { anchorShapes } from './shape-anchor.js';
import type { AttachOptions, Heap, HeapHandle, HeapOptions } from './types.js';

/** Build flags, replaced at build time (`use=pooltrack`, `use=checked`). */
declare const __PADDOCK_TRACK__: boolean | undefined;
declare const __PADDOCK_CHECKED__: boolean | undefined;
const TRACK = typeof __PADDOCK_TRACK__ !== 'undefined' && __PADDOCK_TRACK__;
const CHECKED = typeof __PADDOCK_CHECKED__ !== 'undefined' && __PADDOCK_CHECKED__;

/** The backend this build of Paddock uses: `'pool_arena'`, `'pool_classic'` or `'pool_global'`. */
export { BACKEND };
/** The instrumentation this build carries. */
export const INSTRUMENTATION: readonly string[] = [...(TRACK ? ['pooltrack'] : []), ...(CHECKED ? ['checked'] : [])];

function instrument(heap: Heap, shadow: SharedArrayBuffer | undefined): Heap & Partial<Traced> {
  let h: Heap & Partial<Traced> = heap;
  if (CHECKED && shadow) h = withChecks(h, shadow);
  if (TRACK) h = withTrace(h);
  return h;
}

/** Creates a heap (in this agent, which becomes its first user). */
export function createHeap(options: HeapOptions = {}): Heap & Partial<Traced> {
  anchorShapes(); // first: its classes are the ones every heap then shares (see shape-anchor.ts)
  const heap = createBackendHeap(options);
  if (!CHECKED) return instrument(heap, undefined);
  const shadow = shadowFor(heap.space.maxBytes);
  (heap as { handle: CheckedHandle }).handle = { ...heap.handle, shadow };
  return instrument(heap, shadow);
}

/**
 * Attaches this agent to a heap another agent created, from its handle.
 * @throws HeapError BAD_HANDLE for anything that is not a live Paddock heap handle of this backend.
 */
export function attachHeap(handle: HeapHandle, options: AttachOptions = {}): Heap & Partial<Traced> {
  const heap = attachBackendHeap(handle, options);
  return instrument(heap, (handle as CheckedHandle).shadow);
}

export { STRING_HEADER_BYTES } from './strings.js';
export type { HeapView, HeapViewConstructor, ViewOf } from './views.js';
export { SHAPE_ANCHOR_BYTES, hasShapeAnchor } from './shape-anchor.js';
export { SCOPE_ALIGN, SCOPE_FIRST_CHUNK, SCOPE_MAX_CHUNK, type Scope } from './scope.js';
export {
  TICK_MAX_MS,
  TICK_MIN_MS,
  type AttachOptions,
  type BackgroundErrorHandler,
  type BackgroundWork,
  type Heap,
  type HeapHandle,
  type HeapOptions,
  type BrowserWorker,
  type WatchOptions,
  type WatchableWorker,
} from './types.js';
export type { ArenaHeapStats, ClassStats, ClassicHeapStats, GlobalHeapStats, HeapStats, HeapStatsCore } from './stats.js';
export type { TraceRecord, Traced } from './instrument.js';
export { SNAPSHOT_VERSION, type HeapSnapshot, type SnapshotClass } from './snapshot.js';
export {
  UNIT_CONTINUATION,
  UNIT_DECOMMITTED,
  UNIT_DIRTY,
  UNIT_EMPTY_SLAB,
  UNIT_LARGE,
  UNIT_PARKED,
  UNIT_QUARANTINED,
  UNIT_RETAINED,
  UNIT_SLAB,
  UNIT_STATE_NAMES,
  type AgentPicture,
  type ArenaPicture,
  type ArenaSnapshot,
  type ClassPicture,
  type LargePicture,
  type OwnerPicture,
} from '@paddock/arena';
export type { MappingPicture } from '@paddock/large';
export { HeapError, type HeapErrorCode } from '@paddock/platform';
