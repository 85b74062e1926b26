/**
 * The owner registry: owner slots taken with one fetch-add, and one inbox per slot.
 *
 * Registry root (one reserved granule, first page committed; its address is root word 1), Int32 words:
 *
 *   0 magic 'PDRR'   1 version   2 slots taken (the last slot handed out; slots start at 1)
 *   3 segments appended   4 first segment (0 = none yet)   5 append races lost
 *   6 departures (owners that left or agents that died, counted; agents compare it with what they saw last)
 *   7..15 reserved (0)
 *
 * Segment (one reserved granule, first two pages committed), Int32 words, then 256 slot records:
 *
 *   0 magic 'PDRS'   1 segment index k   2 next segment (0 = none yet)   3..15 reserved (0)
 *   byte 64 + 16 * i: record of slot 256 k + i = [inbox head, state, spare, spare]
 *
 * Slot s lives in segment `s >>> 8` at record `s & 255` (record 0 of segment 0 belongs to no owner: slot 0
 * means "no owner"). Segments form a list from root word 4 through each segment's `next` word; a missing
 * segment is appended by whoever needs it first: reserve, zero, write its header, then one CAS of the
 * `next` word from 0. The loser of that race releases its segment and uses the winner's. An inbox is a
 * Treiber stack of batches that is only ever pushed (one CAS per batch) and emptied whole (one exchange),
 * so there is no ABA: a pusher whose CAS sees the old head again has linked its batch to exactly that head.
 * See docs/design/registry.md.
 */
import { GRANULE, HeapError, PAGE_SIZE, checkAddressSpace, describeValue, formatAddress, type AddressSpace } from '@paddock/platform';

/** Inboxes (slot records) per segment. */
export const INBOXES_PER_SEGMENT = 256;
/** Bytes of one slot record: inbox head, state, parked flag, a spare word. */
export const SLOT_RECORD_BYTES = 16;
/** Root word of the address space that holds the registry root's address. */
export const REGISTRY_ROOT = 1;

const ROOT_MAGIC = 0x52524450; // 'PDRR'
const SEGMENT_MAGIC = 0x53524450; // 'PDRS'
const VERSION = 1;

// Root words.
const G_MAGIC = 0;
const G_VERSION = 1;
const G_SLOTS = 2;
const G_SEGMENTS = 3;
const G_FIRST = 4;
const G_LOST = 5;
const G_DEPARTURES = 6;
/** Bytes of the registry root in use. */
export const REGISTRY_ROOT_BYTES = 64;

// Segment words.
const S_MAGIC = 0;
const S_INDEX = 1;
const S_NEXT = 2;
/** Bytes of a segment header; the records follow. */
export const SEGMENT_HEADER_BYTES = 64;
/** Bytes of a segment that are committed: header and records, rounded up to pages. */
export const SEGMENT_COMMIT_BYTES = Math.ceil((SEGMENT_HEADER_BYTES + INBOXES_PER_SEGMENT * SLOT_RECORD_BYTES) / PAGE_SIZE) * PAGE_SIZE;
/** Bytes reserved per segment (one granule). */
export const SEGMENT_RESERVE_BYTES = GRANULE;

// Slot record words.
const SR_INBOX = 0;
const SR_STATE = 1;
/** 1 while the slot's owner is parked idle, waiting (`Atomics.waitAsync`) on its inbox word. */
const SR_PARKED = 2;

/** One agent's handle on a heap's owner registry. */
export class Registry {
  /** The address space the heap lives in. */
  readonly space: AddressSpace;
  /** Byte address of the registry root. */
  readonly rootAddress: number;

  /** Int32 index of the registry root. */
  private readonly gw: number;
  /** Segment addresses this agent has seen, by index; segments never move or leave, so the cache never goes stale. */
  private readonly segments: number[] = [];
  /** Most segments the space could ever hold: bounds walks over a corrupted list. */
  private readonly maxSegments: number;

  private constructor(space: AddressSpace, rootAddress: number) {
    this.space = space;
    this.rootAddress = rootAddress;
    this.gw = rootAddress >>> 2;
    this.maxSegments = space.maxBytes / SEGMENT_RESERVE_BYTES;
  }

