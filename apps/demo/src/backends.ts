// The two backends the demo compares, behind the few calls it needs: Paddock's arena allocator (the
// umbrella package) and the classic pool it replaces (@paddock/pool-classic).
import type { Worker } from 'node:worker_threads';
import { attachHeap, createHeap, type Heap, type HeapHandle } from '@paddock/allocator';
import { createAddressSpace, openAddressSpace, type AddressSpace, type AddressSpaceHandle } from '@paddock/platform';
import { ClassicPool } from '@paddock/pool-classic';

export type BackendName = 'pool_arena' | 'pool_classic';

export interface DemoHeap {
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

export type DemoHandle = { backend: 'pool_arena'; heap: HeapHandle } | { backend: 'pool_classic'; space: AddressSpaceHandle };

class ArenaDemo implements DemoHeap {
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

class ClassicDemo implements DemoHeap {
  private timer: ReturnType<typeof setTimeout> | null = null;
  constructor(readonly space: AddressSpace, readonly pool: ClassicPool) {}
  malloc(size: number): number {
    return this.pool.malloc(size);
  }
  free(ptr: number): void {
    this.pool.free(ptr);
  }
  bytes(): Uint8Array {
    this.space.refresh();
    return this.space.u8;
  }
  startIdle(): void {
    const visit = () => {
      this.timer = setTimeout(visit, this.pool.tick());
      this.timer.unref();
    };
    this.timer = setTimeout(visit, 10);
    this.timer.unref();
  }
  stopIdle(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
  flush(): void {
    this.pool.flush();
  }
  detach(): void {
    this.pool.detach();
  }
  committedBytes(): number {
    return this.pool.stats().committedBytes;
  }
  /** The classic pool keeps each agent's state in that agent's JS memory: a worker that died cannot be reaped. */
  watch(): boolean {
    return false;
  }
}

/** Creates a heap of `backend` in this agent; returns it with the handle workers attach with. */
export function createDemoHeap(backend: BackendName, maxBytes: number): { heap: DemoHeap; handle: DemoHandle } {
  if (backend === 'pool_arena') {
    const heap = createHeap({ maxBytes, pageReturn: 'auto' });
    return { heap: new ArenaDemo(heap), handle: { backend, heap: heap.handle } };
  }
  const space = createAddressSpace({ maxBytes });
  return { heap: new ClassicDemo(space, ClassicPool.create(space)), handle: { backend, space: space.handle } };
}

/** Attaches this agent (a worker) to a demo heap. */
export function attachDemoHeap(handle: DemoHandle): DemoHeap {
  if (handle.backend === 'pool_arena') return new ArenaDemo(attachHeap(handle.heap));
  const space = openAddressSpace(handle.space);
  return new ClassicDemo(space, ClassicPool.open(space));
}
