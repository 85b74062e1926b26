/**
 * Frees of other owners' objects, batched: each joins the chain for its owner (the chain map, in the agent area
 * so a reaper finds it: [head, count] per owner slot), and a chain of {@link CHAIN_FLUSH} objects, or every
 * chain when asked, is flushed: the chain itself is the batch (linked through word 0, every object carrying its
 * freed mark; the head holds the length and the link to the next batch) and is pushed onto the owner's inbox
 * with one CAS.
 * Where the batch goes is the owner while it lives, else whoever took it over (see docs/design/arena.md,
 * "Agents that leave"). The batch and its flush live together here, like snmalloc's remote deallocation cache.
 */
import { GRANULE, HeapError, type AddressSpace } from '@paddock/platform';
import { FLUSH_HEAD_OFFSET, G_FLUSH_COUNT, G_FLUSH_OWNER, G_FLUSH_PHASE, G_MAP_ADDR, G_ROUTING, G_MAP_CAP, INLINE_MAP_OFFSET, INLINE_MAP_OWNERS } from './agent-layout.js';
import type { ArenaHeap } from './arena-heap.js';
import { drain } from './drain.js';
import { B_LENGTH, B_NEXT, FREED_MARK } from './layout.js';
import { SLOT_ADOPTED, SLOT_DETACHED, SLOT_LIVE, SLOT_ORPHANED, adoptSlot } from './ownership.js';
import { reapOwner } from './reap.js';

/** A chain for one owner is flushed to its inbox when it holds this many objects. */
export const CHAIN_FLUSH = 32;
/** Slots the chain map starts with; it doubles to fit the largest owner slot seen. */
export const CHAIN_MAP_INITIAL = INLINE_MAP_OWNERS;

/** Bytes reserved for a chain map of `cap` owners (whole granules). */
function chainMapBytes(cap: number): number {
  return Math.ceil((cap * 8) / GRANULE) * GRANULE;
}

/** Gives back the chain map at `map` of `cap` owners unless it is the inline one of the agent area at `area`. */
export function releaseChainMap(space: AddressSpace, area: number, map: number, cap: number): void {
  if (map !== area + INLINE_MAP_OFFSET) space.release(map, chainMapBytes(cap));
}

/** One agent's pending cross-agent frees: the chain map, the owners with a chain, and the flush. */
export class RemoteChains {
  // The fields a foreign free reads come first (V8 lays fields out in the order they are first assigned).
  private readonly heap: ArenaHeap;
  /** Int32 index of the chain map: entry for owner o is [head, count] at mapWord + 2 o. */
  private mapWord: number;
  /** Owners the chain map holds. */
  private mapCap: number;
  /** Owners whose chain holds objects (some may have been flushed since), in the order their chains began. */
  private pendingOwners: Int32Array;
  private pendingCount: number;
  /** Per owner slot (indexed like the chain map): 1 while it is in `pendingOwners`, so it is listed once. */
  private pendingListed: Uint8Array;
  /**
   * Per owner slot (indexed like the chain map): 1 + the departure count at which that owner was last seen live.
   * An owner leaves by marking its slot and then counting the departure, so while the count is unchanged the
   * owner is still live, or has only just marked itself and will read its inbox after counting (and so find a
   * batch pushed now): a flush then needs no look at the slot's state.
   */
  private liveSeen: Int32Array;

  /** The chains of `heap`, whose agent area holds the chain map. */
  constructor(heap: ArenaHeap) {
    this.heap = heap;
    this.mapWord = heap.u32[(heap.agentArea >>> 2) + G_MAP_ADDR]! >>> 2;
    this.mapCap = heap.i32[(heap.agentArea >>> 2) + G_MAP_CAP]!;
    this.pendingOwners = new Int32Array(16);
    this.pendingCount = 0;
    this.pendingListed = new Uint8Array(this.mapCap);
    this.liveSeen = new Int32Array(this.mapCap);
  }

