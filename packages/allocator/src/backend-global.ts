// The pool_global backend, as the umbrella exposes it (resolved for `#backend` under the condition
// paddock-pool-global, package.json "imports").
export { GLOBAL_BACKEND as BACKEND, attachGlobalHeap as attachBackendHeap, createGlobalHeap as createBackendHeap } from './global-heap.js';
