/**
 * The ring: one step of a send or a receive on the slots, and the recovery of the steps of agents that died in the
 * middle of one. A step claims a slot with one CAS on its stamp (naming the claimer's record in the claim bits),
 * moves the tail or head hint on with a second CAS that any agent may make for it, and publishes with one store of
 * the stamp. Before it claims, the agent names what it is about to move in its record; see docs/design/channel.md
 * for why each store comes where it does and what a dead agent's record says.
 */
import type { Heap } from '@paddock/allocator';
import {
  H_HEAD,
  H_PARKED_RECEIVERS,
  H_PARKED_SENDERS,
  H_RECORDS_CLEANED,
  H_RECOVERED_FREES,
  H_RECOVERED_SENDS,
  H_RECV_SIGNALED,
  H_RECV_WAKE,
  H_SEND_SIGNALED,
  H_SEND_WAKE,
  H_TAIL,
  H_WAKES,
  HEADER_WORDS,
  R_ANSWERS,
  R_ARMED,
  R_OWNER,
  R_PARKED,
  R_PINGED_AT,
  R_PINGS,
  R_POS,
  R_PTR,
  R_STATE,
  RECORD_WORDS,
  S_IDLE,
  S_RECV,
  S_SEND_CLAIMED,
  S_SEND_INTENT,
  SLOT_WORDS,
  STAMP_BITS,
  STAMP_MASK,
  stampDiff,
} from './layout.js';
import { ANSWER_GRACE_MS, channelLockName, pingOwner, type RecordPresence } from './presence.js';

/** What a step found when it could not move a block. */
export const EMPTY = 0;
export const FULL = 0;
/** What {@link Ring.peekHead} finds when a block is ready at the head. */
export const READY = 1;
/** The slot it needs is claimed by an agent in the middle of its step (see {@link Ring.stuckClaim}). */
export const STUCK = -2;

/** How long a slot may stay claimed by the same step before its claimer is pinged, in ms. */
export const STUCK_MS = 2;

/** Moves the hint at `at` on to `to`, unless another agent moved it that far or further. */
function moveHint(i32: Int32Array, at: number, to: number): void {
  for (;;) {
    const h = Atomics.load(i32, at);
    if (((to - h) | 0) <= 0 || Atomics.compareExchange(i32, at, h, to) === h) return;
  }
}

/** One agent's hold on a channel's ring (the channel object's core). */
export class Ring {
  /** Int32 index of the channel block. */
  readonly base: number;
  /** Int32 index of the first slot. */
  readonly slots: number;
  /** Int32 index of the first agent record. */
  readonly records: number;
  readonly capacity: number;
  readonly mask: number;
  readonly recordCount: number;
  /** This object's record: its Int32 index, its index, its claim bits and its owner token. */
  rec = 0;
  recIndex = 0;
  claimTag = 0;
  token = 0;
  presence: RecordPresence | null = null;
  /** The claim bits of the slot the last step found stuck (record index + 1). */
  stuckClaim = 0;
  /** The stuck slot last seen: its Int32 index and stamp word, and since when (ms). */
  private stuckSlot = -1;
  private stuckSeq = 0;
  private stuckSince = 0;

  constructor(
    readonly heap: Heap,
    readonly i32: Int32Array,
    ptr: number,
    capacity: number,
    recordCount: number,
  ) {
    this.base = ptr >>> 2;
    this.capacity = capacity;
    this.mask = capacity - 1;
    this.recordCount = recordCount;
    this.records = this.base + HEADER_WORDS;
    this.slots = this.records + recordCount * RECORD_WORDS;
  }

