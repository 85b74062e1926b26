/**
 * The peers besides the floor: @thi.ng/malloc, the most used JavaScript allocator, and Paddock itself.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MemPool } from '@thi.ng/malloc';
import type { Adapter, Callee } from './adapter.js';

/**
 * @thi.ng/malloc's `MemPool` over a plain ArrayBuffer, default options (align 8, split and compact
 * on). Each block has an 8-byte header (size, next); `free` finds the block by walking the list of
 * used blocks, inserts it into an address-sorted free list and then walks that list to merge
 * neighbours, and `malloc` is first fit over the free list: its cost grows with the live count.
 */
export class ThingAdapter implements Adapter {
  readonly name = 'thi.ng';
  private pool = new MemPool({ size: 4096 });

  setup(maxBytes: number): void {
    this.pool = new MemPool({ buf: new ArrayBuffer(maxBytes) });
  }

  malloc(size: number): number {
    return this.pool.malloc(size);
  }

  free(ptr: number, _size: number): void {
    this.pool.free(ptr);
  }

  teardown(): void {
    this.pool = new MemPool({ size: 4096 });
  }

  bytes(): Uint8Array | null {
    return new Uint8Array(this.pool.buf);
  }

  callee(): Callee {
    return this.pool;
  }
}

/** What the bench uses of `@paddock/allocator`. */
export interface PaddockHeap {
  malloc(size: number): number;
  free(ptr: number): void;
  readonly u8?: Uint8Array;
}
export type CreateHeap = (options: { maxBytes: number }) => PaddockHeap;

/** Paddock through its public API: `createHeap({ maxBytes })`, then `heap.malloc` / `heap.free`. */
export class PaddockAdapter implements Adapter {
  private heap: PaddockHeap | null = null;

  /** `name`: `paddock` (the arena, pool_arena) or `paddock-classic` (pool_classic). */
  constructor(
    private readonly createHeap: CreateHeap,
    readonly name: string = 'paddock',
  ) {}

  setup(maxBytes: number): void {
    this.heap = this.createHeap({ maxBytes });
  }

  malloc(size: number): number {
    return this.heap!.malloc(size);
  }

  free(ptr: number, _size: number): void {
    this.heap!.free(ptr);
  }

  teardown(): void {
    // Dropping the heap drops its SharedArrayBuffer; the driver collects garbage between rounds.
    this.heap = null;
  }

  bytes(): Uint8Array | null {
    const u8 = this.heap?.u8;
    return u8 instanceof Uint8Array ? u8 : null;
  }

  callee(): Callee {
    return this.heap!;
  }
}

export type PaddockLoad = { ok: true; createHeap: CreateHeap; url: string } | { ok: false; reason: string };

/** The two Paddock backends, each built as its own file of `packages/allocator/dist`. */
export type PaddockBackend = 'pool_arena' | 'pool_classic';

/**
 * Finds `@paddock/allocator`, one backend. It is not a dependency of this app, so it is loaded from the
 * workspace's built files at run time: `dist/pool-arena.js` (the `paddock` peer) or `dist/pool-classic.js`
 * (the `paddock-classic` peer), each holding one backend whatever `use=` the default build got. The
 * module's `BACKEND` export must name the backend asked for.
 */
export async function loadPaddock(backend: PaddockBackend = 'pool_arena'): Promise<PaddockLoad> {
  const url = paddockDistUrl(backend);
  const file = backend === 'pool_arena' ? 'pool-arena.js' : 'pool-classic.js';
  if (!existsSync(fileURLToPath(url))) {
    return { ok: false, reason: `packages/allocator/dist/${file} not found: @paddock/allocator is not built yet` };
  }
  let mod: { createHeap?: unknown; BACKEND?: unknown };
  try {
    mod = (await import(url.href)) as { createHeap?: unknown; BACKEND?: unknown };
  } catch (err) {
    return { ok: false, reason: `@paddock/allocator (${file}) failed to load: ${errorText(err)}` };
  }
  if (typeof mod.createHeap !== 'function') {
    return { ok: false, reason: `@paddock/allocator (${file}) has no createHeap export` };
  }
  if (mod.BACKEND !== undefined && mod.BACKEND !== backend) {
    return { ok: false, reason: `packages/allocator/dist/${file} is backend ${String(mod.BACKEND)}, not ${backend}` };
  }
  return { ok: true, createHeap: mod.createHeap as CreateHeap, url: url.href };
}

/**
 * The built `@paddock/allocator`, one backend (the multi-agent workloads' workers load it from here too).
 */
export function paddockDistUrl(backend: PaddockBackend = 'pool_arena'): URL {
  // dist/main.js -> apps/bench/dist -> repository root
  const file = backend === 'pool_arena' ? 'pool-arena.js' : 'pool-classic.js';
  return new URL(`../../../packages/allocator/dist/${file}`, import.meta.url);
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
