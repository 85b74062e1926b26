// Frees by agents that do not own the block: chains, batches, inbox, drain. Agents here share one thread;
// the worker versions of these protocols are in @paddock/allocator's tests.
import { describe, expect, it } from 'vitest';
import { B_LENGTH, B_NEXT, CHAIN_FLUSH, CHAIN_MAP_INITIAL, FREED_MARK } from '../src/index.js';
import { KiB, makeHeap } from './agents.js';

/** The lengths of the batches waiting in an owner's inbox, without taking them (each walked to its end). */
function inboxBatches(heap: ReturnType<typeof makeHeap>, slot: number): number[] {
  const space = heap.space;
  space.refresh();
  const lengths: number[] = [];
  for (let b = space.u32[heap.registry.inboxAddress(slot) >>> 2]!; b !== 0; b = space.u32[(b >>> 2) + B_NEXT]!) {
    let walked = 0;
    for (let m = b; m !== 0; m = space.u32[m >>> 2]!) walked++;
    expect(walked).toBe(space.i32[(b >>> 2) + B_LENGTH]);
    lengths.push(walked);
  }
  return lengths;
}

describe('cross-agent frees', () => {
  it('a foreign agent frees a full 32 B slab; the owner drains it and re-carves its base', () => {
    const heap = makeHeap();
    const owner = heap.agent();
    const freer = heap.agent();
    const slab: number[] = [];
    for (let k = 0; k < 512; k++) slab.push(owner.malloc(32));
    owner.malloc(32); // the next slab is current; the first is full
    for (const p of slab) freer.free(p);
    expect(freer.slot).toBe(0); // an agent that only frees takes no owner slot
    expect(freer.pendingChainObjects()).toBe(0); // 512 = 16 flushes of 32
    expect(inboxBatches(heap, owner.slot)).toEqual(new Array(16).fill(32));
    expect(owner.drain()).toBe(512);
    owner.check();
    expect(owner.emptySlabs.count).toBe(1); // kept for the class's next refill
    owner.emptySlabs.releaseAll(owner);
    expect(owner.stats().perClass[0]!.slabs).toBe(1);
    expect(owner.malloc(16 * KiB)).toBe(slab[0]); // the released unit is the lowest free one again
    owner.check();
  });

  it('an agent that only frees, and never flushes its chains all at once, lists each owner once', () => {
    const heap = makeHeap();
    const owner = heap.agent();
    const freer = heap.agent();
    for (let round = 0; round < 200; round++) {
      const batch = Array.from({ length: CHAIN_FLUSH }, () => owner.malloc(64));
      for (const p of batch) freer.free(p); // the 32nd flushes the chain; the next round begins it again
      owner.drain();
    }
    // The list of owners with a chain grew by one per chain begun before (a leak in a consumer that never waits).
    expect((freer.chains as unknown as { pendingCount: number }).pendingCount).toBe(1);
    expect(freer.flushChains()).toBe(0);
    expect((freer.chains as unknown as { pendingCount: number }).pendingCount).toBe(0);
    owner.check();
  });

  it('a drain re-serves a delivered address', () => {
    const heap = makeHeap();
    const owner = heap.agent();
    const freer = heap.agent();
    const p = owner.malloc(64);
    owner.malloc(64);
    freer.free(p);
    expect(owner.drain()).toBe(0); // still in the freer's chain
    expect(freer.flushChains()).toBe(1);
    expect(owner.drain()).toBe(1);
    expect(owner.malloc(64)).toBe(p);
    owner.check();
  });

  it('the allocation slow path drains the inbox before it takes a new slab', () => {
    const heap = makeHeap();
    const owner = heap.agent();
    const freer = heap.agent();
    const all: number[] = [];
    for (let k = 0; k < 512; k++) all.push(owner.malloc(32)); // current slab now exhausted
    for (let k = 0; k < CHAIN_FLUSH; k++) freer.free(all[k]!);
    const next = owner.malloc(32); // slow path: drain refills the exhausted slab
    expect(all.slice(0, CHAIN_FLUSH)).toContain(next);
    expect(owner.stats().perClass[0]!.slabs).toBe(1);
    owner.check();
  });

  it('3 owners and one freeing agent: every object goes home', () => {
    const heap = makeHeap();
    const owners = [heap.agent(), heap.agent(), heap.agent()];
    const freer = heap.agent();
    const blocks = owners.map((o) => Array.from({ length: 300 }, (_, k) => o.malloc(32 + (k % 7) * 40)));
    for (let k = 0; k < 300; k++) for (const list of blocks) freer.free(list[k]!);
    freer.flushChains();
    expect(freer.pendingChainObjects()).toBe(0);
    owners.forEach((o) => {
      expect(o.drain()).toBe(300);
      expect(o.stats().perClass.reduce((n, c) => n + c.live, 0)).toBe(0);
      o.check();
    });
  });

  it('objects of 3 classes interleaved go home as one batch, each carrying its freed mark, and back to their slabs', () => {
    const heap = makeHeap();
    const owner = heap.agent();
    const freer = heap.agent();
    const classes = [32, 64, 128];
    const objs = classes.map((size) => Array.from({ length: 11 }, () => owner.malloc(size)));
    const interleaved: number[] = [];
    for (let k = 0; k < 11; k++) for (const list of objs) interleaved.push(list[k]!);
    for (const p of interleaved.slice(0, CHAIN_FLUSH)) freer.free(p); // 32 objects: one flush
    expect(inboxBatches(heap, owner.slot)).toEqual([CHAIN_FLUSH]);
    for (const p of interleaved.slice(0, CHAIN_FLUSH)) expect(heap.space.i32[(p >>> 2) + 1]).toBe(FREED_MARK ^ p);
    expect(owner.drain()).toBe(CHAIN_FLUSH);
    owner.check();
    const live = owner.stats().perClass;
    expect(live[0]!.live + live[1]!.live + live[2]!.live).toBe(1);
  });

  it('frees to 76 owners grow the chain map while chains are pending, and every object arrives', () => {
    const heap = makeHeap();
    const owners = Array.from({ length: 76 }, () => heap.agent());
    const objs = owners.map((o) => Array.from({ length: 5 }, () => o.malloc(48)));
    expect(owners[75]!.slot).toBeGreaterThanOrEqual(CHAIN_MAP_INITIAL);
    const freer = heap.agent();
    expect(freer.chainMapSize).toBe(CHAIN_MAP_INITIAL);
    for (let k = 0; k < 5; k++) for (const list of objs) freer.free(list[k]!);
    expect(freer.chainMapSize).toBe(2 * CHAIN_MAP_INITIAL);
    expect(freer.pendingChainObjects()).toBe(76 * 5);
    expect(freer.flushChains()).toBe(76 * 5);
    for (const o of owners) {
      expect(o.drain()).toBe(5);
      o.check();
    }
  });

  it('a block freed by another agent comes home and is re-served at the same address', () => {
    const heap = makeHeap();
    const owner = heap.agent();
    const freer = heap.agent();
    const big = owner.malloc(256 * KiB);
    owner.malloc(256 * KiB); // big is no longer the current block of its class
    freer.free(big);
    freer.flushChains();
    expect(inboxBatches(heap, owner.slot)).toEqual([1]);
    expect(owner.drain()).toBe(1);
    expect(owner.malloc(256 * KiB)).toBe(big);
    owner.check();
  });
});
