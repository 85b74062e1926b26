import { describe, expect, it } from 'vitest';
import { GRANULE, HeapError, PAGE_SIZE, createAddressSpace, openAddressSpace, type AddressSpace } from '@paddock/platform';
import { INBOXES_PER_SEGMENT, Registry, SEGMENT_RESERVE_BYTES } from '@paddock/registry';

const GiB = 2 ** 30;

function setup(maxBytes = GiB): { space: AddressSpace; registry: Registry } {
  const space = createAddressSpace({ maxBytes, pageReturn: 'none' });
  return { space, registry: Registry.create(space) };
}

/** Reserves and commits `bytes` of scratch memory for batch nodes. */
function scratch(space: AddressSpace, bytes: number, align = GRANULE): number {
  const base = space.reserve(bytes, align);
  space.commit(base, bytes);
  return base;
}

/** Follows a taken inbox list through word 0 of each node; returns word 1 of each, newest first. */
function walk(space: AddressSpace, head: number): number[] {
  const out: number[] = [];
  for (let p = head; p !== 0; p = space.i32[p >>> 2]! >>> 0) {
    out.push(space.i32[(p >>> 2) + 1]!);
    if (out.length > 1e6) throw new Error('cycle');
  }
  return out;
}

function expectHeapError(fn: () => unknown, code: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(HeapError);
  expect((caught as HeapError).code).toBe(code);
}

describe('owner slots', () => {
  it('start at 1, count up, are never reused, and need no segment until taken', () => {
    const { space, registry } = setup();
    expect(space.root(1)).toBe(registry.rootAddress);
    expect(registry.ownerCount()).toBe(0);
    expect(registry.segmentCount()).toBe(0);
    expect(Array.from({ length: 5 }, () => registry.takeOwnerSlot())).toEqual([1, 2, 3, 4, 5]);
    expect(registry.segmentCount()).toBe(1);
    const other = Registry.open(openAddressSpace(space.handle, { pageReturn: 'none' }));
    expect(other.takeOwnerSlot()).toBe(6);
    expect(registry.takeOwnerSlot()).toBe(7);
    expect(registry.ownerCount()).toBe(7);
    expect(other.ownerCount()).toBe(7);
  });

  it('owners 256 slots apart get distinct inboxes; the slot count grows past a segment boundary', () => {
    const { space, registry } = setup();
    const n = 2 * INBOXES_PER_SEGMENT + 100;
    for (let i = 1; i <= n; i++) expect(registry.takeOwnerSlot()).toBe(i);
    expect(registry.ownerCount()).toBe(n);
    expect(registry.segmentCount()).toBe(3);
    expect(registry.segmentList()).toHaveLength(3);
    const inboxes = new Set<number>();
    for (let s = 1; s <= n; s++) {
      const a = registry.inboxAddress(s);
      expect(a % 4).toBe(0);
      expect(space.isCommitted(a, 4)).toBe(true);
      inboxes.add(a);
    }
    expect(inboxes.size).toBe(n);
    const apart = [1, 257, 513].map((s) => registry.inboxAddress(s));
    expect(new Set(apart).size).toBe(3);
    // A delivery to one of them is seen there and nowhere else.
    const node = scratch(space, PAGE_SIZE);
    space.i32[(node >>> 2) + 1] = 42;
    registry.pushInbox(257, node, node);
    expect(registry.takeInbox(1)).toBe(0);
    expect(registry.takeInbox(513)).toBe(0);
    expect(walk(space, registry.takeInbox(257))).toEqual([42]);
    expect(registry.takeInbox(257)).toBe(0);
    // A second agent finds the same inboxes through the shared segment list.
    const other = Registry.open(openAddressSpace(space.handle, { pageReturn: 'none' }));
    expect([1, 257, 513, n].map((s) => other.inboxAddress(s))).toEqual([1, 257, 513, n].map((s) => registry.inboxAddress(s)));
  });

  it("the loser of a segment append race gives its segment back and uses the winner's", () => {
    const { space, registry: a } = setup();
    for (let i = 0; i < INBOXES_PER_SEGMENT - 1; i++) a.takeOwnerSlot(); // slots 1..255: segment 0 only
    const spaceB = openAddressSpace(space.handle, { pageReturn: 'none' });
    const b = Registry.open(spaceB);
    const reserve = spaceB.reserve.bind(spaceB);
    let mine = 0;
    // b takes slot 256 and needs segment 1; while b reserves its copy, a appends segment 1 first.
    spaceB.reserve = (size: number, align?: number): number => {
      a.inboxAddress(INBOXES_PER_SEGMENT);
      mine = reserve(size, align);
      return mine;
    };
    const reservedBefore = space.reservedBytes;
    expect(b.takeOwnerSlot()).toBe(INBOXES_PER_SEGMENT);
    spaceB.reserve = reserve;
    expect(mine).not.toBe(0);
    expect(b.appendRacesLost()).toBe(1);
    expect(b.segmentCount()).toBe(2);
    expect(b.inboxAddress(INBOXES_PER_SEGMENT)).toBe(a.inboxAddress(INBOXES_PER_SEGMENT));
    expect(b.segmentList()).toEqual(a.segmentList());
    expect(b.segmentList()).not.toContain(mine);
    expect(space.isReserved(mine, SEGMENT_RESERVE_BYTES)).toBe(false);
    expect(space.reservedBytes - reservedBefore).toBe(SEGMENT_RESERVE_BYTES);
  });

  it('an agent that only frees takes no slot (single agent view)', () => {
    const { space, registry } = setup();
    const owner = registry.takeOwnerSlot();
    const freer = Registry.open(openAddressSpace(space.handle, { pageReturn: 'none' }));
    const node = scratch(space, PAGE_SIZE);
    freer.inboxAddress(owner);
    freer.pushInbox(owner, node, node);
    expect(freer.takeInbox(owner)).toBe(node); // draining is not owning either
    expect(registry.ownerCount()).toBe(1);
    expect(registry.segmentCount()).toBe(1);
  });
});

