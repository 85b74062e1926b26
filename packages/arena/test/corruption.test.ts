// Heap corruption and misuse must throw a HeapError with a code, never continue silently, and leave the
// heap consistent (check() passes afterwards).
import { describe, expect, it } from 'vitest';
import { B_LENGTH, B_NEXT, FREED_MARK, UNIT } from '../src/index.js';
import { KiB, MiB, makeHeap, thrown } from './agents.js';

function setup() {
  const heap = makeHeap();
  const owner = heap.agent();
  const other = heap.agent();
  return { heap, owner, other, space: heap.space };
}

/**
 * Makes a batch as a flush would: `members` linked through word 0 (the last one's link 0), each with its freed
 * mark unless listed in `unmarked`, and `length` in the head's word 2. Returns the head.
 */
function forgeBatch(space: ReturnType<typeof setup>['space'], members: number[], length: number, unmarked: number[] = []): number {
  space.refresh();
  members.forEach((m, i) => {
    space.u32[m >>> 2] = members[i + 1] ?? 0;
    if (!unmarked.includes(m)) space.i32[(m >>> 2) + 1] = FREED_MARK ^ m;
  });
  space.i32[(members[0]! >>> 2) + B_LENGTH] = length;
  return members[0]!;
}

describe('misuse of free', () => {
  it('free with the wrong class size', () => {
    const { owner } = setup();
    const p = owner.malloc(64);
    const e = thrown(() => owner.free(p, 200));
    expect(e?.code).toBe('WRONG_SIZE');
    owner.free(p, 33); // same class: fine
    owner.check();
  });

  it('a misaligned pointer', () => {
    const { owner } = setup();
    const p = owner.malloc(64);
    owner.malloc(64);
    expect(thrown(() => owner.free(p + 8))?.code).toBe('MISALIGNED');
    expect(thrown(() => owner.free(p + 32))?.code).toBe('MISALIGNED'); // 32-aligned but not to the 64 B class
    owner.check();
    owner.free(p);
  });

  it('a free when the slab has no live object', () => {
    const { owner } = setup();
    const p = owner.malloc(64);
    owner.free(p); // the current slab is reset in place
    expect(thrown(() => owner.free(p))?.code).toBe('DOUBLE_FREE');
    owner.check();
  });

  it('a double free of a small object, on the owner and through a foreign chain', () => {
    const { owner, other } = setup();
    const a = owner.malloc(32);
    const b = owner.malloc(32);
    owner.malloc(32);
    owner.free(a);
    expect(thrown(() => owner.free(a))?.code).toBe('DOUBLE_FREE');
    other.free(b);
    expect(thrown(() => other.free(b))?.code).toBe('DOUBLE_FREE'); // still in the other agent's chain
    expect(thrown(() => owner.free(b))?.code).toBe('DOUBLE_FREE'); // and the owner sees the mark too
    other.flushChains();
    owner.drain();
    expect(thrown(() => owner.free(b))?.code).toBe('DOUBLE_FREE');
    owner.check();
  });

  it('a block double free and an interior free of a block', () => {
    const { owner } = setup();
    const block = owner.malloc(128 * KiB);
    owner.malloc(128 * KiB);
    expect(thrown(() => owner.free(block + UNIT))?.code).toBe('BAD_POINTER'); // a continuation unit
    expect(thrown(() => owner.free(block + 4096))?.code).toBe('MISALIGNED');
    owner.free(block);
    expect(thrown(() => owner.free(block))?.code).toBe('DOUBLE_FREE');
    owner.check();
  });

  it('a corrupted free-list link is caught at the next allocation', () => {
    const { owner, space } = setup();
    const ps = [owner.malloc(32), owner.malloc(32), owner.malloc(32)];
    owner.free(ps[0]!);
    owner.free(ps[1]!); // free list: ps[1] -> ps[0]
    space.refresh();
    space.u32[ps[1]! >>> 2] = ps[1]! + 8; // misaligned link
    expect(thrown(() => owner.malloc(32))?.code).toBe('CORRUPTION');
    space.u32[ps[1]! >>> 2] = ps[1]! + 64 * KiB; // outside the slab
    expect(thrown(() => owner.malloc(32))?.code).toBe('CORRUPTION');
    space.u32[ps[1]! >>> 2] = ps[0]!; // repaired: the heap carries on
    expect(owner.malloc(32)).toBe(ps[1]);
    owner.check();
  });

  it('check() finds a broken free list', () => {
    const { owner, space } = setup();
    const ps = [owner.malloc(32), owner.malloc(32), owner.malloc(32)];
    owner.free(ps[0]!);
    owner.free(ps[1]!);
    space.refresh();
    space.u32[ps[0]! >>> 2] = ps[1]!; // a cycle
    expect(thrown(() => owner.check())?.code).toBe('CORRUPTION');
    space.u32[ps[0]! >>> 2] = 0;
    owner.check();
  });
});

