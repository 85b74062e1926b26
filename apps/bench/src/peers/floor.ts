/**
 * The floor: the least any JavaScript allocator can cost. Segregated power-of-two free lists over one
 * typed array, and nothing else: no header in front of a block, no per-slab record, no thread cache,
 * no checks. A block's size is rounded up to a power of two (at least 32 B); a free block's first
 * word links it to the next free block of its class; a bump pointer carves blocks that were never
 * used. It cannot return memory, cannot move a block between classes, and its `free` needs the size
 * because nothing records it. Any real allocator does more work than this per operation.
 */
import type { Adapter } from '../adapter.js';
import type { MemPeer } from '../mem-peer.js';
import { makePeer } from '../runner.js';
import { createReusedHeap } from './floor-heap.js';
import type { CreateHeap } from './paddock-heap.js';
import { ARRAY_BYTES, type PeerDescriptor } from './peer.js';

/**
 * Classes 0..15 hold 32 B .. 1 MiB blocks, like Paddock's; classes 16..25 go on doubling up to 1 GiB, so
 * the size sweep and the realloc chain can ask for blocks of many MiB (the pair and churn workloads
 * never reach them).
 */
const CLASS_COUNT = 26;
/** Offset 0 is null, so carving starts one minimum block in. */
const FIRST_BLOCK = 32;

export class FloorAdapter implements Adapter {
  constructor(readonly name: string) {}

  /** Its blocks carry no size: the loops pass it. */
  readonly sized = true;
  private i32 = new Int32Array(0);
  private heads = new Int32Array(CLASS_COUNT);
  private bump = FIRST_BLOCK;
  private end = 0;

  setup(maxBytes: number): void {
    this.i32 = new Int32Array(new ArrayBuffer(maxBytes));
    this.heads.fill(0);
    this.bump = FIRST_BLOCK;
    this.end = maxBytes;
  }

  malloc(size: number): number {
    // class = ceil(log2 size) - 5, and 0 for size <= 32
    const c = size <= 32 ? 0 : 27 - Math.clz32(size - 1);
    const head = this.heads[c];
    if (head !== 0) {
      this.heads[c] = this.i32[head >> 2];
      return head;
    }
    const p = this.bump;
    const next = p + (32 << c);
    if (next > this.end) return 0;
    this.bump = next;
    return p;
  }

  free(ptr: number, size: number): void {
    const c = size <= 32 ? 0 : 27 - Math.clz32(size - 1);
    this.i32[ptr >> 2] = this.heads[c];
    this.heads[c] = ptr;
  }

  teardown(): void {
    this.i32 = new Int32Array(0);
    this.bump = FIRST_BLOCK;
    this.end = 0;
  }

  bytes(): Uint8Array | null {
    return new Uint8Array(this.i32.buffer);
  }

  /** Bytes carved so far (the bump pointer), for the self-check's bound. */
  highWater(): number {
    return this.bump;
  }

  /**
   * realloc for the growth-chain workload, the way Paddock's works: a size in the same power-of-two
   * class keeps the pointer; otherwise malloc, copy min(old, new) bytes, free. `u8` is the view
   * `bytes()` returned.
   */
  realloc(ptr: number, oldSize: number, size: number, u8: Uint8Array): number {
    const oc = oldSize <= 32 ? 0 : 27 - Math.clz32(oldSize - 1);
    const nc = size <= 32 ? 0 : 27 - Math.clz32(size - 1);
    if (oc === nc) return ptr;
    const q = this.malloc(size);
    if (q === 0) return 0;
    u8.copyWithin(q, ptr, ptr + Math.min(oldSize, size));
    this.free(ptr, oldSize);
    return q;
  }
}

/** The floor in hold-then-free and the realloc chain: what it holds is its high-water mark. */
export class FloorMem implements MemPeer {
  constructor(readonly name: string) {}

  readonly family = this.name;
  readonly rung = null;
  private f = new FloorAdapter(this.name);
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

export const floor: PeerDescriptor = {
  name: 'floor',
  offers: ['pair-churn', 'sweep', 'memory', 'one-agent', 'agents'],
  load: (name) => ({
    timed: makePeer(new FloorAdapter(name), ARRAY_BYTES),
    adapter: () => new FloorAdapter(name),
    memory: () => [new FloorMem(name)],
    // The multi-agent programs: the floor heap of `floor-heap.ts`, which the workers load by its URL (one heap at a
    // time, over the last one's memory). It has the calls those programs make on a heap, not the whole Heap type.
    heap: { createHeap: createReusedHeap as unknown as CreateHeap, url: new URL('./floor-heap.js', import.meta.url).href },
  }),
  declines: (program) =>
    program === 'idle' || program === 'large-cross-free'
      ? 'the floor never returns memory and keeps no count of it: this program measures what an allocator gives back'
      : null,
};
