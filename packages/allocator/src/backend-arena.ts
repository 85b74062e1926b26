// The pool_arena backend, as the umbrella exposes it (resolved for `#backend` under the condition
// paddock-pool-arena, and by default: package.json "imports").
export { ARENA_BACKEND as BACKEND, attachArenaHeap as attachBackendHeap, createArenaHeap as createBackendHeap } from './heap.js';
