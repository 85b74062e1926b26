/**
 * What a channel object does under its public calls: it takes an agent record in the channel's block when it opens,
 * checks every call, and makes one send or receive, or waits for one. Waits are heap waits (`heap.wait`,
 * `heap.waitAsync`): this agent's pending frees go home before it sleeps and what came home is taken in after; a
 * waiter is counted parked first, so that a sender or receiver notifies only when someone is (docs/design/channel.md,
 * parking).
 */
import { HeapError, type Heap } from '@paddock/allocator';
import { agentCanBlock, availableCores } from '@paddock/platform';
import {
  FLAG_CLOSED,
  FLAG_DROPPED,
  H_FLAGS,
  H_ID,
  H_MAGIC,
  H_PARKED_RECEIVERS,
  H_PARKED_SENDERS,
  H_RECV_SIGNALED,
  H_RECV_WAKE,
  H_SEND_SIGNALED,
  H_SEND_WAKE,
  H_TOKENS,
  MAGIC,
  MAGIC_DROPPED,
  R_ANSWERS,
  R_ARMED,
  R_OWNER,
  R_PARKED,
  R_PINGED_AT,
  R_PINGS,
  R_PTR,
  R_STATE,
  S_IDLE,
  S_RECV,
  S_SEND_INTENT,
  STAMP_BITS,
} from './layout.js';
import type { ChannelHandle } from './open.js';
import { ARMED_LOCK, channelLockName, heldLockNames, RecordPresence } from './presence.js';
import { EMPTY, READY, Ring, STUCK } from './ring.js';

/** What `recv`, `recvAsync` and the batch receives return when their timeout passed first. */
export const TIMED_OUT = -1;
/**
 * How long a waiter watches the ring (loads only) before it parks, in ms. The other side of a channel in flow
 * usually makes what it waits for within microseconds, and a park costs the other side a notify and this one a
 * sleep and a wake (tens of microseconds). Only where two threads can run at once (see spinTime).
 */
export const SPIN_MS = 0.005;
let spinMs = -1;

/** This agent's spin (ms): {@link SPIN_MS}, or 0 on one core, where the agent waited for cannot run meanwhile. */
function spinTime(): number {
  if (spinMs < 0) spinMs = availableCores() >= 2 ? SPIN_MS : 0;
  return spinMs;
}
/** A waiter that found a slot claimed mid-step parks this long at most before it looks again, in ms. */
const STUCK_WAIT_MS = 2;

/**
 * A timer that keeps the agent's event loop alive while it waits with `Atomics.waitAsync`, which holds none (a Node
 * worker whose only work left is such a wait would end, its promise unsettled). The heap's wait ends within its
 * 500 ms bound, before this fires; the timer is cleared then.
 */
function keepAlive(): ReturnType<typeof setTimeout> {
  return setTimeout(keptAlive, 1000);
}
function keptAlive(): void {}

function describe(v: unknown): string {
  return typeof v === 'number' ? String(v) : v === null ? 'null' : typeof v;
}

/** One agent's hold on a channel: its record, its checks and its waits (the public calls are Channel's). */
export class ChannelAgent {
  readonly handle: ChannelHandle;
  protected readonly heap: Heap;
  protected readonly ring: Ring;
  protected readonly i32: Int32Array;
  protected readonly base: number;
  protected readonly id: number;
  /** Int32 index of this object's record. */
  protected rec: number;
  protected left = false;
  /** Wakes owed for this agent's steps, and whether a batch defers them (see flushWakes). */
  protected owedReceivers = 0;
  protected owedSenders = 0;
  protected deferWakes = 0;

  /** @internal use createChannel or openChannel. */
  constructor(heap: Heap, handle: ChannelHandle) {
    this.handle = handle;
    this.heap = heap;
    this.i32 = heap.i32;
    this.ring = new Ring(heap, this.i32, handle.ptr, handle.capacity, handle.agents);
    this.base = this.ring.base;
    this.id = handle.id;
    this.rec = this.takeRecord();
  }