  /**
   * First agent: reserves and commits the registry root and publishes its address in root word 1.
   * No segment exists until the first owner slot or inbox needs one.
   * @throws HeapError `BAD_HANDLE` if the space already has a registry.
   */
  static create(space: AddressSpace): Registry {
    checkAddressSpace(space);
    if (space.root(REGISTRY_ROOT) !== 0) {
      throw new HeapError('BAD_HANDLE', `this address space already has a registry at ${formatAddress(space.root(REGISTRY_ROOT))}: open it with Registry.open(space)`);
    }
    const addr = space.reserve(REGISTRY_ROOT_BYTES);
    space.commit(addr, PAGE_SIZE);
    space.u8.fill(0, addr, addr + PAGE_SIZE); // a reused range keeps old bytes without native page return
    const i32 = space.i32;
    const g = addr >>> 2;
    i32[g + G_VERSION] = VERSION;
    Atomics.store(i32, g + G_MAGIC, ROOT_MAGIC);
    const seen = space.casRoot(REGISTRY_ROOT, 0, addr);
    if (seen !== 0) {
      space.release(addr, REGISTRY_ROOT_BYTES);
      throw new HeapError('BAD_HANDLE', `another agent created a registry at ${formatAddress(seen)} first: open it with Registry.open(space)`);
    }
    return new Registry(space, addr);
  }

  /**
   * Other agents: reads root word 1 and checks the registry root there.
   * @throws HeapError `BAD_HANDLE` when there is no registry or the root is not one.
   */
  static open(space: AddressSpace): Registry {
    checkAddressSpace(space);
    const addr = space.root(REGISTRY_ROOT) >>> 0;
    const bad = (why: string): never => {
      throw new HeapError('BAD_HANDLE', `no owner registry in this address space: ${why}`, addr);
    };
    if (addr === 0) bad('root word 1 is empty (create it with Registry.create)');
    if (addr % GRANULE !== 0 || addr + PAGE_SIZE > space.maxBytes) bad(`root word 1 holds ${formatAddress(addr)}, not a registry address`);
    if (!space.covers(addr + PAGE_SIZE) || !space.isCommitted(addr, PAGE_SIZE)) bad(`the registry root at ${formatAddress(addr)} is not committed`);
    const i32 = space.i32;
    const g = addr >>> 2;
    if (Atomics.load(i32, g + G_MAGIC) !== ROOT_MAGIC) bad(`no registry magic at ${formatAddress(addr)}`);
    if (i32[g + G_VERSION] !== VERSION) bad(`registry version ${i32[g + G_VERSION]}, this build reads ${VERSION}`);
    return new Registry(space, addr);
  }

  /**
   * Takes a new owner slot with one `Atomics.add`: 1, 2, 3, ... across all agents, never reused, no cap
   * but the address space. Makes sure the slot's segment exists, so its inbox is ready.
   * Call it when the agent carves its first arena; an agent that only frees never needs one.
   * @throws HeapError `OUT_OF_MEMORY` when a new segment cannot be reserved (the slot number is then spent).
   */
  takeOwnerSlot(): number {
    const slot = Atomics.add(this.space.i32, this.gw + G_SLOTS, 1) + 1;
    if (slot <= 0) throw new RangeError('owner slot numbers are exhausted (2^31 - 1 taken)');
    this.inboxAddress(slot);
    return slot;
  }

  /** Owner slots taken so far, by all agents (the highest slot number handed out). */
  ownerCount(): number {
    return Atomics.load(this.space.i32, this.gw + G_SLOTS);
  }

  /**
   * Counts one departure (an owner that detached, an agent that died): agents that look for owners to take
   * over read this first and walk the slots only when it moved since they last looked.
   */
  noteDeparture(): void {
    Atomics.add(this.space.i32, this.gw + G_DEPARTURES, 1);
  }

  /** Departures counted so far, by all agents (see {@link noteDeparture}). */
  departures(): number {
    return Atomics.load(this.space.i32, this.gw + G_DEPARTURES);
  }

  /** Segments appended so far, by all agents. */
  segmentCount(): number {
    return Atomics.load(this.space.i32, this.gw + G_SEGMENTS);
  }

  /** Segment appends lost to another agent (each loser gave its segment back). */
  appendRacesLost(): number {
    return Atomics.load(this.space.i32, this.gw + G_LOST);
  }

  /**
   * Byte address of slot `slot`'s inbox head word (4-byte aligned; Int32 index `addr >>> 2`). Finds the
   * slot's segment through this agent's cache, walking and appending segments when needed.
   * @throws RangeError when `slot` is not a slot that has been taken.
   */
  inboxAddress(slot: number): number {
    return this.recordAddress(slot) + SR_INBOX * 4;
  }