describe('inboxes', () => {
  it('push batches lock-free and hand the whole list over in one take', () => {
    const { space, registry } = setup();
    const slot = registry.takeOwnerSlot();
    const base = scratch(space, PAGE_SIZE);
    // Three batches: [a1 -> a2], [b], [c1 -> c2 -> c3]; the link word is the tail node's word 0.
    const node = (i: number, payload: number, next = 0): number => {
      const p = base + i * 8;
      space.i32[p >>> 2] = next;
      space.i32[(p >>> 2) + 1] = payload;
      return p;
    };
    const a2 = node(1, 12);
    const a1 = node(0, 11, a2);
    registry.pushInbox(slot, a1, a2);
    const b = node(2, 21);
    registry.pushInbox(slot, b, b);
    const c3 = node(5, 33);
    const c2 = node(4, 32, c3);
    const c1 = node(3, 31, c2);
    registry.pushInbox(slot, c1, c3);
    const head = registry.takeInbox(slot);
    expect(head).toBe(c1);
    expect(walk(space, head)).toEqual([31, 32, 33, 21, 11, 12]);
    expect(registry.takeInbox(slot)).toBe(0);
  });

  it('a push into the empty inbox of a parked owner notifies the inbox word; unparked, or into a full inbox, it does not', async () => {
    const { space, registry } = setup();
    const slot = registry.takeOwnerSlot();
    const base = scratch(space, PAGE_SIZE);
    const inbox = registry.inboxAddress(slot) >>> 2;
    const batch = (i: number): number => {
      const p = base + i * 8;
      space.i32[p >>> 2] = 0;
      return p;
    };
    // not parked: nobody is told (the wait runs to its time-out)
    let waiting = Atomics.waitAsync(space.i32, inbox, 0, 50);
    registry.pushInbox(slot, batch(0), batch(0));
    expect(waiting.async).toBe(true);
    expect(await waiting.value).toBe('timed-out');
    registry.takeInbox(slot);
    // parked: the first batch wakes the waiter at once
    registry.setParked(slot, true);
    waiting = Atomics.waitAsync(space.i32, inbox, 0, 5000);
    registry.pushInbox(slot, batch(1), batch(1));
    expect(await waiting.value).toBe('ok');
    // a push onto a non-empty inbox notifies nobody (the owner was told already)
    waiting = Atomics.waitAsync(space.i32, inbox, space.i32[inbox]!, 50);
    registry.pushInbox(slot, batch(2), batch(2));
    expect(await waiting.value).toBe('timed-out');
    registry.setParked(slot, false);
  });

  it('keeps batch addresses above 2 GiB whole', () => {
    const { space, registry } = setup(4 * GiB);
    const slot = registry.takeOwnerSlot();
    // Reserve the whole upper half; commit its first and last page (the buffer grows to 4 GiB).
    const high = space.reserve(2 ** 31, 2 ** 31);
    expect(high).toBe(2 ** 31);
    space.commit(high, PAGE_SIZE);
    space.commit(4 * GiB - PAGE_SIZE, PAGE_SIZE);
    const p = 4 * GiB - 8;
    space.i32[(high >>> 2) + 1] = 1;
    space.i32[(p >>> 2) + 1] = 2;
    registry.pushInbox(slot, high, high);
    registry.pushInbox(slot, p, p);
    const head = registry.takeInbox(slot);
    expect(head).toBe(p);
    expect(space.i32[p >>> 2]! >>> 0).toBe(high);
    expect(walk(space, head)).toEqual([2, 1]);
  });

  it('rejects bad slots and bad addresses before touching the inbox', () => {
    const { space, registry } = setup();
    const slot = registry.takeOwnerSlot();
    const node = scratch(space, PAGE_SIZE);
    registry.pushInbox(slot, node, node);
    const inbox = registry.inboxAddress(slot) >>> 2;
    const before = space.i32[inbox];
    for (const bad of [0, -1, 1.5, NaN]) expect(() => registry.inboxAddress(bad)).toThrow(RangeError);
    expect(() => registry.inboxAddress(2)).toThrow(/has not been taken/);
    expect(() => registry.pushInbox(300, node + 8, node + 8)).toThrow(RangeError);
    expectHeapError(() => registry.pushInbox(slot, 0, node + 8), 'BAD_POINTER');
    expectHeapError(() => registry.pushInbox(slot, 2 * GiB, node + 8), 'BAD_POINTER');
    expectHeapError(() => registry.pushInbox(slot, node + 8, node + 10), 'MISALIGNED');
    expectHeapError(() => registry.pushInbox(slot, node + 8, GiB - 4 - PAGE_SIZE * 1000), 'BAD_POINTER');
    expect(space.i32[inbox]).toBe(before);
    expect(space.i32[(node + 8) >>> 2]).toBe(0);
    expect(registry.segmentCount()).toBe(1);
  });

  it('keeps a state word per slot for later layers', () => {
    const { space, registry } = setup();
    const a = registry.takeOwnerSlot();
    for (let i = 0; i < 300; i++) registry.takeOwnerSlot();
    const b = 257;
    expect(registry.slotState(a)).toBe(0);
    registry.setSlotState(a, 2);
    expect(registry.slotState(a)).toBe(2);
    expect(registry.slotState(b)).toBe(0);
    expect(registry.casSlotState(a, 1, 3)).toBe(2);
    expect(registry.slotState(a)).toBe(2);
    expect(registry.casSlotState(a, 2, 3)).toBe(2);
    expect(registry.slotState(a)).toBe(3);
    // The state word is not the inbox word.
    expect(registry.takeInbox(a)).toBe(0);
    expect(registry.inboxAddress(a)).toBe(registry.recordAddress(a));
    expect(() => registry.setSlotState(a, 2 ** 31)).toThrow(RangeError);
    const other = Registry.open(openAddressSpace(space.handle, { pageReturn: 'none' }));
    expect(other.slotState(a)).toBe(3);
  });

  it("reads a slot whose segment another agent appended beyond this agent's views", () => {
    // Each call finds the segment first (growing this agent's views), then reads through the new view: reading
    // the view before the lookup (argument order) threw "Invalid atomic access index" (swarm, CI seed 0x8d4a852a).
    const calls: [(r: Registry, slot: number) => number, number][] = [
      [(r, s) => r.slotState(s), 0],
      [(r, s) => (r.setSlotState(s, 5), r.slotState(s)), 5],
      [(r, s) => r.casSlotState(s, 0, 5), 0],
      [(r, s) => r.takeInbox(s), 0],
    ];
    for (const [call, expected] of calls) {
      const { space, registry } = setup();
      const seen = space.viewBytes;
      const other = openAddressSpace(space.handle, { pageReturn: 'none' });
      scratch(other, 64 * 1024 * 1024); // the buffer grows; this agent's views do not know yet
      const theirs = Registry.open(other);
      const slot = theirs.takeOwnerSlot(); // segment 0, appended past the scratch
      expect(theirs.recordAddress(slot)).toBeGreaterThanOrEqual(seen);
      expect(space.viewBytes).toBe(seen);
      expect(call(registry, slot)).toBe(expected);
    }
  });

  it('refuses to open without a registry, or to create a second one', () => {
    const space = createAddressSpace({ maxBytes: GiB, pageReturn: 'none' });
    expectHeapError(() => Registry.open(space), 'BAD_HANDLE');
    const registry = Registry.create(space);
    expectHeapError(() => Registry.create(space), 'BAD_HANDLE');
    const g = registry.rootAddress >>> 2;
    const magic = space.i32[g]!;
    space.i32[g] = 123;
    expectHeapError(() => Registry.open(space), 'BAD_HANDLE');
    space.i32[g] = magic;
    expect(Registry.open(space).rootAddress).toBe(registry.rootAddress);
    expect(SEGMENT_RESERVE_BYTES).toBe(GRANULE);
  });
});
