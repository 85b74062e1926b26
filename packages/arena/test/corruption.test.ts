// Heap corruption and misuse must throw a HeapError with a code, never continue silently, and leave the
// heap consistent (check() passes afterwards).
import { describe, expect, it } from 'vitest';
import { FREED_MARK, HEADER_UNITS, UNIT } from '../src/index.js';
import { KiB, MiB, makeHeap, thrown } from './agents.js';

function setup() {
  const heap = makeHeap();
  const owner = heap.agent();
  const other = heap.agent();
  return { heap, owner, other, space: heap.space };
}

/** Writes a run header (next run, first member, length) into `tail` and links members through word 0. */
function forgeRun(space: ReturnType<typeof setup>['space'], members: number[], tail: number, first: number, length: number): void {
  space.refresh();
  for (let i = 0; i + 1 < members.length; i++) space.u32[members[i]! >>> 2] = members[i + 1]!;
  space.u32[tail >>> 2] = 0;
  space.u32[(tail >>> 2) + 1] = first;
  space.i32[(tail >>> 2) + 2] = length;
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

describe('forged runs are refused at drain', () => {
  type Forge = (ctx: ReturnType<typeof setup>, objs: number[], block: number) => { tail: number };
  const cases: [string, RegExp, Forge][] = [
    ['a member outside the slab', /outside its slab/, ({ space }, objs) => {
      const outsider = objs[0]! + 16 * KiB; // the next slab
      forgeRun(space, [outsider, objs[2]!], objs[2]!, outsider, 2);
      return { tail: objs[2]! };
    }],
    ['a length above the live count', /above the slab's live count/, ({ space }, objs) => {
      forgeRun(space, [objs[0]!, objs[1]!], objs[1]!, objs[0]!, 40);
      return { tail: objs[1]! };
    }],
    ['a tail in a free unit', /head unit/, ({ heap, space }, objs) => {
      const freeUnit = heap.regions.arenaBase(objs[0]!) + 300 * UNIT;
      space.commit(freeUnit, UNIT);
      forgeRun(space, [freeUnit], freeUnit, freeUnit, 1);
      return { tail: freeUnit };
    }],
    ["a tail in another owner's arena", /belongs to owner/, ({ other, space }) => {
      const theirs = other.malloc(32);
      forgeRun(space, [theirs], theirs, theirs, 1);
      return { tail: theirs };
    }],
    ['a tail in an oversized mapping (no arena)', /not in an arena/, ({ space }) => {
      const mapping = space.reserve(8 * MiB, 8 * MiB);
      space.commit(mapping, 64 * KiB);
      const tail = mapping + 16 * KiB;
      forgeRun(space, [tail], tail, tail, 1);
      return { tail };
    }],
    ['a block run of length 2', /block run/, ({ space }, _objs, block) => {
      forgeRun(space, [block], block, block, 2);
      return { tail: block };
    }],
    ['a block run whose first member is not the block', /block run/, ({ space }, _objs, block) => {
      forgeRun(space, [block], block, block + 32, 1);
      return { tail: block };
    }],
    ['a misaligned member', /misaligned/, ({ space }, objs) => {
      forgeRun(space, [objs[0]! + 8, objs[1]!], objs[1]!, objs[0]! + 8, 2);
      return { tail: objs[1]! };
    }],
    ['a broken chain', /does not end at the tail/, ({ space }, objs) => {
      forgeRun(space, [objs[0]!, objs[1]!], objs[2]!, objs[0]!, 3); // objs[1] links to 0
      space.u32[objs[1]! >>> 2] = objs[3]!;
      return { tail: objs[2]! };
    }],
  ];

  it.each(cases)('%s', (_name, message, forge) => {
    const ctx = setup();
    const { owner, heap } = ctx;
    const objs = Array.from({ length: 8 }, () => owner.malloc(32));
    const block = owner.malloc(64 * KiB);
    owner.malloc(64 * KiB);
    expect(heap.regions.arenaBase(objs[0]!)).toBe(heap.regions.arenaBase(block));
    expect(objs[0]! - heap.regions.arenaBase(objs[0]!)).toBe(HEADER_UNITS * UNIT);
    const before = owner.stats();
    const { tail } = forge(ctx, objs, block);
    heap.registry.pushInbox(owner.slot, tail, tail);
    const e = thrown(() => owner.drain());
    expect(e?.code).toBe('CORRUPTION');
    expect(e?.message).toMatch(message);
    // Nothing was spliced: the counts are as they were. Repair the words the forgery wrote, then check.
    expect(owner.stats().perClass).toEqual(before.perClass);
    ctx.space.refresh();
    for (const p of objs) ctx.space.u32[(p >>> 2) + 1] = 0;
    owner.check();
    expect(owner.malloc(32)).toBeGreaterThan(0);
    expect(FREED_MARK).not.toBe(0);
  });
});