  /** Takes a free agent record (cleaning those of gone agents if none is free). @throws HeapError CHANNEL_AGENTS. */
  private takeRecord(): number {
    const ring = this.ring;
    const i32 = this.i32;
    let token = Atomics.add(i32, this.base + H_TOKENS, 1) + 1;
    if (token <= 0) token = (token & 0x7fffffff) + 1;
    ring.token = token;
    for (let k = 0; k < ring.recordCount; k++) if (this.tryTake(k, token)) return this.rec;
    // None free: the records of gone agents are cleaned, one at a time, until one can be taken (pinging no more
    // live owners than it must).
    for (let k = 0; k < ring.recordCount; k++) if (ring.cleanIfGone(k) && this.tryTake(k, token)) return this.rec;
    throw new HeapError('CHANNEL_AGENTS', `every one of the channel's ${ring.recordCount} agent records is held by a live agent (createChannel's agents option)`);
  }

  /** Takes record `k` if it is free (see takeRecord). */
  private tryTake(k: number, token: number): boolean {
    const ring = this.ring;
    const i32 = this.i32;
    const r = ring.recordAt(k);
    // Taken as if to clean it (-token) until this agent's presence wait is armed: an agent that dies before holds
    // no record of its own, so the cleaner it looks like is gone, and the record is cleaned again.
    // When the taking started, stamped first (see cleanerAlive in ring.ts).
    if (Atomics.load(i32, r + R_OWNER) !== 0) return false;
    Atomics.store(i32, r + R_PINGED_AT, Date.now() & 0x7fffffff);
    if (Atomics.compareExchange(i32, r + R_OWNER, 0, -token) !== 0) return false;
    Atomics.store(i32, r + R_ARMED, 0);
    Atomics.store(i32, r + R_PINGS, 0);
    Atomics.store(i32, r + R_ANSWERS, 0);
    Atomics.store(i32, r + R_STATE, S_IDLE);
    Atomics.store(i32, r + R_PTR, 0);
    ring.rec = r;
    ring.recIndex = k;
    ring.claimTag = ((k + 1) << STAMP_BITS) | 0;
    ring.presence = new RecordPresence(i32, r, channelLockName(this.id, token));
    if (Atomics.compareExchange(i32, r + R_OWNER, -token, token) !== -token) {
      // Taken for gone meanwhile (this agent was kept from running for seconds): another record is looked for.
      ring.presence.release(true);
      ring.presence = null;
      return false;
    }
    this.rec = r;
    return true;
  }

  // ---- checks --------------------------------------------------------------------------------------------

  /** Every call starts here. @throws HeapError CHANNEL_DROPPED (or BAD_HANDLE), DETACHED. */
  protected enter(): void {
    const i32 = this.i32;
    if (this.left) throw new HeapError('BAD_HANDLE', 'this channel object has left the channel (leave()): open it again');
    // Plain loads (checks on every call; a change they miss for a moment is seen by the next call).
    if (i32[this.base + H_MAGIC] !== MAGIC || i32[this.base + H_ID] !== this.id) {
      // A dropped channel's block went back to the heap, whose free lists may have written its first words; the
      // flags word says dropped until the block is reused.
      if (i32[this.base + H_MAGIC] === MAGIC_DROPPED || (Atomics.load(i32, this.base + H_FLAGS) & FLAG_DROPPED) !== 0) {
        throw new HeapError('CHANNEL_DROPPED', 'this channel has been dropped');
      }
      throw new HeapError('BAD_HANDLE', 'the channel block no longer holds this channel (dropped and reused?)');
    }
    if (this.heap.isDetached) throw new HeapError('DETACHED', 'the heap object this channel was opened with is closed');
    // A ping since the last call is answered here too (a worker busy in a loop of calls may not reach its event
    // loop for a long time), and a record taken back from this object (it was idle and took too long to answer:
    // see presence.ts) is replaced by a fresh one.
    this.ring.presence?.answer();
    if (i32[this.rec + R_OWNER] !== this.ring.token) this.retake();
  }

