/**
 * The classic pool's shared structures, as plain functions over the pool header: the global per-class
 * stacks of 1 MiB lists (a Treiber stack with a generation tag), the global list of free large blocks
 * (exchange-and-merge), and the agents' statistics records.
 */
import type { AddressSpace } from '@paddock/platform';
import {
  H_ENTRY,
  H_LARGE_HEAD,
  H_RECORDS,
  H_STACK_COUNT,
  RECORDS_PER_PAGE,
  RECORD_PAGE_BYTES,
  largeKey,
  recordAddress,
} from './layout.js';

const LOW32 = 0xffffffffn;

/**
 * Pushes the list headed by `head` (`length` objects, linked through their first words) onto the global
 * stack of class `c`. The list's length goes into the head's third word and the stack's previous top into
 * its fourth; one 64-bit CAS publishes both with a fresh tag.
 */
export function pushList(space: AddressSpace, hdr: Int32Array, heads: BigInt64Array, c: number, head: number, length: number): void {
  space.covers(head + 16);
  const u32 = space.u32;
  const i = head >>> 2;
  u32[i + 2] = length;
  Atomics.add(hdr, H_STACK_COUNT + c, length);
  for (;;) {
    const old = Atomics.load(heads, c);
    u32[i + 3] = Number(old & LOW32);
    const tag = BigInt.asUintN(32, (old >> 32n) + 1n);
    if (Atomics.compareExchange(heads, c, old, BigInt.asIntN(64, (tag << 32n) | BigInt(head))) === old) return;
  }
}

/**
 * Pops the top list of class `c`'s global stack; returns its head (0 when the stack is empty). ABA: the
 * head's link is read before the CAS, and by then the head may have been popped, reused and pushed back
 * with another link; the CAS compares the tag too, which every push and pop bumps, so it fails then.
 * Only 2^32 pushes and pops between one agent's load and its CAS could wrap the tag to the same value.
 */
export function popList(space: AddressSpace, heads: BigInt64Array, c: number): number {
  for (;;) {
    const old = Atomics.load(heads, c);
    const head = Number(old & LOW32);
    if (head === 0) return 0;
    // A head pushed by another agent may lie beyond this agent's views; pool memory is never released,
    // so the read is always inside the buffer once the views catch up.
    space.covers(head + 16);
    const next = space.u32[(head >>> 2) + 3]!;
    const tag = BigInt.asUintN(32, (old >> 32n) + 1n);
    if (Atomics.compareExchange(heads, c, old, BigInt.asIntN(64, (tag << 32n) | BigInt(next))) === old) return head;
  }
}

/**
 * The global large list: free blocks sorted by (footprint, address), linked through LINK[m]. Nobody
 * walks it in place: an agent takes the whole list with one exchange (the head becomes 0), works on it
 * privately, and puts it back with a CAS from 0; if another agent put a list there meanwhile, it takes
 * that one too and merges the two. No agent ever waits, no pointer is compared after being reused (the
 * only CAS expects 0, and "empty" means the same thing whenever it is seen), and while one agent holds
 * the list the others simply find it empty and reserve fresh memory instead.
 */
export class LargeList {
  private readonly linkAt: number;

  constructor(private readonly hdr: Int32Array, mibs: number) {
    this.linkAt = H_ENTRY + 2 * mibs;
  }

  /** Takes the whole list (0 when empty or held by another agent). */
  take(): number {
    if (Atomics.load(this.hdr, H_LARGE_HEAD) === 0) return 0;
    return Atomics.exchange(this.hdr, H_LARGE_HEAD, 0) >>> 0;
  }

  /** Puts a private sorted list back, merging in whatever other agents put there meanwhile. */
  putBack(list: number): void {
    while (list !== 0) {
      if (Atomics.compareExchange(this.hdr, H_LARGE_HEAD, 0, list | 0) === 0) return;
      list = this.merge(list, Atomics.exchange(this.hdr, H_LARGE_HEAD, 0) >>> 0);
    }
  }

  next(block: number): number {
    return this.hdr[this.linkAt + (block >>> 20)]! >>> 0;
  }

  setNext(block: number, next: number): void {
    this.hdr[this.linkAt + (block >>> 20)] = next | 0;
  }

  /** Sort key of a listed block: footprint (from its entry), then address. */
  key(block: number): number {
    const m = block >>> 20;
    return largeKey(this.hdr[H_ENTRY + m]! >>> 8, m);
  }

  /** Merges two private sorted lists. */
  merge(a: number, b: number): number {
    let head = 0;
    let tail = 0;
    while (a !== 0 && b !== 0) {
      let take: number;
      if (this.key(a) <= this.key(b)) {
        take = a;
        a = this.next(a);
      } else {
        take = b;
        b = this.next(b);
      }
      if (tail === 0) head = take;
      else this.setNext(tail, take);
      tail = take;
    }
    const rest = a !== 0 ? a : b;
    if (tail === 0) return rest;
    this.setNext(tail, rest);
    return head;
  }
}

/**
 * Claims a statistics record for a new agent: a slot in the newest 64 KiB record page (one fetch-add),
 * or a fresh page pushed onto the page list (a push-only list: pages are never removed, so no ABA).
 * Returns the record's address.
 */
export function claimRecord(space: AddressSpace, hdr: Int32Array): number {
  for (;;) {
    const page = Atomics.load(hdr, H_RECORDS) >>> 0;
    if (page !== 0) {
      space.covers(page + RECORD_PAGE_BYTES);
      const slot = Atomics.add(space.i32, (page >>> 2) + 1, 1);
      if (slot < RECORDS_PER_PAGE) return recordAddress(page, slot);
    }
    const fresh = space.reserve(RECORD_PAGE_BYTES);
    space.commit(fresh, RECORD_PAGE_BYTES);
    space.u8.fill(0, fresh, fresh + RECORD_PAGE_BYTES);
    const i32 = space.i32;
    i32[(fresh >>> 2) + 1] = 1; // slot 0 is ours
    for (;;) {
      const top = Atomics.load(hdr, H_RECORDS);
      i32[fresh >>> 2] = top;
      if (Atomics.compareExchange(hdr, H_RECORDS, top, fresh | 0) === top) return recordAddress(fresh, 0);
    }
  }
}

/** Calls `visit(address)` for every claimed record of every agent. */
export function forEachRecord(space: AddressSpace, hdr: Int32Array, visit: (record: number) => void): void {
  let page = Atomics.load(hdr, H_RECORDS) >>> 0;
  while (page !== 0) {
    space.covers(page + RECORD_PAGE_BYTES);
    const claimed = Math.min(RECORDS_PER_PAGE, Atomics.load(space.i32, (page >>> 2) + 1));
    for (let s = 0; s < claimed; s++) visit(recordAddress(page, s));
    page = space.i32[page >>> 2]! >>> 0;
  }
}