  /** Owners the chain map holds (it doubles as needed). */
  get capacity(): number {
    return this.mapCap;
  }

  /**
   * Frees `p`, an object of owner slot `owner` (not this agent): marks it freed and puts it on that owner's chain.
   * `u32` is the heap's Uint32 view, passed in so that each foreign free reads it without a load of the heap.
   */
  freeForeign(u32: Uint32Array, p: number, owner: number): void {
    u32[(p >>> 2) + 1] = FREED_MARK ^ p;
    if (owner >= this.mapCap) {
      this.growChains(owner);
      u32 = this.heap.u32; // the growth may have grown the buffer
    }
    const e = this.mapWord + 2 * owner;
    u32[p >>> 2] = u32[e]!;
    u32[e] = p;
    const n = u32[e + 1]! + 1;
    u32[e + 1] = n;
    if (n === 1) this.notePending(owner);
    if (n >= CHAIN_FLUSH) this.flushChain(owner);
  }

  /**
   * Grows the chain map by doubling until `owner` fits: a new range is reserved and filled, then published in
   * the agent area (address, then capacity); pending chains are kept. The old map is released unless it is
   * the inline one.
   */
  private growChains(owner: number): void {
    const h = this.heap;
    let cap = this.mapCap;
    while (cap <= owner) cap *= 2;
    const map = h.space.reserve(chainMapBytes(cap));
    h.space.commit(map, cap * 8);
    h.sync();
    const u32 = h.u32;
    const oldWord = this.mapWord;
    const oldCap = this.mapCap;
    u32.copyWithin(map >>> 2, oldWord, oldWord + 2 * oldCap);
    u32.fill(0, (map >>> 2) + 2 * oldCap, (map >>> 2) + 2 * cap);
    const aw = h.agentArea >>> 2;
    Atomics.store(u32, aw + G_MAP_ADDR, map);
    Atomics.store(h.i32, aw + G_MAP_CAP, cap);
    this.mapWord = map >>> 2;
    this.mapCap = cap;
    const seen = new Int32Array(cap);
    seen.set(this.liveSeen);
    this.liveSeen = seen;
    const listed = new Uint8Array(cap);
    listed.set(this.pendingListed);
    this.pendingListed = listed;
    releaseChainMap(h.space, h.agentArea, oldWord << 2, oldCap);
  }

  private notePending(owner: number): void {
    // Listed once until flushChains takes it off: a chain flushed by its 32nd free and begun again leaves the
    // owner listed, so an agent that only frees and never flushes them all keeps a list no longer than its owners.
    if (this.pendingListed[owner] !== 0) return;
    this.pendingListed[owner] = 1;
    if (this.pendingCount === this.pendingOwners.length) {
      const grown = new Int32Array(this.pendingOwners.length * 2);
      grown.set(this.pendingOwners);
      this.pendingOwners = grown;
    }
    this.pendingOwners[this.pendingCount++] = owner;
  }

  /** Flushes every pending chain to its owner's inbox. Returns the objects sent. */
  flushChains(): number {
    let sent = 0;
    // Taken from the end one at a time: a flush that takes a departed owner over may free (and note) more.
    while (this.pendingCount > 0) {
      const owner = this.pendingOwners[--this.pendingCount]!;
      this.pendingListed[owner] = 0;
      if (this.heap.u32[this.mapWord + 2 * owner + 1]! > 0) sent += this.flushChain(owner);
    }
    return sent;
  }

