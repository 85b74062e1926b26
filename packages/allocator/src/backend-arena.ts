// The pool_arena backend, as the umbrella exposes it (resolved for `#backend` when use=pool_arena).
export { ARENA_BACKEND as BACKEND, attachArenaHeap as attachBackendHeap, createArenaHeap as createBackendHeap } from './heap.js';
