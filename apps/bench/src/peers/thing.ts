/**
 * `thi.ng`: @thi.ng/malloc's `MemPool`, the most used JavaScript allocator, over a plain ArrayBuffer with
 * its default options (align 8, split and compact on). Each block has an 8-byte header (size, next);
 * `free` finds the block by walking the list of used blocks, inserts it into an address-sorted free list
 * and then walks that list to merge neighbours, and `malloc` is first fit over the free list: its cost
 * grows with the live count. It runs exactly as published, from node_modules (the bundle leaves it out).
 */
import { MemPool } from '@thi.ng/malloc';
import type { Adapter, Callee } from '../adapter.js';
import type { MemPeer } from '../mem-peer.js';
import { makePeer } from '../runner.js';
import { ARRAY_BYTES, type PeerDescriptor } from './peer.js';

export class ThingAdapter implements Adapter {
  constructor(readonly name: string) {}

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

/** thi.ng in hold-then-free and the realloc chain: what it holds is the highest `top` it reached. */
export class ThingMem implements MemPeer {
  constructor(readonly name: string) {}

  readonly family = this.name;
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

export const thing: PeerDescriptor = {
  name: 'thi.ng',
  offers: ['pair-churn', 'sweep', 'memory', 'one-agent'],
  load: (name) => ({
    timed: makePeer(new ThingAdapter(name), ARRAY_BYTES),
    adapter: () => new ThingAdapter(name),
    memory: () => [new ThingMem(name)],
  }),
  declines: (program) =>
    program === 'class-no-reuse'
      ? 'its free walks the list of used blocks: half a million frees of 64 B blocks is quadratic (hours)'
      : program === 'build-then-free'
        ? 'its free walks the list of used blocks: 64,000 frees with 64,000 blocks live is quadratic'
        : null,
};
