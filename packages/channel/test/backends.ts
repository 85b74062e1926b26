// The three backends of the allocator, for tests: the default build (`@paddock/allocator`, the arena unless built
// with use=) and each backend's own bundle, loaded by its file (what the `paddock-pool-*` export conditions pick).
// A worker of a test runs under the same backend's condition (see `conditionsOf`).
import type { Heap, HeapOptions } from '@paddock/allocator';

export const BACKENDS = ['pool_arena', 'pool_classic', 'pool_global'] as const;
export type Backend = (typeof BACKENDS)[number];

/** Creates a heap of `backend` in this agent. */
export async function heapOf(backend: Backend, options: HeapOptions): Promise<Heap> {
  const bundle = new URL(`../../allocator/dist/${backend.replace('_', '-')}.js`, import.meta.url).href;
  const mod = (await import(/* @vite-ignore */ bundle)) as { createHeap(o: HeapOptions): Heap };
  return mod.createHeap(options);
}

/** The Node options a worker needs to load `backend` from `@paddock/allocator`. */
export function conditionsOf(backend: Backend): string[] {
  return [`--conditions=paddock-${backend.replace('_', '-')}`];
}