  /**
   * One send of `ptr`: the record already says S_SEND_INTENT with `ptr`. Returns 1 when the block is in the ring,
   * {@link FULL} or {@link STUCK}.
   */
  sendStep(ptr: number): number {
    const i32 = this.i32;
    const tailAt = this.base + H_TAIL;
    for (;;) {
      const t = Atomics.load(i32, tailAt);
      const s = this.slots + (t & this.mask) * SLOT_WORDS;
      const seq = Atomics.load(i32, s);
      const stamp = seq & STAMP_MASK;
      const d = stampDiff(stamp, t & STAMP_MASK);
      if (d === 0) {
        if (seq >>> STAMP_BITS === 0) {
          i32[this.rec + R_POS] = t;
          if (Atomics.compareExchange(i32, s, seq, this.claimTag | stamp) === seq) {
            i32[this.rec + R_STATE] = S_SEND_CLAIMED;
            Atomics.compareExchange(i32, tailAt, t, (t + 1) | 0);
            i32[s + 1] = ptr;
            Atomics.store(i32, s, (t + 1) & STAMP_MASK);
            return 1;
          }
          continue;
        }
        Atomics.compareExchange(i32, tailAt, t, (t + 1) | 0); // claimed at t by another sender: move the hint on
      } else if (d > 0) {
        Atomics.compareExchange(i32, tailAt, t, (t + 1) | 0); // the slot went past t: the hint is behind
      } else {
        const claim = seq >>> STAMP_BITS;
        if (claim === 0) return FULL;
        this.stuckClaim = claim;
        return this.noteStuck(s, seq);
      }
    }
  }

  /**
   * Sends `ptrs[from..to)` in order at consecutive positions from the tail hint, as long as each slot is free and
   * unclaimed, moving the hint once at the end (any agent that finds a slot past the hint moves it on itself). Each
   * block is named in the record and claimed as {@link sendStep} does. Returns how many went; the record is idle
   * after. Stops at the first slot that is not ready (full, or another agent's), for the caller's step to handle.
   */
  sendRun(ptrs: ArrayLike<number>, from: number, to: number): number {
    const i32 = this.i32;
    const rec = this.rec;
    const tailAt = this.base + H_TAIL;
    const start = Atomics.load(i32, tailAt);
    let t = start;
    let k = from;
    while (k < to) {
      const s = this.slots + (t & this.mask) * SLOT_WORDS;
      const seq = Atomics.load(i32, s);
      if (seq !== (t & STAMP_MASK)) break; // not ready for this position, or claimed
      const ptr = ptrs[k]!;
      i32[rec + R_PTR] = ptr;
      i32[rec + R_STATE] = S_SEND_INTENT;
      i32[rec + R_POS] = t;
      if (Atomics.compareExchange(i32, s, seq, this.claimTag | seq) !== seq) break;
      i32[rec + R_STATE] = S_SEND_CLAIMED;
      i32[s + 1] = ptr;
      Atomics.store(i32, s, (t + 1) & STAMP_MASK);
      t = (t + 1) | 0;
      k++;
    }
    i32[rec + R_STATE] = S_IDLE;
    if (t !== start) moveHint(i32, tailAt, t);
    return k - from;
  }

  /**
   * Receives up to `to - from` blocks into `out[from..)` from consecutive positions at the head hint, as
   * {@link sendRun} sends: each claimed and named as {@link recvStep} does, the hint moved once. Returns how many.
   */
  recvRun(out: Uint32Array | number[], from: number, to: number): number {
    const i32 = this.i32;
    const rec = this.rec;
    const headAt = this.base + H_HEAD;
    const start = Atomics.load(i32, headAt);
    let h = start;
    let k = from;
    while (k < to) {
      const s = this.slots + (h & this.mask) * SLOT_WORDS;
      const seq = Atomics.load(i32, s);
      if (seq !== ((h + 1) & STAMP_MASK)) break; // nothing ready at this position, or claimed
      i32[rec + R_PTR] = 0;
      i32[rec + R_STATE] = S_RECV;
      i32[rec + R_POS] = h;
      if (Atomics.compareExchange(i32, s, seq, this.claimTag | seq) !== seq) break;
      const ptr = i32[s + 1]!;
      i32[rec + R_PTR] = ptr;
      Atomics.store(i32, s, (h + this.capacity) & STAMP_MASK);
      out[k++] = ptr >>> 0;
      h = (h + 1) | 0;
    }
    i32[rec + R_STATE] = S_IDLE;
    if (h !== start) moveHint(i32, headAt, h);
    return k - from;
  }

