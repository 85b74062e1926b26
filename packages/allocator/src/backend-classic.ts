// The pool_classic backend, as the umbrella exposes it (resolved for `#backend` under the condition
// paddock-pool-classic, package.json "imports").
import { attachClassicHeap, createClassicHeap, type ClassicBackedHeap } from './classic-heap.js';
import type { AttachOptions, HeapHandle, HeapOptions } from './types.js';

export { CLASSIC_BACKEND as BACKEND } from './classic-heap.js';

/** `pool_retain` (a build flag): freed large blocks keep their pages. Replaced at build time. */
declare const __PADDOCK_RETAIN__: boolean | undefined;
const RETAIN = typeof __PADDOCK_RETAIN__ !== 'undefined' && __PADDOCK_RETAIN__;

export function createBackendHeap(options: HeapOptions = {}): ClassicBackedHeap {
  return createClassicHeap(options, RETAIN);
}

export function attachBackendHeap(handle: HeapHandle, options: AttachOptions = {}): ClassicBackedHeap {
  return attachClassicHeap(handle, options);
}
