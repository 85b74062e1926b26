// The classic pool's own behaviour, pinned: 1 MiB lists on the global stack, idle keeps memory, large
// blocks first-fit without merging and never sent home, discard vs retain, flush and detach.
import { describe, expect, it, vi } from 'vitest';
import { loadNativePageReturn, openAddressSpace } from '@paddock/platform';
import { ClassicPool, LOCAL_LARGE_MAX, TICK_MAX_MS, TICK_MIN_MS, listCapacity } from '../src/index.js';
import { checkPattern, fillPattern } from './workers/pattern.mjs';
import { MiB, makePool, overlaps } from './helpers.js';

const nativeAvailable = loadNativePageReturn() !== null;

describe('size-class lists', () => {
  it('a local list that reaches 1 MiB of objects goes whole onto the global stack, and another agent pulls it whole', () => {
    const { space, pool } = makePool();
    const other = ClassicPool.open(openAddressSpace(space.handle));
    const c = 7; // 4 KiB objects, 256 to a list
    const n = listCapacity(c);
    expect(n).toBe(256);
    const ps = Array.from({ length: n + 1 }, () => pool.malloc(4096));
    for (let i = 0; i < n; i++) pool.free(ps[i]!);
    expect(pool.stats().perClass[c]!.free).toBe(n); // all local so far
    expect(other.stats().perClass[c]!.free).toBe(0); // the other agent sees none of them
    pool.free(ps[n]!); // the list is full: it goes to the global stack first, then this one starts a new list
    expect(other.stats().perClass[c]!.free).toBe(n);
    const got = Array.from({ length: n }, () => other.malloc(4000));
    expect(new Set(got)).toEqual(new Set(ps.slice(0, n)));
    expect(got[0]).toBe(ps[n - 1]); // the list's head: the last object freed into it
    expect(other.malloc(4096)).not.toBe(ps[n]); // the stack is empty now; ps[n] stays on the first agent's list
    expect(pool.malloc(4096)).toBe(ps[n]);
    pool.check();
    other.check();
  });

  it('ABA: a stack head that returns to the same list carries a new tag, so a stale CAS fails', () => {
    const { space, pool } = makePool();
    const heads = new BigInt64Array(space.buffer, pool.headerAddress + 128, 16);
    const c = 15; // 1 MiB objects: every list holds one object
    const [a, b] = [pool.malloc(MiB), pool.malloc(MiB)];
    const other = ClassicPool.open(openAddressSpace(space.handle));
    other.free(b);
    other.free(a); // pushes [b]
    other.flush(); // pushes [a]: the stack is a -> b
    const stale = Atomics.load(heads, c); // what a slow popper read: head a, about to install b
    expect(Number(stale & 0xffffffffn)).toBe(a);
    // Meanwhile: a and b are popped, and a is pushed back alone.
    expect(pool.malloc(MiB)).toBe(a);
    expect(pool.malloc(MiB)).toBe(b);
    pool.free(a);
    pool.flush();
    const now = Atomics.load(heads, c);
    expect(Number(now & 0xffffffffn)).toBe(a); // the same pointer on top...
    expect(now).not.toBe(stale); // ...but not the same word: the slow popper's CAS fails
    expect(Atomics.compareExchange(heads, c, stale, BigInt(b))).not.toBe(stale);
    expect(other.malloc(MiB)).toBe(a);
    pool.check();
  });

  it('an agent whose list is empty pops a global list before bumping', () => {
    const { space, pool } = makePool();
    const other = ClassicPool.open(openAddressSpace(space.handle));
    const a = pool.malloc(100);
    pool.free(a);
    pool.flush(); // a one-object list goes to the global stack
    expect(pool.stats().perClass[2]!.free).toBe(1);
    expect(other.malloc(128)).toBe(a);
    expect(other.malloc(128)).not.toBe(a);
  });
});