  /**
   * One receive: returns the block, {@link EMPTY} or {@link STUCK}. The record already says S_RECV with no block;
   * it names the block taken until the caller hands it over (and sets S_IDLE).
   */
  recvStep(): number {
    const i32 = this.i32;
    const headAt = this.base + H_HEAD;
    const rec = this.rec;
    for (;;) {
      const h = Atomics.load(i32, headAt);
      const s = this.slots + (h & this.mask) * SLOT_WORDS;
      const seq = Atomics.load(i32, s);
      const stamp = seq & STAMP_MASK;
      const d = stampDiff(stamp, (h + 1) & STAMP_MASK);
      if (d === 0) {
        if (seq >>> STAMP_BITS === 0) {
          i32[rec + R_POS] = h;
          if (Atomics.compareExchange(i32, s, seq, this.claimTag | stamp) === seq) {
            Atomics.compareExchange(i32, headAt, h, (h + 1) | 0);
            const ptr = Atomics.load(i32, s + 1);
            i32[rec + R_PTR] = ptr;
            Atomics.store(i32, s, (h + this.capacity) & STAMP_MASK);
            return ptr;
          }
          continue;
        }
        Atomics.compareExchange(i32, headAt, h, (h + 1) | 0);
      } else if (d > 0) {
        Atomics.compareExchange(i32, headAt, h, (h + 1) | 0);
      } else {
        const claim = seq >>> STAMP_BITS;
        if (claim === 0) return EMPTY;
        this.stuckClaim = claim;
        return this.noteStuck(s, seq);
      }
    }
  }

  /**
   * What a receive would find at the head, without taking anything: {@link READY}, {@link EMPTY} or {@link STUCK}
   * (a send claimed the slot and has not published; one that stands too long is looked into, as a step would).
   */
  peekHead(): number {
    const i32 = this.i32;
    const headAt = this.base + H_HEAD;
    for (;;) {
      const h = Atomics.load(i32, headAt);
      const s = this.slots + (h & this.mask) * SLOT_WORDS;
      const seq = Atomics.load(i32, s);
      const d = stampDiff(seq & STAMP_MASK, (h + 1) & STAMP_MASK);
      if (d === 0 && seq >>> STAMP_BITS === 0) return READY;
      if (d >= 0) {
        Atomics.compareExchange(i32, headAt, h, (h + 1) | 0);
        continue;
      }
      const claim = seq >>> STAMP_BITS;
      if (claim === 0) return EMPTY;
      this.stuckClaim = claim;
      return this.noteStuck(s, seq);
    }
  }

  /**
   * Whether a receive step may find something now (a block ready at the head, or the hint behind): loads only, for
   * a waiter's spin. A slot claimed by a send that has not published yet reads as not ready (it is about to be).
   */
  recvMayGo(): boolean {
    const i32 = this.i32;
    const h = Atomics.load(i32, this.base + H_HEAD);
    const seq = Atomics.load(i32, this.slots + (h & this.mask) * SLOT_WORDS);
    const d = stampDiff(seq & STAMP_MASK, (h + 1) & STAMP_MASK);
    return d > 0 || (d === 0 && seq >>> STAMP_BITS === 0);
  }

  /** Whether a send step may find room now (see {@link recvMayGo}). */
  sendMayGo(): boolean {
    const i32 = this.i32;
    const t = Atomics.load(i32, this.base + H_TAIL);
    const seq = Atomics.load(i32, this.slots + (t & this.mask) * SLOT_WORDS);
    return stampDiff(seq & STAMP_MASK, t & STAMP_MASK) >= 0;
  }

  /**
   * Wakes every parked receiver, only when one is parked and none was signalled since the last parked (a notify is a
   * system call; see H_RECV_SIGNALED). A skipped signal is never a missed one: the signal that set the word was made
   * after that waiter read its wake word, so its wait returns.
   */
  wakeReceivers(): void {
    const i32 = this.i32;
    const b = this.base;
    if (Atomics.load(i32, b + H_PARKED_RECEIVERS) === 0 || Atomics.load(i32, b + H_RECV_SIGNALED) !== 0) return;
    if (Atomics.exchange(i32, b + H_RECV_SIGNALED, 1) !== 0) return;
    Atomics.add(i32, b + H_RECV_WAKE, 1);
    Atomics.add(i32, b + H_WAKES, 1);
    Atomics.notify(i32, b + H_RECV_WAKE);
  }

