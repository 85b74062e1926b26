/**
 * @packageDocumentation
 * `@paddock/allocator`: Paddock's public API. One heap lives in a shared buffer; every agent (the main
 * thread, each worker) attaches to it and calls `malloc`/`free`/`realloc` from anywhere. A block freed by
 * an agent that did not allocate it goes home in a batch, without locks.
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
export { BACKEND, Heap, TICK_MAX_MS, TICK_MIN_MS, attachHeap, createHeap, type HeapHandle, type HeapOptions, type HeapStats } from './heap.js';
export { HeapError, type HeapErrorCode } from '@paddock/platform';