describe('idle keeps memory (the documented difference from the arena backend)', () => {
  it('after ticks up to the cap and returnIdle, committed bytes and free lists are unchanged and reused', () => {
    const { space, pool } = makePool();
    const ps: number[] = [];
    for (let c = 0; c < 16; c++) for (let k = 0; k < 8; k++) ps.push(pool.malloc(32 << c));
    const big = [pool.malloc(3 * MiB), pool.malloc(5 * MiB)];
    for (const p of [...ps, ...big]) pool.free(p);
    const before = pool.stats();
    const committed = space.committedBytes;
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) delays.push(pool.tick());
    expect(delays[0]).toBe(TICK_MIN_MS);
    expect(delays.at(-1)).toBe(TICK_MAX_MS);
    pool.returnIdle();
    pool.drain();
    const after = pool.stats();
    expect(after.committedBytes).toBe(before.committedBytes);
    expect(space.committedBytes).toBe(committed);
    expect(after.perClass).toEqual(before.perClass);
    expect(after.largeFreeBytes).toBe(before.largeFreeBytes);
    // Still held by this agent: another agent gets none of what is on its local lists (classes 13-15
    // pushed full 1 MiB lists to the global stacks while they were freed, which is not the idle path)...
    const other = ClassicPool.open(openAddressSpace(space.handle));
    for (let c = 0; c <= 12; c++) expect(ps).not.toContain(other.malloc(32 << c));
    expect(big).not.toContain(other.malloc(3 * MiB));
    // ...and this agent gets the same objects back, last freed first.
    for (let c = 15; c >= 0; c--) for (let k = 7; k >= 0; k--) expect(pool.malloc(32 << c)).toBe(ps[c * 8 + k]);
    expect(pool.tick()).toBe(TICK_MIN_MS); // activity resets the schedule
  });
});

describe('large blocks', () => {
  it('first fit by size from a list that never merges neighbours', () => {
    const { pool } = makePool();
    const a = pool.malloc(3 * MiB);
    const b = pool.malloc(3 * MiB);
    expect(b + 3 * MiB).toBe(a); // taken off the top of the same chunk: neighbours
    pool.free(a);
    pool.free(b);
    // Together they would make 6 MiB, but they are never merged.
    const six = pool.malloc(6 * MiB);
    expect(overlaps(six, 6 * MiB, b, 6 * MiB)).toBe(false);
    // Equal sizes: the lower address first. A smaller request splits the smallest block that fits and
    // takes its top end; the rest stays listed.
    expect(pool.malloc(3 * MiB)).toBe(b);
    const two = pool.malloc(2 * MiB);
    expect(two).toBe(a + MiB);
    expect(pool.malloc(MiB + 1)).not.toBe(a); // the 1 MiB rest is too small for a large request...
    expect(pool.malloc(MiB)).toBe(a); // ...but becomes a class block for the 1 MiB class
    pool.check();
  });

  it('the smallest block that fits wins, whatever the order of freeing', () => {
    const { pool } = makePool();
    const ps = [8, 3, 5, 2].map((m) => pool.malloc(m * MiB));
    for (const p of ps) pool.free(p);
    expect(pool.malloc(2 * MiB + 1)).toBe(ps[1]); // the 3 MiB block, whole
    expect(pool.malloc(4 * MiB)).toBe(ps[2]! + MiB); // the 5 MiB block: 4 MiB off its top end
    expect(pool.malloc(8 * MiB)).toBe(ps[0]);
    pool.check();
  });

  it('a freed large block goes to the freeing agent, which reuses it; the allocating agent does not get it back', () => {
    const { space, pool } = makePool();
    const other = ClassicPool.open(openAddressSpace(space.handle));
    const p = pool.malloc(3 * MiB);
    other.free(p);
    expect(pool.malloc(3 * MiB)).not.toBe(p);
    expect(other.malloc(3 * MiB)).toBe(p);
    pool.check();
    other.check();
  });

  it(`a local large list longer than ${LOCAL_LARGE_MAX} blocks hands its largest half to the global list`, () => {
    const { space, pool } = makePool();
    const other = ClassicPool.open(openAddressSpace(space.handle));
    const sizes = Array.from({ length: LOCAL_LARGE_MAX }, (_, i) => (2 + (i % 4)) * MiB);
    const ps = sizes.map((s) => pool.malloc(s));
    const before = other.stats().largeFreeBytes;
    expect(before).toBe(0);
    for (const p of ps) pool.free(p);
    // The chunk rests are on the list too, so it is already past the limit: the global list got blocks.
    const global = other.stats().largeFreeBytes;
    expect(global).toBeGreaterThan(0);
    // The other agent is served from the global list: no new address space.
    const reserved = space.reservedBytes;
    other.malloc(5 * MiB);
    expect(space.reservedBytes).toBe(reserved);
    expect(other.stats().largeFreeBytes).toBe(global - 5 * MiB);
    pool.check();
    other.check();
  });
});