describe('forged batches are refused at drain', () => {
  // Each forgery returns its batch's head and how many of its objects come before the bad one (those are valid
  // and reclaimed; nothing of the bad one or after it changes).
  type Forge = (ctx: ReturnType<typeof setup>, objs: number[], block: number) => { head: number; before: number };
  const cases: [string, RegExp, Forge][] = [
    ['an object beyond its slab\'s bump', /outside its slab/, ({ space }, objs) => ({ head: forgeBatch(space, [objs[0]!, objs[7]! + 32], 2), before: 1 })],
    ['a length above a chain', /length 40 is not 1\.\.32/, ({ space }, objs) => ({ head: forgeBatch(space, [objs[0]!, objs[1]!], 40), before: 0 })],
    ['an object in a free unit', /head unit/, ({ heap, space }, objs) => {
      const freeUnit = heap.regions.arenaBase(objs[0]!) + 300 * UNIT;
      space.commit(freeUnit, UNIT);
      return { head: forgeBatch(space, [freeUnit], 1), before: 0 };
    }],
    ["an object in another owner's arena", /belongs to owner/, ({ other, space }, objs) => ({ head: forgeBatch(space, [objs[0]!, other.malloc(32)], 2), before: 1 })],
    ['an object in an oversized mapping (no arena)', /not in an arena/, ({ space }) => {
      const mapping = space.reserve(8 * MiB, 8 * MiB);
      space.commit(mapping, 64 * KiB);
      return { head: forgeBatch(space, [mapping + 16 * KiB], 1), before: 0 };
    }],
    ['an address inside a block', /misaligned for the 65536-byte class/, ({ space }, _objs, block) => ({ head: forgeBatch(space, [block + 32], 1), before: 0 })],
    ['a misaligned object', /not aligned to 32 bytes/, ({ space }, objs) => ({ head: forgeBatch(space, [objs[0]!, objs[1]! + 8], 2), before: 1 })],
    ['a chain longer than its length', /does not end after its length/, ({ space }, objs) => ({ head: forgeBatch(space, objs.slice(0, 3), 2), before: 1 })],
    ['a chain shorter than its length', /ends before its length/, ({ space }, objs) => ({ head: forgeBatch(space, objs.slice(0, 2), 3), before: 1 })],
    ['an object not marked freed (live, or its mark overwritten)', /freed mark/, ({ space }, objs) => ({ head: forgeBatch(space, objs.slice(0, 3), 3, [objs[2]!]), before: 2 })],
  ];

  it.each(cases)('%s', (_name, message, forge) => {
    const ctx = setup();
    const { owner, heap } = ctx;
    const objs = Array.from({ length: 8 }, () => owner.malloc(32));
    const block = owner.malloc(64 * KiB);
    owner.malloc(64 * KiB);
    expect(heap.regions.arenaBase(objs[0]!)).toBe(heap.regions.arenaBase(block));
    expect(objs[0]! - heap.regions.arenaBase(objs[0]!)).toBe(0);
    const liveBefore = owner.stats().perClass[0]!.live;
    const { head, before } = forge(ctx, objs, block);
    heap.registry.pushInbox(owner.slot, head, head + 4 * B_NEXT);
    const e = thrown(() => owner.drain());
    expect(e?.code).toBe('CORRUPTION');
    expect(e?.message).toMatch(message);
    // The valid objects before the bad one went back to their slab; nothing else changed.
    expect(owner.stats().perClass[0]!.live).toBe(liveBefore - before);
    expect(owner.drain()).toBe(0); // the rest of that batch was dropped, not left to fail again
    ctx.space.refresh();
    for (const p of objs.slice(before)) ctx.space.u32[(p >>> 2) + 1] = 0; // the marks the forgery wrote
    owner.check();
    expect(owner.malloc(32)).toBeGreaterThan(0);
  });

  it('a bad batch does not lose the batches behind it', () => {
    const { heap, owner, other, space } = setup();
    const objs = Array.from({ length: 40 }, () => owner.malloc(32));
    owner.malloc(32);
    for (const p of objs.slice(0, 32)) other.free(p); // one good batch of 32, flushed
    const bad = forgeBatch(space, [objs[32]!, objs[33]! + 8], 2);
    heap.registry.pushInbox(owner.slot, bad, bad + 4 * B_NEXT); // on top of the good one
    expect(thrown(() => owner.drain())?.code).toBe('CORRUPTION');
    expect(owner.drain()).toBe(32); // the good batch, still in the queue
    expect(owner.stats().perClass[0]!.live).toBe(41 - 33);
    space.refresh();
    space.u32[(objs[33]! >>> 2) + 1] = 0;
    owner.check();
  });
});
