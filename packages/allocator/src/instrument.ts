/**
 * The instrumentation build flags, backend-neutral: `use=pooltrack` records every allocation and free of
 * this agent (exported as JSON for replay), `use=checked` keeps shadow state in a side table shared by all
 * agents (one bit per 32 bytes of the heap) and catches double frees, frees of pointers the heap never
 * handed out, and writes to freed blocks (a freed block is filled with 0xDE and checked when handed out
 * again). A closed scope's chunks are poisoned and quarantined (scope-quarantine.ts): a pointer from one is
 * refused with `SCOPE_RELEASED`. Both wrap whichever backend was built, so each works fully with every backend.
 */
import { HeapError, formatAddress } from '@paddock/platform';
import { Scope } from './scope.js';
import { SCOPE_RELEASED_STATE, ScopeQuarantine, scopeReleasedError } from './scope-quarantine.js';
import type { Heap, HeapHandle } from './types.js';
import type { HeapView } from './views.js';

/** One record of the allocation trace. */
export type TraceRecord = { op: 'malloc' | 'calloc' | 'realloc' | 'free'; ptr: number; size: number; from?: number; t: number };

const POISON = 0xde;
/** The first bytes of a freed block belong to the allocator (free-list link, freed mark): not checked. */
const OWNED_BYTES = 16;

/** A heap with the `pooltrack` trace. */
export interface Traced {
  /** This agent's trace so far, as JSON (an array of records in order). */
  trace(): string;
}

/** Wraps `heap` so that every allocation and free is recorded. */
export function withTrace<H extends Heap>(heap: H): H & Traced {
  const records: TraceRecord[] = [];
  const { malloc, calloc, realloc } = heap;
  const free = heap.free as (ptr: number, size?: number) => void;
  const t0 = performance.now();
  const now = () => Math.round((performance.now() - t0) * 1000) / 1000;
  // A wrapper over the heap, not the heap itself: the backend's own internal calls (calloc's malloc,
  // realloc's free) stay unrecorded.
  return Object.assign(Object.create(heap) as H, {
    malloc(size: number): number {
      const ptr = malloc.call(heap, size);
      records.push({ op: 'malloc', ptr, size, t: now() });
      return ptr;
    },
    calloc(count: number, size: number): number {
      const ptr = calloc.call(heap, count, size);
      records.push({ op: 'calloc', ptr, size: count * size, t: now() });
      return ptr;
    },
    realloc(ptr: number, size: number): number {
      const moved = realloc.call(heap, ptr, size);
      records.push({ op: 'realloc', ptr: moved, size, from: ptr, t: now() });
      return moved;
    },
    free(ptr: number | HeapView, size?: number): void {
      if (typeof ptr !== 'number') ptr = heap.pointerOf(ptr); // a typed array: the block it starts
      free.call(heap, ptr, size);
      if (ptr !== 0) records.push({ op: 'free', ptr, size: size ?? 0, t: now() });
    },
    trace(): string {
      return JSON.stringify(records);
    },
  });
}

/** The shadow table of `use=checked`: two bits per 32 bytes (live, poisoned), shared through the handle. */
export function shadowFor(maxBytes: number): SharedArrayBuffer {
  return new SharedArrayBuffer(Math.ceil(maxBytes / 32 / 16) * 4);
}

/** Wraps `heap` with shadow checks over `shadow` (made by {@link shadowFor}, shared by all agents). */
export function withChecks<H extends Heap>(heap: H, shadow: SharedArrayBuffer): H {
  const bits = new Int32Array(shadow);
  const { malloc, calloc, realloc, detach } = heap;
  const free = heap.free as (ptr: number, size?: number) => void;
  const slot = (p: number) => p >>> 5;
  const mark = (p: number, live: boolean, poisoned: boolean) => {
    const i = slot(p);
    const w = i >>> 4;
    const shift = (i & 15) * 2;
    const v = (live ? 1 : 0) | (poisoned ? 2 : 0);
    for (;;) {
      const old = Atomics.load(bits, w);
      const next = (old & ~(3 << shift)) | (v << shift);
      if (Atomics.compareExchange(bits, w, old, next) === old) return old >>> shift & 3;
    }
  };
  const state = (p: number) => (Atomics.load(bits, slot(p) >>> 4) >>> ((slot(p) & 15) * 2)) & 3;
  // The slots from the one holding `from` (inside the chunk, past its header's slot) to the last one wholly
  // before `to`: a slot shared with the next block keeps that block's state.
  const quarantine = new ScopeQuarantine((from: number, to: number, v: number) => {
    for (let p = from - (from % 32); p + 32 <= to; p += 32) mark(p, (v & 1) !== 0, (v & 2) !== 0);
  });
  const handedOut = (p: number, size: number): number => {
    if (p === 0) return p;
    const was = state(p);
    if ((was & 1) !== 0) throw new HeapError('CORRUPTION', `checked: ${formatAddress(p)} was handed out while live`, p);
    if ((was & 2) !== 0) {
      const u8 = heap.u8;
      const n = Math.min(heap.usableSize(p), 4096);
      for (let o = OWNED_BYTES; o < n; o++) {
        if (u8[p + o] !== POISON) throw new HeapError('CORRUPTION', `checked: freed block ${formatAddress(p)} was written at +${o} after its free`, p);
      }
    }
    mark(p, true, false);
    void size;
    return p;
  };
  const release = (p: number) => {
    const was = state(p);
    if (was === SCOPE_RELEASED_STATE) throw scopeReleasedError(p);
    if ((was & 1) === 0) {
      throw new HeapError((was & 2) !== 0 ? 'DOUBLE_FREE' : 'BAD_POINTER', `checked: ${formatAddress(p)} is not a live block of this heap`, p);
    }
    const n = Math.min(heap.usableSize(p), 4096);
    const u8 = heap.u8;
    u8.fill(POISON, p, p + n);
    mark(p, false, true);
  };
  return Object.assign(Object.create(heap) as H, {
    malloc(size: number): number {
      return handedOut(malloc.call(heap, size), size);
    },
    calloc(count: number, size: number): number {
      const p = calloc.call(heap, count, size);
      // calloc zeroed it: it was poisoned, but the zeroes are the allocator's own writes.
      mark(p, true, false);
      return p;
    },
    realloc(ptr: number, size: number): number {
      if (ptr === 0) return handedOut(realloc.call(heap, 0, size), size);
      if (state(ptr) === SCOPE_RELEASED_STATE) throw scopeReleasedError(ptr);
      if ((state(ptr) & 1) === 0) throw new HeapError('BAD_POINTER', `checked: realloc of ${formatAddress(ptr)}, not a live block`, ptr);
      const moved = realloc.call(heap, ptr, size);
      if (moved !== ptr) {
        mark(ptr, false, false);
        mark(moved, true, false);
      }
      return moved;
    },
    free(ptr: number | HeapView, size?: number): void {
      if (typeof ptr !== 'number') ptr = heap.pointerOf(ptr); // a typed array: the block it starts
      if (ptr === 0) return;
      release(ptr);
      free.call(heap, ptr, size);
    },
    scope(this: H): Scope {
      if (heap.isDetached) return heap.scope(); // refused as closed
      return new Scope(this, quarantine.release);
    },
    detach(this: H): void {
      if (!heap.isDetached) quarantine.flush(this);
      detach.call(heap);
    },
  });
}

/** Handle field that carries the shadow table to other agents. */
export type CheckedHandle = HeapHandle & { shadow?: SharedArrayBuffer };
