// The two backends the demo compares, behind the few calls it needs: Paddock's arena allocator (the
// umbrella package's default build) and the classic pool it replaces, both through the allocator's `Heap`
// (the classic pool from the allocator's own classic bundle), so the messages go through one
// `@paddock/channel` on either.
import type { Worker } from 'node:worker_threads';
import { attachHeap, createHeap, type Heap, type HeapHandle } from '@paddock/allocator';

export type BackendName = 'pool_arena' | 'pool_classic';

export interface DemoHeap {
  /** The heap itself: what a channel is made in and opened with. */
  readonly heap: Heap;
  malloc(size: number): number;
  free(ptr: number): void;
  /** A bytes view that reaches everything committed so far. */
  bytes(): Uint8Array;
  /** Runs the backend's idle tick on this agent's event loop until {@link stopIdle}. */
  startIdle(): void;
  stopIdle(): void;
  /** Sends pending cross-agent frees home now. */
  flush(): void;
  detach(): void;
  committedBytes(): number;
  /**
   * Reaps `worker`'s agent when it exits without leaving the heap (terminated, crashed); with `releaseLive`
   * its live blocks go back too. Returns false where the backend cannot reap.
   */
  watch(worker: Worker, options?: { releaseLive?: boolean }): boolean;
}

export interface DemoHandle {
  readonly backend: BackendName;
  readonly heap: HeapHandle;
}

class HeapDemo implements DemoHeap {
  constructor(readonly heap: Heap) {}
  malloc(size: number): number {
    return this.heap.malloc(size);
  }
  free(ptr: number): void {
    this.heap.free(ptr);
  }
  bytes(): Uint8Array {
    return this.heap.u8;
  }
  startIdle(): void {
    this.heap.startIdle();
  }
  stopIdle(): void {
    this.heap.stopIdle();
  }
  flush(): void {
    this.heap.flush();
  }
  detach(): void {
    this.heap.detach();
  }
  committedBytes(): number {
    return this.heap.stats().committedBytes;
  }
  watch(worker: Worker, options?: { releaseLive?: boolean }): boolean {
    return this.heap.watch(worker, options);
  }
}

interface HeapModule {
  createHeap: typeof createHeap;
  attachHeap: typeof attachHeap;
}

/**
 * The allocator's classic bundle (`dist/pool-classic.js`, next to the default build): the classic pool behind
 * the same `Heap` (its `watch` returns false: it keeps each agent's state in that agent's memory).
 */
async function classicModule(): Promise<HeapModule> {
  return (await import(new URL('./pool-classic.js', import.meta.resolve('@paddock/allocator')).href)) as HeapModule;
}

async function moduleOf(backend: BackendName): Promise<HeapModule> {
  return backend === 'pool_arena' ? { createHeap, attachHeap } : classicModule();
}

/** Creates a heap of `backend` in this agent; returns it with the handle workers attach with. */
export async function createDemoHeap(backend: BackendName, maxBytes: number): Promise<{ heap: DemoHeap; handle: DemoHandle }> {
  const heap = (await moduleOf(backend)).createHeap({ maxBytes, pageReturn: 'auto' });
  return { heap: new HeapDemo(heap), handle: { backend, heap: heap.handle } };
}

/** Attaches this agent (a worker) to a demo heap. */
export async function attachDemoHeap(handle: DemoHandle): Promise<DemoHeap> {
  return new HeapDemo((await moduleOf(handle.backend)).attachHeap(handle.heap));
}