  /** Wakes every parked sender (as {@link wakeReceivers}). */
  wakeSenders(): void {
    const i32 = this.i32;
    const b = this.base;
    if (Atomics.load(i32, b + H_PARKED_SENDERS) === 0 || Atomics.load(i32, b + H_SEND_SIGNALED) !== 0) return;
    if (Atomics.exchange(i32, b + H_SEND_SIGNALED, 1) !== 0) return;
    Atomics.add(i32, b + H_SEND_WAKE, 1);
    Atomics.add(i32, b + H_WAKES, 1);
    Atomics.notify(i32, b + H_SEND_WAKE);
  }

  /**
   * A step found slot `s` claimed by another agent mid-step: the first time, {@link STUCK}; once the same claim has
   * stood for {@link STUCK_MS}, its claimer is pinged and, if it is gone, its step is finished from its record here.
   */
  private noteStuck(s: number, seq: number): number {
    const t = performance.now();
    if (s !== this.stuckSlot || seq !== this.stuckSeq) {
      this.stuckSlot = s;
      this.stuckSeq = seq;
      this.stuckSince = t;
      return STUCK;
    }
    if (t - this.stuckSince < STUCK_MS) return STUCK;
    this.stuckSince = t;
    this.presence?.answer();
    this.cleanIfGone(this.stuckClaim - 1);
    return STUCK;
  }

  /** The Int32 index of record `index`. */
  recordAt(index: number): number {
    return this.records + index * RECORD_WORDS;
  }

  /**
   * Cleans record `index` if its owner is gone (or an agent cleaning it is): finishes or undoes the step it named
   * and frees the record. Returns true when the record is free afterwards.
   */
  cleanIfGone(index: number): boolean {
    const i32 = this.i32;
    const r = this.recordAt(index);
    const owner = Atomics.load(i32, r + R_OWNER);
    if (owner === 0) return true;
    if (owner === this.token) return false;
    if (owner > 0) {
      if (pingOwner(i32, r) !== 'gone') return false;
    } else if (this.cleanerAlive(-owner, r)) {
      return false;
    }
    return this.cleanGone(index, owner);
  }

  /**
   * Cleans record `index` if `owner` still holds it and had its Web Lock (R_ARMED says so: read before `held` was
   * taken) but `held`, the names of the locks held now, lacks it: the browser let it go, its worker is gone.
   */
  cleanIfLockGone(index: number, owner: number, held: Set<string>, channelId: number): boolean {
    const r = this.recordAt(index);
    if (owner <= 0 || owner === this.token || held.has(channelLockName(channelId, owner))) return false;
    if (Atomics.load(this.i32, r + R_OWNER) !== owner) return false;
    return this.cleanGone(index, owner);
  }

  /** Cleans record `index`, whose holder `owner` was found gone (see cleanIfGone). */
  private cleanGone(index: number, owner: number): boolean {
    const i32 = this.i32;
    const r = this.recordAt(index);
    // When the cleaning started (see cleanerAlive), stamped before the record says who cleans it: whoever reads the
    // cleaner's token there reads a fresh stamp with it.
    Atomics.store(i32, r + R_PINGED_AT, Date.now() & 0x7fffffff);
    if (Atomics.compareExchange(i32, r + R_OWNER, owner, -this.token) !== owner) return false;
    this.finishStep(index);
    const parked = Atomics.exchange(i32, r + R_PARKED, 0);
    if (parked !== 0) Atomics.sub(i32, this.base + parked, 1);
    // The record goes back, its presence words zeroed for the next owner.
    Atomics.store(i32, r + R_ARMED, 0);
    Atomics.store(i32, r + R_PINGS, 0);
    Atomics.store(i32, r + R_ANSWERS, 0);
    Atomics.store(i32, r + R_PINGED_AT, 0);
    // Given back unless another agent took the cleaning over meanwhile (it took this one for gone: it finishes it).
    if (Atomics.compareExchange(i32, r + R_OWNER, -this.token, 0) !== -this.token) return false;
    Atomics.add(i32, this.base + H_RECORDS_CLEANED, 1);
    return true;
  }