  /**
   * Sends the chain for `owner` home as it is, one batch: its length goes into the head's word 2 and the batch
   * is pushed onto the owner's inbox with one CAS (its word 3 links it to the batch below). Nothing is walked or
   * regrouped: the owner checks every object when it reclaims the batch (drain.ts).
   */
  private flushChain(owner: number): number {
    const h = this.heap;
    // First, where the batch goes: taking a departed owner over may itself flush and drain, so it happens
    // before this chain is read (it may have been sent meanwhile).
    const departed = h.registry.departures();
    const home = this.liveSeen[owner] === departed + 1 ? owner : this.homeOf(owner);
    const u32 = h.u32;
    const e = this.mapWord + 2 * owner;
    const head = u32[e]!;
    if (head === 0) return 0;
    const n = u32[e + 1]!;
    u32[(head >>> 2) + B_LENGTH] = n;
    // Named in the agent area until it is pushed, so a reaper sends it home if this agent dies before the push
    // (the push and the phase reset follow each other with no point between where an agent can be stopped).
    // A block named in the routing word (a cache flush or the exchange sending it home) is on one of this agent's
    // chains by now (this one, when its free set this flush off), where the chain or this flush names it: the routing
    // word lets go of it first, or a reaper of an agent stopped after the push (in the drain or the look below) would
    // find it there, still held freed and on no free list, and free it a second time while it waits in the inbox.
    const aw = h.agentArea >>> 2;
    u32[aw + G_ROUTING] = 0;
    u32[(h.agentArea + FLUSH_HEAD_OFFSET) >>> 2] = head;
    h.i32[aw + G_FLUSH_COUNT] = n;
    h.i32[aw + G_FLUSH_OWNER] = owner;
    Atomics.store(h.i32, aw + G_FLUSH_PHASE, 1);
    u32[e] = 0;
    u32[e + 1] = 0;
    h.registry.pushInbox(home, head, head + 4 * B_NEXT);
    Atomics.store(h.i32, aw + G_FLUSH_PHASE, 0);
    // Ours now (we just took the owner over): reclaim at once. Otherwise, if anyone left since we looked, look
    // again: an owner that left after we read its state is taken over here, so a batch never waits in the
    // inbox of an owner that is gone (an owner marks itself, then counts the departure, then reads its inbox).
    if (home === h.slot) drain(h);
    else if (h.registry.departures() !== departed) this.homeOf(home);
    return n;
  }

  /**
   * The owner slot whose inbox takes frees meant for `owner`: `owner` while it lives; the agent that took it
   * over if it left (followed through takeovers of takeovers); this agent's own slot when `owner` had left
   * and nobody had taken it over yet, because then this agent takes it over here (one CAS decides who: see
   * docs/design/arena.md, "Agents that leave").
   */
  private homeOf(owner: number): number {
    const h = this.heap;
    let slot = owner;
    for (let hops = 0; hops < 1024; hops++) {
      if (slot === h.slot) return slot;
      const departed = h.registry.departures(); // read before the state: see liveSeen
      const state = h.registry.slotState(slot);
      if (state === SLOT_LIVE) {
        if (slot === owner && owner < this.liveSeen.length) this.liveSeen[owner] = departed + 1;
        return slot;
      }
      if ((state & SLOT_ADOPTED) !== 0) {
        slot = state >>> 8;
      } else if (state === SLOT_DETACHED) {
        if (adoptSlot(h, slot, state)) return h.slot;
      } else if (state === SLOT_ORPHANED) {
        // Its agent crashed: reaped here, or (another agent is reaping it) the batch waits in its inbox, which
        // the reaper drains once it has taken the slot over.
        if (!reapOwner(h, slot)) return slot;
      } else {
        return slot;
      }
    }
    throw new HeapError('CORRUPTION', `owner slot ${owner}: its takeovers do not end in a live owner`);
  }

  /** Objects waiting in the chains. */
  pendingObjects(): number {
    let n = 0;
    for (let o = 0; o < this.mapCap; o++) n += this.heap.u32[this.mapWord + 2 * o + 1]!;
    return n;
  }

  /** Gives back a grown chain map (the chains are empty: the agent is leaving). */
  releaseMap(): void {
    releaseChainMap(this.heap.space, this.heap.agentArea, this.mapWord << 2, this.mapCap);
  }
}
