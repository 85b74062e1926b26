/**
 * Paddock as a peer: `@paddock/allocator` through its public API, one backend at a time. The bench does
 * not bundle it: each backend is loaded at run time from the workspace's built files, and the workers of
 * the multi-agent workloads load the same file.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Heap, HeapHandle, HeapOptions } from '@paddock/allocator';
import type { Adapter, Callee } from '../adapter.js';
import { errorText } from '../format.js';
import type { MemPeer } from '../mem-peer.js';
import { makePeer } from '../runner.js';
import type { PeerDescriptor } from './peer.js';

/** What the bench uses of a Paddock heap: the public `Heap`, narrowed to what its peers and workers call. */
export type PaddockHeap = Pick<
  Heap,
  | 'handle'
  | 'malloc'
  | 'free'
  | 'realloc'
  | 'flush'
  | 'drain'
  | 'flushCache'
  | 'wait'
  | 'u8'
  | 'i32'
  | 'largeMax'
  | 'space'
  | 'stats'
  | 'startIdle'
  | 'stopIdle'
  | 'detach'
  | 'scope'
  | 'snapshot'
  | 'mallocAs'
  | 'mallocString'
  | 'readString'
>;
export type CreateHeap = (options: Pick<HeapOptions, 'maxBytes' | 'profile'>) => PaddockHeap;
/** What the workers call in the module they load: `attachHeap(handle)`. */
export type AttachHeap = (handle: HeapHandle) => PaddockHeap;

/** Paddock's heap limit in the pair and the churn: a growable buffer, so this is a cap, not a commitment;
 * its arenas and partially used slabs need headroom over the floor's figure. */
export const PADDOCK_BYTES = 1024 * 1024 * 1024;
/**
 * Paddock's heap in the size sweep, hold-then-free and the realloc chain: 2 GiB, so the heap gets the large
 * geometry (8 MiB arenas, large objects up to `largeMax` = 8 MiB - 32 KiB). Every pointer stays below 2^31.
 */
export const PADDOCK_BIG_BYTES = 2048 * 1024 * 1024;

/** Paddock through its public API: `createHeap({ maxBytes })`, then `heap.malloc` / `heap.free`. */
export class PaddockAdapter implements Adapter {
  private heap: PaddockHeap | null = null;

  /** `name`: `paddock` (the arena, pool_arena), `paddock-classic` (pool_classic) or `paddock-global` (pool_global). */
  constructor(
    private readonly createHeap: CreateHeap,
    readonly name: string,
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

/** Paddock in hold-then-free and the realloc chain, at one profile rung, in the 2 GiB heap. */
export class PaddockMem implements MemPeer {
  readonly name: string;
  readonly family = 'paddock';
  private heap: PaddockHeap | null = null;

  constructor(
    private readonly createHeap: CreateHeap,
    readonly rung: number,
  ) {
    this.name = `paddock r${rung}`;
  }

  setup(): void {
    this.heap = this.createHeap({ maxBytes: PADDOCK_BIG_BYTES, profile: this.rung });
  }
  malloc(size: number): number {
    return this.heap!.malloc(size);
  }
  free(ptr: number, _size: number): void {
    this.heap!.free(ptr);
  }
  realloc(ptr: number, _oldSize: number, size: number): number {
    return this.heap!.realloc(ptr, size);
  }
  bytes(): Uint8Array {
    return this.heap!.u8;
  }
  committed(): number {
    return this.heap!.space.committedBytes;
  }
  /** The arena's retention ledger; the classic pool keeps none (null, like the peers without one). */
  ledger(): number | null {
    const stats = this.heap!.stats();
    return stats.backend === 'pool_arena' ? stats.retention.ledgerBytes : null;
  }
  teardown(): void {
    this.heap = null;
  }
}

export type PaddockLoad = { ok: true; createHeap: CreateHeap; url: string } | { ok: false; reason: string };

/** The three Paddock backends, each built as its own file of `packages/allocator/dist`. */
export type PaddockBackend = 'pool_arena' | 'pool_classic' | 'pool_global';

/** The file of `packages/allocator/dist` that holds each backend. */
const DIST_FILE: Readonly<Record<PaddockBackend, string>> = {
  pool_arena: 'pool-arena.js',
  pool_classic: 'pool-classic.js',
  pool_global: 'pool-global.js',
};

/**
 * Finds `@paddock/allocator`, one backend. It is not bundled into this app, so it is loaded from the
 * workspace's built files at run time: `dist/pool-arena.js` (the `paddock` peer), `dist/pool-classic.js`
 * (the `paddock-classic` peer) or `dist/pool-global.js` (the `paddock-global` peer), each holding one backend whatever `use=` the default build got. The
 * module's `BACKEND` export must name the backend asked for.
 */
export async function loadPaddock(backend: PaddockBackend): Promise<PaddockLoad> {
  const url = paddockDistUrl(backend);
  const file = DIST_FILE[backend];
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

/** The built `@paddock/allocator`, one backend (the multi-agent workloads' workers and the capacity children load it from here too). */
export function paddockDistUrl(backend: PaddockBackend): URL {
  // dist/main.js -> apps/bench/dist -> repository root
  return new URL(`../../../packages/allocator/dist/${DIST_FILE[backend]}`, import.meta.url);
}

/**
 * A pool backend as a peer beside the arena (`paddock-classic`, `paddock-global`): the pair and the churn in
 * the same interleaved rounds, and the programs, on the same 1 GiB heap.
 */
export function poolPeer(name: string, backend: PaddockBackend): PeerDescriptor {
  return {
    name,
    offers: ['pair-churn', 'one-agent', 'agents'],
    async load(peerName) {
      const load = await loadPaddock(backend);
      if (!load.ok) return { skip: load.reason };
      return {
        timed: makePeer(new PaddockAdapter(load.createHeap, peerName), PADDOCK_BYTES),
        adapter: () => new PaddockAdapter(load.createHeap, peerName),
        heap: load,
      };
    },
  };
}