  /**
   * Whether the agent with token `token`, which holds record `r` as minus its token (cleaning it, or taking it for
   * itself), is alive. If it holds a record of its own, that record's presence says. If not (an agent opening the
   * channel takes a record, and may clean others first, before it holds one), the time it started, stamped in
   * `r`, says: alive for {@link ANSWER_GRACE_MS} from then (taking or cleaning a record takes microseconds).
   */
  private cleanerAlive(token: number, r: number): boolean {
    const i32 = this.i32;
    for (let k = 0; k < this.recordCount; k++) {
      const own = this.recordAt(k);
      if (Atomics.load(i32, own + R_OWNER) === token) return pingOwner(i32, own) !== 'gone';
    }
    return (((Date.now() & 0x7fffffff) - Atomics.load(i32, r + R_PINGED_AT)) & 0x7fffffff) < ANSWER_GRACE_MS;
  }

  /**
   * Finishes the step a dead agent's record `index` names (the caller holds the record for cleaning). Each store
   * comes where a cleaner that dies in turn leaves the record saying what is still to do (docs/design/channel.md):
   *  - a send whose slot it claimed: the block is written and the slot stamped full (delivered);
   *  - a send that had not claimed: its block is freed (it never entered the ring);
   *  - a receive whose slot it claimed: the block is taken out, the slot stamped consumed, and the block freed;
   *  - a receive that took its block out but had not handed it over: the block is freed.
   */
  private finishStep(index: number): void {
    const i32 = this.i32;
    const r = this.recordAt(index);
    const state = Atomics.load(i32, r + R_STATE);
    const pos = Atomics.load(i32, r + R_POS);
    const s = this.slots + (pos & this.mask) * SLOT_WORDS;
    const tag = ((index + 1) << STAMP_BITS) | 0;
    if (state === S_SEND_INTENT || state === S_SEND_CLAIMED) {
      const claimed = (tag | (pos & STAMP_MASK)) | 0;
      if (Atomics.load(i32, s) === claimed) {
        Atomics.store(i32, r + R_STATE, S_SEND_CLAIMED);
        Atomics.compareExchange(i32, this.base + H_TAIL, pos, (pos + 1) | 0);
        Atomics.store(i32, s + 1, Atomics.load(i32, r + R_PTR));
        Atomics.store(i32, s, (pos + 1) & STAMP_MASK);
        Atomics.add(i32, this.base + H_RECOVERED_SENDS, 1);
        this.wakeReceivers();
      } else if (state === S_SEND_INTENT) {
        this.freeNamed(r);
      }
    } else if (state === S_RECV) {
      const claimed = (tag | ((pos + 1) & STAMP_MASK)) | 0;
      if (Atomics.load(i32, s) === claimed) {
        Atomics.compareExchange(i32, this.base + H_HEAD, pos, (pos + 1) | 0);
        Atomics.store(i32, r + R_PTR, Atomics.load(i32, s + 1));
        Atomics.store(i32, s, (pos + this.capacity) & STAMP_MASK);
        this.wakeSenders();
      }
      this.freeNamed(r);
    }
    Atomics.store(i32, r + R_STATE, S_IDLE);
    Atomics.store(i32, r + R_PTR, 0);
  }

  /** Frees the block record `r` names, unnaming it first (a cleaner that dies between strands it; never twice). */
  private freeNamed(r: number): void {
    const ptr = Atomics.exchange(this.i32, r + R_PTR, 0);
    if (ptr === 0) return;
    Atomics.add(this.i32, this.base + H_RECOVERED_FREES, 1);
    this.heap.free(ptr >>> 0);
  }

  /** Cleans every record whose owner is gone. Returns how many it cleaned. */
  cleanAll(): number {
    let cleaned = 0;
    for (let k = 0; k < this.recordCount; k++) {
      const owner = Atomics.load(this.i32, this.recordAt(k) + R_OWNER);
      if (owner !== 0 && owner !== this.token && this.cleanIfGone(k)) cleaned++;
    }
    return cleaned;
  }
}
