/**
 * Peers for the workloads that look at memory as well as time (hold-then-free, the realloc chain): the
 * same three allocators as the timed churn, plus what each holds from its buffer, a realloc, and, for
 * Paddock, the profile rung and the retention ledger.
 */
import { MemPool } from '@thi.ng/malloc';
import { FloorAdapter } from './floor.js';
import type { CreateHeap } from './peers.js';
import { collectGarbage } from './runner.js';

const MiB = 1024 * 1024;

/** What these workloads use of a Paddock heap (`@paddock/allocator`'s `Heap`). */
export interface FullHeap {
  malloc(size: number): number;
  free(ptr: number, size?: number): void;
  realloc(ptr: number, size: number): number;
  readonly u8: Uint8Array;
  readonly largeMax: number;
  readonly profile: number;
  readonly space: { readonly committedBytes: number };
  stats(): PaddockStats;
}

export interface PaddockStats {
  pageReturn: string;
  committedBytes: number;
  residentBytes: number | null;
  liveBytes: number;
  cacheBytes: number;
  retention: {
    budgetBytes: number;
    ledgerBytes: number;
    retainedBytes: number;
    stashEntries: number;
    stashBytes: number;
  };
}

export type CreateFullHeap = (options: { maxBytes: number; profile?: number }) => FullHeap;

/** `loadPaddock` types `createHeap` narrowly (the churn needs malloc and free only); this is the same function. */
export function fullCreateHeap(createHeap: CreateHeap): CreateFullHeap {
  return createHeap as unknown as CreateFullHeap;
}

/**
 * Paddock's heap for these workloads and the size sweep: 2 GiB, so the heap gets the large geometry
 * (8 MiB arenas, large objects up to `largeMax` = 8 MiB - 32 KiB). Every pointer stays below 2^31.
 */
export const PADDOCK_BIG_BYTES = 2048 * MiB;
/** The floor's and thi.ng's buffer here. */
export const ARRAY_BYTES = 256 * MiB;

export interface MemPeer {
  /** As the tables show it: `floor`, `thi.ng`, `paddock r3`. */
  readonly name: string;
  /** The peer name `--only` filters on. */
  readonly family: 'floor' | 'thi.ng' | 'paddock';
  readonly rung: number | null;
  setup(): void;
  malloc(size: number): number;
  free(ptr: number, size: number): void;
  /** Resizes the block at `ptr` (of `oldSize` bytes) to `size`; returns the new pointer, 0 when out of memory. */
  realloc(ptr: number, oldSize: number, size: number): number;
  /** The bytes pointers index, current (Paddock's buffer grows). */
  bytes(): Uint8Array;
  /**
   * Bytes the peer holds from its buffer: Paddock's committed bytes (all agents); the floor's and
   * thi.ng's high-water mark (neither can give memory back, so that is what they keep; thi.ng's is the
   * highest `top` seen at the calls to this, which the workloads make where the peak is).
   */
  committed(): number;
  /** Paddock's retention ledger in bytes (retained large units + stashed mappings); null for the others. */
  ledger(): number | null;
  teardown(): void;
}

export class FloorMem implements MemPeer {
  readonly name = 'floor';
  readonly family = 'floor';
  readonly rung = null;
  private f = new FloorAdapter();
  private u8: Uint8Array = new Uint8Array(0);

  setup(): void {
    this.f.setup(ARRAY_BYTES);
    this.u8 = this.f.bytes() as Uint8Array;
  }
  malloc(size: number): number {
    return this.f.malloc(size);
  }
  free(ptr: number, size: number): void {
    this.f.free(ptr, size);
  }
  realloc(ptr: number, oldSize: number, size: number): number {
    return this.f.realloc(ptr, oldSize, size, this.u8);
  }
  bytes(): Uint8Array {
    return this.u8;
  }
  committed(): number {
    return this.f.highWater();
  }
  ledger(): number | null {
    return null;
  }
  teardown(): void {
    this.f.teardown();
    this.u8 = new Uint8Array(0);
  }
}

export class ThingMem implements MemPeer {
  readonly name = 'thi.ng';
  readonly family = 'thi.ng';
  readonly rung = null;
  private pool = new MemPool({ size: 4096 });
  private u8: Uint8Array = new Uint8Array(0);
  /** Highest `top` seen: thi.ng lowers `top` when the top block is freed, but the pages stay touched. */
  private high = 0;

  setup(): void {
    this.pool = new MemPool({ buf: new ArrayBuffer(ARRAY_BYTES) });
    this.u8 = new Uint8Array(this.pool.buf);
    this.high = 0;
  }
  malloc(size: number): number {
    return this.pool.malloc(size);
  }
  free(ptr: number, _size: number): void {
    this.pool.free(ptr);
  }
  realloc(ptr: number, _oldSize: number, size: number): number {
    return this.pool.realloc(ptr, size);
  }
  bytes(): Uint8Array {
    return this.u8;
  }
  committed(): number {
    this.high = Math.max(this.high, this.pool.stats().top);
    return this.high;
  }
  ledger(): number | null {
    return null;
  }
  teardown(): void {
    this.pool = new MemPool({ size: 4096 });
    this.u8 = new Uint8Array(0);
  }
}

export class PaddockMem implements MemPeer {
  readonly name: string;
  readonly family = 'paddock';
  private heap: FullHeap | null = null;

  constructor(
    private readonly createHeap: CreateFullHeap,
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
  ledger(): number | null {
    return this.heap!.stats().retention.ledgerBytes;
  }
  teardown(): void {
    this.heap = null;
  }
}

/** Resident memory of this process (the OS's figure). */
export function resident(): number {
  return process.memoryUsage.rss();
}

const nap = new Int32Array(new SharedArrayBuffer(4));

/**
 * Resident memory once the previous instance's buffer is really gone: a collected ArrayBuffer is freed
 * at once, but a SharedArrayBuffer (Paddock's heap) some milliseconds later, on another thread. Collects
 * garbage and waits in 10 ms steps (at most 10) until two readings agree within 256 KiB.
 */
export function settledResident(): number {
  collectGarbage();
  let last = resident();
  for (let i = 0; i < 10; i++) {
    Atomics.wait(nap, 0, 0, 10);
    const now = resident();
    if (Math.abs(now - last) < 256 * 1024) return now;
    last = now;
  }
  return last;
}

const PAGE = 4096;

/**
 * Writes one byte into every page of [from, to) of `u8`, as a program writes what it allocates: memory
 * a peer gave back to the OS (or never touched) faults in here.
 */
export function touchPages(u8: Uint8Array, from: number, to: number): void {
  for (let q = from; q < to; q = (q & ~(PAGE - 1)) + PAGE) u8[q] = 1;
  if (to > from) u8[to - 1] = 1;
}