  /**
   * Pushes a batch onto slot `slot`'s inbox, lock-free: stores the current head at `linkAddress` (an Int32
   * word inside the batch), then CASes the head from that value to `head`; retries if another push or a
   * take came between. The batch must be committed memory owned by the caller until this returns.
   * @throws RangeError for a slot not taken; HeapError `BAD_POINTER` for a `head` of 0 or outside the heap,
   * or a `linkAddress` outside this agent's committed view; `MISALIGNED` for a `linkAddress` not 4-aligned.
   */
  pushInbox(slot: number, head: number, linkAddress: number): void {
    const inbox = this.inboxAddress(slot) >>> 2;
    const space = this.space;
    if (typeof head !== 'number' || !Number.isInteger(head) || head <= 0 || head >= space.maxBytes) {
      throw new HeapError('BAD_POINTER', `cannot push batch ${describeValue(head)} to inbox ${slot}: not a heap address`, head);
    }
    if (typeof linkAddress !== 'number' || !Number.isInteger(linkAddress) || linkAddress <= 0 || linkAddress > space.maxBytes - 4) {
      throw new HeapError('BAD_POINTER', `cannot push to inbox ${slot}: link address ${describeValue(linkAddress)} is not a heap address`, linkAddress);
    }
    if ((linkAddress & 3) !== 0) {
      throw new HeapError('MISALIGNED', `cannot push to inbox ${slot}: link address ${formatAddress(linkAddress)} is not 4-byte aligned`, linkAddress);
    }
    if (!space.covers(linkAddress + 4)) {
      throw new HeapError('BAD_POINTER', `cannot push to inbox ${slot}: link address ${formatAddress(linkAddress)} is beyond the committed buffer`, linkAddress);
    }
    const i32 = space.i32;
    const link = linkAddress >>> 2;
    const value = head | 0;
    for (;;) {
      const old = Atomics.load(i32, inbox);
      Atomics.store(i32, link, old); // the batch's tail now points at the list it joins
      if (Atomics.compareExchange(i32, inbox, old, value) === old) {
        // The first batch into an empty inbox wakes an owner parked on it (one load of the same record otherwise).
        if (old === 0 && Atomics.load(i32, inbox + SR_PARKED) !== 0) Atomics.notify(i32, inbox, 1);
        return;
      }
    }
  }

  /**
   * Marks slot `slot`'s owner parked (or no longer): while it is, the push that finds its inbox empty notifies
   * the inbox word, so an idle owner waiting on it with `Atomics.waitAsync` takes the batch in at once.
   */
  setParked(slot: number, parked: boolean): void {
    Atomics.store(this.space.i32, (this.recordAddress(slot) >>> 2) + SR_PARKED, parked ? 1 : 0);
  }

  /** The head of slot `slot`'s inbox (`Atomics.load`): the newest batch's address, or 0 if empty. */
  inboxHead(slot: number): number {
    const inbox = this.inboxAddress(slot) >>> 2; // first: finding a new segment may grow the views
    return Atomics.load(this.space.i32, inbox) >>> 0;
  }

  /** Takes slot `slot`'s whole inbox with one `Atomics.exchange`: the newest batch's address, or 0 if empty. */
  takeInbox(slot: number): number {
    const inbox = this.inboxAddress(slot) >>> 2; // first: finding a new segment may grow the views
    return Atomics.exchange(this.space.i32, inbox, 0) >>> 0;
  }

  /**
   * The slot's state word (record word 1): 0 at creation; its meaning (live, detached, adopted) belongs to
   * the allocator layer. Read with `Atomics.load`.
   */
  slotState(slot: number): number {
    const word = (this.recordAddress(slot) >>> 2) + SR_STATE; // first: finding a new segment may grow the views
    return Atomics.load(this.space.i32, word);
  }

  /** Sets the slot's state word with `Atomics.store`. @throws RangeError unless `state` is an int32. */
  setSlotState(slot: number, state: number): void {
    checkInt32('state', state);
    const word = (this.recordAddress(slot) >>> 2) + SR_STATE;
    Atomics.store(this.space.i32, word, state);
  }

  /**
   * Sets the slot's state word to `state` if it holds `expected` (one `Atomics.compareExchange`); returns
   * the value it held. For claims such as adopting a detached owner's slot.
   */
  casSlotState(slot: number, expected: number, state: number): number {
    checkInt32('expected', expected);
    checkInt32('state', state);
    const word = (this.recordAddress(slot) >>> 2) + SR_STATE;
    return Atomics.compareExchange(this.space.i32, word, expected, state);
  }

