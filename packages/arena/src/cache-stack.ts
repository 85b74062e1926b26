/**
 * The thread cache's stacks, as words of the agent area (agent-layout.ts): one stack of freed blocks per class,
 * with its count and depth. The heap's malloc and free use these two functions inline (their cache fast paths);
 * a drain that goes to the cache (an allocation's, a woken wait's, a busy agent's tick) pushes the blocks other
 * agents sent home onto their classes' stacks with the same push (drain.ts); `@paddock/thread-cache` keeps the
 * rest of the cache (depths, flush, stats). Blocks on a stack stay live in their slabs and carry the freed mark.
 */
import { CACHE_STRIDE } from './agent-layout.js';
import { FREED_MARK } from './layout.js';

/**
 * Takes a block of class `cls` from the cache whose counts start at word `countWord` and stacks at `stackWord` of
 * `u32`, or returns 0 when its stack is empty; clears the block's freed mark. A plain function over a view, so the
 * heap's malloc inlines it whole.
 */
export function popCached(u32: Uint32Array, countWord: number, stackWord: number, cls: number): number {
  const n = u32[countWord + cls]! - 1;
  if (n < 0) return 0;
  u32[countWord + cls] = n;
  const p = u32[stackWord + cls * CACHE_STRIDE + n]!;
  u32[(p >>> 2) + 1] = 0;
  return p;
}

/**
 * Puts the checked freed block `p` of class `cls` on its stack if the class is below its depth (words as for
 * {@link popCached}, depths at `depthWord`) and writes its freed mark; returns whether it did.
 */
export function pushCached(u32: Uint32Array, countWord: number, depthWord: number, stackWord: number, cls: number, p: number): boolean {
  const n = u32[countWord + cls]!;
  if (n >= u32[depthWord + cls]!) return false;
  u32[stackWord + cls * CACHE_STRIDE + n] = p;
  u32[countWord + cls] = n + 1;
  u32[(p >>> 2) + 1] = FREED_MARK ^ p; // the freed mark (see ArenaHeap.markFreed)
  return true;
}