  /** This object's record was cleaned as a gone agent's: it takes another (its old one may be someone else's). */
  private retake(): void {
    this.ring.presence?.release(true);
    this.rec = this.takeRecord();
  }

  protected closedError(): HeapError {
    return new HeapError('CHANNEL_CLOSED', 'this channel is closed: it takes no more blocks');
  }

  /** @throws HeapError BAD_POINTER unless `ptr` is a live block of this heap. */
  protected checkPointer(ptr: number): void {
    if (typeof ptr !== 'number' || (ptr >>> 0) !== ptr || ptr === 0) throw new HeapError('BAD_POINTER', `send takes a block pointer, got ${describe(ptr)}`);
    try {
      this.heap.usableSize(ptr);
    } catch (err) {
      if (err instanceof HeapError && err.code === 'DETACHED') throw err;
      const why = err instanceof Error ? err.message : String(err);
      throw new HeapError('BAD_POINTER', `send: ${ptr} is not a live block of this heap (${why})`, ptr);
    }
  }

  protected checkCanBlock(): void {
    if (!agentCanBlock()) {
      throw new HeapError('CANNOT_BLOCK', 'this thread may not block (a browser window\'s main thread): use sendAsync, recvAsync or for await');
    }
  }

  protected checkCount(ptrs: ArrayLike<number>, count: number | undefined): number {
    if (ptrs === null || typeof ptrs !== 'object' || typeof ptrs.length !== 'number') throw new TypeError('a batch send takes an array of pointers');
    const n = count ?? ptrs.length;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > ptrs.length) throw new RangeError(`count must be an integer from 0 to ${ptrs.length}, got ${describe(n)}`);
    for (let k = 0; k < n; k++) this.checkPointer(ptrs[k]!);
    return n;
  }

  protected checkOut(out: Uint32Array | number[], max: number | undefined): number {
    if (!(out instanceof Uint32Array) && !Array.isArray(out)) throw new TypeError('a batch receive takes a Uint32Array or an array to fill');
    const n = max ?? out.length;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || (out instanceof Uint32Array && n > out.length)) {
      throw new RangeError(`max must be an integer from 1 to ${out.length}, got ${describe(n)}`);
    }
    return n;
  }

  protected checkTimeout(timeoutMs: number): void {
    if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be a non-negative number, got ${describe(timeoutMs)}`);
  }

  protected isClosed(): boolean {
    return (Atomics.load(this.i32, this.base + H_FLAGS) & FLAG_CLOSED) !== 0;
  }

  // ---- one send, one receive -----------------------------------------------------------------------------

  /** One attempt to send `ptr` (checked): true when it went; false when full or stuck. */
  protected trySendOne(ptr: number): boolean {
    const i32 = this.i32;
    i32[this.rec + R_PTR] = ptr;
    i32[this.rec + R_STATE] = S_SEND_INTENT;
    const r = this.ring.sendStep(ptr);
    i32[this.rec + R_STATE] = S_IDLE;
    if (r !== 1) return false;
    this.owedReceivers++;
    if (this.deferWakes === 0) this.flushWakes();
    return true;
  }

  /** One attempt to receive: the block, or 0 (empty or stuck). */
  protected tryRecvOne(): number {
    const i32 = this.i32;
    i32[this.rec + R_PTR] = 0;
    i32[this.rec + R_STATE] = S_RECV;
    const r = this.ring.recvStep();
    i32[this.rec + R_STATE] = S_IDLE;
    if (r === EMPTY || r === STUCK) return 0;
    this.owedSenders++;
    if (this.deferWakes === 0) this.flushWakes();
    return r >>> 0;
  }

  /**
   * Sends `ptr` (checked), waiting while full: blocking (`blocking`) or not (returns a promise then). The record
   * names the block for the whole call, waits included: a sender that dies waiting has its block freed.
   */
  protected sendWaiting(ptr: number, blocking: true): void;
  protected sendWaiting(ptr: number, blocking: false): Promise<void> | undefined;
  protected sendWaiting(ptr: number, blocking: boolean): Promise<void> | undefined {
    const i32 = this.i32;
    const ring = this.ring;
    i32[this.rec + R_PTR] = ptr;
    i32[this.rec + R_STATE] = S_SEND_INTENT;
    let spinUntil = 0;
    for (;;) {
      const r = ring.sendStep(ptr);
      if (r === 1) return this.sent();
      if (this.isClosed()) return this.sendRefused();
      if (spinUntil === 0) spinUntil = performance.now() + spinTime();
      if (this.spin(true, spinUntil)) continue;
      this.flushWakes(); // a batch's receivers first: they are what makes room
      const wake = Atomics.load(i32, this.base + H_SEND_WAKE);
      this.park(H_PARKED_SENDERS);
      const again = ring.sendStep(ptr);
      if (again === 1 || this.isClosed()) {
        this.unpark(H_PARKED_SENDERS);
        if (again === 1) return this.sent();
        return this.sendRefused();
      }
      ring.presence?.answer();
      const bound = again === STUCK ? STUCK_WAIT_MS : Infinity;
      if (!blocking) return this.sendParkedAsync(ptr, wake, bound, again === STUCK);
      try {
        this.heap.wait(i32, this.base + H_SEND_WAKE, wake, bound);
      } finally {
        this.unpark(H_PARKED_SENDERS);
      }
      this.enter();
      spinUntil = 0;
      // Named again: enter() may have given this object a fresh record.
      i32[this.rec + R_PTR] = ptr;
      i32[this.rec + R_STATE] = S_SEND_INTENT;
    }
  }

  protected async sendParkedAsync(ptr: number, wake: number, bound: number, stuck: boolean): Promise<void> {
    const keep = keepAlive();
    try {
      await this.heap.waitAsync(this.i32, this.base + H_SEND_WAKE, wake, bound);
      if (stuck) await this.cleanStuckByLock();
    } finally {
      clearTimeout(keep);
      this.unpark(H_PARKED_SENDERS);
    }
    this.enter();
    return this.sendWaiting(ptr, false);
  }

  /** Counts this agent parked on the count at header word `count` (see R_PARKED for the order). */
  protected park(count: number): void {
    Atomics.add(this.i32, this.base + count, 1);
    Atomics.store(this.i32, this.rec + R_PARKED, count);
    // After the wake word was read: a signal that finds this 0 comes after that read, and so ends the wait.
    Atomics.store(this.i32, this.base + (count === H_PARKED_SENDERS ? H_SEND_SIGNALED : H_RECV_SIGNALED), 0);
  }

  protected unpark(count: number): void {
    const i32 = this.i32;
    // A record cleaned as a gone agent's meanwhile had its count taken off by its cleaner (and may be another's now).
    if (Atomics.load(i32, this.rec + R_OWNER) !== this.ring.token) return;
    if (Atomics.compareExchange(i32, this.rec + R_PARKED, count, 0) === count) Atomics.sub(i32, this.base + count, 1);
  }

  protected sent(): undefined {
    this.i32[this.rec + R_STATE] = S_IDLE;
    this.owedReceivers++;
    if (this.deferWakes === 0) this.flushWakes();
    return undefined;
  }

  /**
   * Wakes those parked for what this agent's steps made (blocks sent, slots freed), each side with one signal. A
   * batch defers its wakes to its end, and flushes them before it parks (so that it never sleeps owing one).
   */
  protected flushWakes(): void {
    if (this.owedReceivers !== 0) {
      this.ring.wakeReceivers();
      this.owedReceivers = 0;
    }
    if (this.owedSenders !== 0) {
      this.ring.wakeSenders();
      this.owedSenders = 0;
    }
  }

  protected sendRefused(): never {
    this.i32[this.rec + R_STATE] = S_IDLE; // the block stays the caller's
    throw this.closedError();
  }

  /**
   * Receives, waiting until `deadline` (a `performance.now()` time, Infinity for none): the block, 0 once closed and
   * empty, TIMED_OUT. Blocking, or a promise of it.
   */
  protected recvWaiting(deadline: number, blocking: true): number;
  protected recvWaiting(deadline: number, blocking: false): number | Promise<number>;
  protected recvWaiting(deadline: number, blocking: boolean): number | Promise<number> {
    const i32 = this.i32;
    const ring = this.ring;
    let spinUntil = 0;
    for (;;) {
      let p = this.tryRecvOne();
      if (p !== 0) return p;
      if (this.isClosed()) {
        // Closed: what was sent before is taken first (a send claimed before the close may still be publishing).
        p = this.tryRecvOne();
        if (p !== 0) return p;
        const head = ring.peekHead();
        if (head === EMPTY) return 0;
        if (head === READY) continue;
      }
      if (spinUntil === 0) spinUntil = Math.min(deadline, performance.now() + spinTime());
      if (this.spin(false, spinUntil)) continue;
      const left = deadline - performance.now();
      if (left <= 0) return TIMED_OUT;
      const wake = Atomics.load(i32, this.base + H_RECV_WAKE);
      this.park(H_PARKED_RECEIVERS);
      p = this.tryRecvOne();
      if (p !== 0 || this.isClosed()) {
        this.unpark(H_PARKED_RECEIVERS);
        if (p !== 0) return p;
        continue;
      }
      ring.presence?.answer();
      const stuck = ring.peekHead() === STUCK;
      const bound = stuck ? Math.min(left, STUCK_WAIT_MS) : left;
      if (!blocking) return this.recvParkedAsync(deadline, wake, bound, stuck);
      try {
        this.heap.wait(i32, this.base + H_RECV_WAKE, wake, bound);
      } finally {
        this.unpark(H_PARKED_RECEIVERS);
      }
      this.enter();
      spinUntil = 0;
    }
  }

  /**
   * Watches the ring until a send (`send`) or a receive step may go, or the channel closes: true; false once
   * `until` (a `performance.now()` time) has passed. Loads only; the clock is read every 32 looks.
   */
  protected spin(send: boolean, until: number): boolean {
    const ring = this.ring;
    for (let i = 1; ; i++) {
      if (send ? ring.sendMayGo() : ring.recvMayGo()) return true;
      if ((i & 31) === 0) {
        if (send && this.isClosed()) return true; // refused at once (a receiver takes what is queued first)
        if (performance.now() >= until) return false;
      }
    }
  }

  protected async recvParkedAsync(deadline: number, wake: number, bound: number, stuck: boolean): Promise<number> {
    const keep = keepAlive();
    try {
      await this.heap.waitAsync(this.i32, this.base + H_RECV_WAKE, wake, bound);
      if (stuck) await this.cleanStuckByLock();
    } finally {
      clearTimeout(keep);
      this.unpark(H_PARKED_RECEIVERS);
    }
    this.enter();
    return this.recvWaiting(deadline, false);
  }

  /**
   * Where owners hold Web Locks (a browser), the async calls' liveness check: the record of the agent whose claim
   * the last step found stuck is cleaned if its owner's lock is no longer held (its worker was terminated). The
   * owner and its lock mark are read before the query, so a lock taken after the query is never one looked for.
   */
  private async cleanStuckByLock(): Promise<void> {
    const ring = this.ring;
    const index = ring.stuckClaim - 1;
    if (index < 0 || index >= ring.recordCount) return;
    const r = ring.recordAt(index);
    const owner = Atomics.load(this.i32, r + R_OWNER);
    if (owner <= 0 || Atomics.load(this.i32, r + R_ARMED) !== ARMED_LOCK) return;
    const held = await heldLockNames();
    if (held === null || this.left) return;
    ring.cleanIfLockGone(index, owner, held, this.id);
  }

  protected deadlineOf(timeoutMs: number | undefined): number {
    if (timeoutMs === undefined) return Infinity;
    this.checkTimeout(timeoutMs);
    return performance.now() + timeoutMs;
  }
}