  /**
   * Byte address of the slot's record: [inbox head, state, spare, spare]. The spare words are reserved.
   * @throws RangeError when `slot` is not a slot that has been taken.
   */
  recordAddress(slot: number): number {
    if (typeof slot !== 'number' || !Number.isInteger(slot) || slot < 1) {
      throw new RangeError(`owner slot must be an integer from 1, got ${describeValue(slot)}`);
    }
    if (slot > Atomics.load(this.space.i32, this.gw + G_SLOTS)) {
      throw new RangeError(`owner slot ${slot} has not been taken (${this.ownerCount()} taken so far)`);
    }
    const k = slot >>> 8;
    const seg = k < this.segments.length ? this.segments[k]! : this.findSegment(k);
    return seg + SEGMENT_HEADER_BYTES + (slot & 255) * SLOT_RECORD_BYTES;
  }

  /** Addresses of all segments, in index order (walks the shared list). */
  segmentList(): number[] {
    const out: number[] = [];
    let seg = Atomics.load(this.space.i32, this.gw + G_FIRST) >>> 0;
    for (let k = 0; seg !== 0; k++) {
      this.checkSegment(seg, k);
      out.push(seg);
      seg = Atomics.load(this.space.i32, (seg >>> 2) + S_NEXT) >>> 0;
    }
    return out;
  }

  // ---- internals ---------------------------------------------------------------------------------

  /** Slow path of {@link recordAddress}: walks to segment `want` from the last cached one, appending missing ones. */
  private findSegment(want: number): number {
    const segments = this.segments;
    let k = segments.length;
    // The `next` word that leads to segment k: the root's first-segment word, or segment k-1's next.
    let nextWord = k === 0 ? this.gw + G_FIRST : (segments[k - 1]! >>> 2) + S_NEXT;
    for (;;) {
      let seg = Atomics.load(this.space.i32, nextWord) >>> 0;
      if (seg === 0) seg = this.appendSegment(nextWord, k);
      this.checkSegment(seg, k);
      segments.push(seg);
      if (k === want) return seg;
      nextWord = (seg >>> 2) + S_NEXT;
      k++;
    }
  }

  /**
   * Appends segment `k` at the `next` word `nextWord`: reserve, commit, zero, header, then one CAS from 0.
   * Returns the segment now linked there (ours, or the winner's after giving ours back).
   */
  private appendSegment(nextWord: number, k: number): number {
    const space = this.space;
    const seg = space.reserve(SEGMENT_RESERVE_BYTES);
    try {
      space.commit(seg, SEGMENT_COMMIT_BYTES);
    } catch (err) {
      space.release(seg, SEGMENT_RESERVE_BYTES);
      throw err;
    }
    space.u8.fill(0, seg, seg + SEGMENT_COMMIT_BYTES); // every inbox starts empty, even in a reused range
    const i32 = space.i32;
    const s = seg >>> 2;
    i32[s + S_INDEX] = k;
    i32[s + S_MAGIC] = SEGMENT_MAGIC;
    // The CAS is seq-cst: an agent that loads the new `next` value sees the zeroed records and header.
    const seen = Atomics.compareExchange(i32, nextWord, 0, seg | 0);
    if (seen === 0) {
      Atomics.add(i32, this.gw + G_SEGMENTS, 1);
      return seg;
    }
    space.release(seg, SEGMENT_RESERVE_BYTES); // lost the race: give it back, use the winner's
    Atomics.add(space.i32, this.gw + G_LOST, 1);
    return seen >>> 0;
  }

  /** Checks that list entry `k` at `seg` is segment k and this agent's views reach all of it. */
  private checkSegment(seg: number, k: number): void {
    const space = this.space;
    if (k >= this.maxSegments || seg % GRANULE !== 0 || seg >= space.maxBytes || !space.covers(seg + SEGMENT_COMMIT_BYTES)) {
      throw new HeapError('CORRUPTION', `registry segment ${k} is at ${formatAddress(seg)}, not a segment`, seg);
    }
    const s = seg >>> 2;
    if (Atomics.load(space.i32, s + S_MAGIC) !== SEGMENT_MAGIC || Atomics.load(space.i32, s + S_INDEX) !== k) {
      throw new HeapError('CORRUPTION', `registry segment ${k} at ${formatAddress(seg)} has a bad header`, seg);
    }
  }
}

function checkInt32(name: string, v: number): void {
  if (typeof v !== 'number' || (v | 0) !== v) throw new RangeError(`${name} must be an int32, got ${describeValue(v)}`);
}