describe('freed large pages: discarded, or kept with retain', () => {
  it.runIf(nativeAvailable)('without retain, a freed large block reads zero (native page return)', () => {
    const { space, pool } = makePool();
    const discard = vi.spyOn(space, 'discard');
    const p = pool.malloc(3 * MiB);
    space.u8.fill(0xab, p, p + 3 * MiB);
    pool.free(p);
    expect(discard).toHaveBeenCalledWith(p, 3 * MiB);
    let nonzero = 0;
    for (let q = p; q < p + 3 * MiB; q += 4096) if (space.u8[q] !== 0 || space.u8[q + 4095] !== 0) nonzero++;
    expect(nonzero).toBe(0);
    expect(pool.stats().pageReturn).toBe('native');
  });

  it('without retain, free calls space.discard on the whole block (any page-return mode)', () => {
    const { space, pool } = makePool({}, { maxBytes: 256 * MiB, pageReturn: 'none' });
    const discard = vi.spyOn(space, 'discard');
    const p = pool.malloc(2 * MiB + 5);
    pool.free(p);
    expect(discard).toHaveBeenCalledTimes(1);
    expect(discard).toHaveBeenCalledWith(p, 3 * MiB);
    expect(pool.stats().pageReturn).toBe('none');
  });

  it('with retain, freed large blocks keep their committed contents and nothing is discarded', () => {
    const { space, pool } = makePool({ retain: true });
    expect(pool.retain).toBe(true);
    const discard = vi.spyOn(space, 'discard');
    const p = pool.malloc(3 * MiB);
    fillPattern(space.u8, p, 3 * MiB, 42);
    pool.free(p);
    expect(discard).not.toHaveBeenCalled();
    expect(checkPattern(space.u8, p, 3 * MiB, 42)).toBe(-1);
    expect(pool.stats().pageReturn).toBe('none');
    // retain is a property of the heap: every agent sees it.
    expect(ClassicPool.open(openAddressSpace(space.handle)).retain).toBe(true);
  });

  it('small objects are never discarded, with or without retain', () => {
    const { space, pool } = makePool();
    const discard = vi.spyOn(space, 'discard');
    const ps = Array.from({ length: 100 }, (_, i) => pool.malloc(32 << i % 16));
    for (const p of ps) pool.free(p);
    pool.flush();
    pool.detach();
    expect(discard).not.toHaveBeenCalled();
  });
});

describe('flush and detach', () => {
  it('flush moves every local list and free large block to the global lists', () => {
    const { space, pool } = makePool();
    const other = ClassicPool.open(openAddressSpace(space.handle));
    const small = [pool.malloc(50), pool.malloc(5000)];
    const big = pool.malloc(4 * MiB);
    for (const p of [...small, big]) pool.free(p);
    pool.flush();
    expect(pool.stats().perClass[1]!.free).toBe(1); // now on the global stack
    expect(other.malloc(64)).toBe(small[0]);
    expect(other.malloc(8192)).toBe(small[1]);
    expect(other.malloc(4 * MiB)).toBe(big);
    pool.check();
    other.check();
  });

  it('detach hands the rest of every bump range to the global stacks: nothing is stranded', () => {
    const { space, pool } = makePool();
    const first = pool.malloc(32);
    const reserved = space.reservedBytes;
    pool.detach();
    pool.check();
    const other = ClassicPool.open(openAddressSpace(space.handle));
    const n = listCapacity(0);
    const got = new Set<number>();
    for (let i = 0; i < n - 1; i++) got.add(other.malloc(32));
    expect(got.size).toBe(n - 1);
    for (const p of got) expect(p >= first + 32 && p < first + MiB).toBe(true); // the rest of that block
    expect(space.reservedBytes - reserved).toBe(0);
    // The free chunk rest went to the global list and serves the other agent's next block.
    expect(other.malloc(100)).toBeLessThan(first);
    expect(space.reservedBytes - reserved).toBe(0);
    other.check();
  });
});
