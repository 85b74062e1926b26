/**
 * The public calls of a channel object (see createChannel and openChannel); what they stand on is in agent.ts.
 */
import { HeapError } from '@paddock/allocator';
import { ChannelAgent, TIMED_OUT } from './agent.js';
import {
  FLAG_CLOSED,
  FLAG_DROPPED,
  H_FLAGS,
  H_HEAD,
  H_MAGIC,
  H_PARKED_RECEIVERS,
  H_PARKED_SENDERS,
  H_RECORDS_CLEANED,
  H_RECOVERED_FREES,
  H_RECOVERED_SENDS,
  H_RECV_WAKE,
  H_SEND_WAKE,
  H_TAIL,
  H_WAKES,
  MAGIC_DROPPED,
  R_ANSWERS,
  R_ARMED,
  R_OWNER,
  R_PINGED_AT,
  R_PINGS,
  R_PTR,
  R_STATE,
  S_IDLE,
} from './layout.js';
import { EMPTY } from './ring.js';

export { TIMED_OUT };

/** A channel's figures, as this agent reads them (other agents go on meanwhile). */
export interface ChannelStats {
  capacity: number;
  /** Blocks in the ring (sends claimed minus receives claimed). */
  queued: number;
  /** Positions claimed by sends, and by receives, since the channel was made (modulo 2^32). */
  sent: number;
  received: number;
  closed: boolean;
  parkedSenders: number;
  parkedReceivers: number;
  /** Agent records held (by live agents, and by dead ones not cleaned yet). */
  agents: number;
  /** Sends of dead agents finished by others (their blocks delivered). */
  recoveredSends: number;
  /** Blocks of dead agents' steps freed by others (a send not yet in the ring, a receive not yet handed over). */
  recoveredFrees: number;
  /** Records of dead agents cleaned. */
  recordsCleaned: number;
  /** Wake signals: a send or receive that found a waiter parked changed its wake word and notified (`close` not counted). */
  wakes: number;
}

/** One agent's hold on a channel (see createChannel and openChannel). */
export class Channel extends ChannelAgent {
  // ---- the public calls ----------------------------------------------------------------------------------

  /**
   * Hands the block at `ptr` over (the receiver frees it), waiting while the channel is full.
   * @throws HeapError BAD_POINTER (nothing queued) for a pointer that is not a live block of this heap;
   * CHANNEL_CLOSED once closed (also when it closes while this waits: the block is then still the caller's);
   * CANNOT_BLOCK where the agent may not block; CHANNEL_DROPPED.
   */
  send(ptr: number): void {
    this.enter();
    this.checkPointer(ptr);
    this.checkCanBlock();
    if (this.isClosed()) throw this.closedError();
    this.sendWaiting(ptr, true);
  }

  /** Sends without waiting: false when the channel is full. @throws as {@link send}, but never CANNOT_BLOCK. */
  trySend(ptr: number): boolean {
    this.enter();
    this.checkPointer(ptr);
    if (this.isClosed()) throw this.closedError();
    return this.trySendOne(ptr);
  }

  /** {@link send} without blocking the agent: waits with `Atomics.waitAsync` (any agent, a page's main thread too). */
  async sendAsync(ptr: number): Promise<void> {
    this.enter();
    this.checkPointer(ptr);
    if (this.isClosed()) throw this.closedError();
    await this.sendWaiting(ptr, false);
  }

  /** Sends `ptrs[0..count)` in order, waiting as needed. Every pointer is checked before the first is queued. */
  sendBatch(ptrs: ArrayLike<number>, count?: number): void {
    this.enter();
    const n = this.checkCount(ptrs, count);
    this.checkCanBlock();
    if (this.isClosed()) throw this.closedError();
    this.deferWakes = 1;
    try {
      // Runs of consecutive free slots go at once; a block that finds no room waits as a send does.
      for (let k = 0; k < n; ) {
        const went = this.ring.sendRun(ptrs, k, n);
        this.owedReceivers += went;
        k += went;
        if (k < n) this.sendWaiting(ptrs[k++]!, true);
      }
    } finally {
      this.deferWakes = 0;
      this.flushWakes();
    }
  }

  /** Sends as many of `ptrs[0..count)` as fit now, in order; returns how many went (a prefix). */
  trySendBatch(ptrs: ArrayLike<number>, count?: number): number {
    this.enter();
    const n = this.checkCount(ptrs, count);
    if (this.isClosed()) throw this.closedError();
    let k = 0;
    this.deferWakes = 1;
    for (;;) {
      const went = this.ring.sendRun(ptrs, k, n);
      this.owedReceivers += went;
      k += went;
      if (k >= n || !this.trySendOne(ptrs[k]!)) break;
      k++;
    }
    this.deferWakes = 0;
    this.flushWakes();
    return k;
  }

  /** {@link sendBatch} without blocking the agent. */
  async sendBatchAsync(ptrs: ArrayLike<number>, count?: number): Promise<void> {
    this.enter();
    const n = this.checkCount(ptrs, count);
    if (this.isClosed()) throw this.closedError();
    // Wakes are not deferred across an await: another call of this object may run meanwhile.
    for (let k = 0; k < n; k++) await this.sendWaiting(ptrs[k]!, false);
  }

  /**
   * The next block (the caller owns it now and frees it), waiting up to `timeoutMs` (default: no limit); 0 once the
   * channel is closed and empty; {@link TIMED_OUT} when the time passed first.
   * @throws HeapError CANNOT_BLOCK where the agent may not block; RangeError for a bad timeout.
   */
  recv(timeoutMs?: number): number {
    this.enter();
    const deadline = this.deadlineOf(timeoutMs);
    this.checkCanBlock();
    return this.recvWaiting(deadline, true);
  }

  /** The next block if one is queued, else 0 (see {@link done} to tell the end). */
  tryRecv(): number {
    this.enter();
    return this.tryRecvOne();
  }

  /** {@link recv} without blocking the agent. */
  async recvAsync(timeoutMs?: number): Promise<number> {
    this.enter();
    const deadline = this.deadlineOf(timeoutMs);
    return this.recvWaiting(deadline, false);
  }

  /**
   * Waits (as {@link recv}) for one block, then takes up to `max` (default `out.length`) without waiting more.
   * Returns how many it put in `out`; 0 once closed and empty; {@link TIMED_OUT}.
   */
  recvBatch(out: Uint32Array | number[], max?: number, timeoutMs?: number): number {
    this.enter();
    const n = this.checkOut(out, max);
    const first = this.recv(timeoutMs);
    if (first <= 0) return first;
    out[0] = first;
    return this.fill(out, 1, n);
  }

  /** Takes up to `max` queued blocks without waiting; returns how many (0: none queued). */
  tryRecvBatch(out: Uint32Array | number[], max?: number): number {
    this.enter();
    const n = this.checkOut(out, max);
    return this.fill(out, 0, n);
  }

  /** {@link recvBatch} without blocking the agent. */
  async recvBatchAsync(out: Uint32Array | number[], max?: number, timeoutMs?: number): Promise<number> {
    this.enter();
    const n = this.checkOut(out, max);
    const first = await this.recvAsync(timeoutMs);
    if (first <= 0) return first;
    out[0] = first;
    return this.fill(out, 1, n);
  }

  private fill(out: Uint32Array | number[], from: number, max: number): number {
    let k = from;
    this.deferWakes = 1;
    while (k < max) {
      const got = this.ring.recvRun(out, k, max);
      this.owedSenders += got;
      k += got;
      if (k >= max) break;
      const p = this.tryRecvOne(); // not at the hint, or claimed: a step sorts it out
      if (p === 0) break;
      out[k++] = p;
    }
    this.deferWakes = 0;
    this.flushWakes();
    return k;
  }

  /** Receives until the channel is closed and empty (any agent; waits with `Atomics.waitAsync`). */
  async *[Symbol.asyncIterator](): AsyncGenerator<number, void, undefined> {
    for (;;) {
      const p = await this.recvAsync();
      if (p === 0) return;
      yield p;
    }
  }

  /** Receives until the channel is closed and empty, blocking (only where the agent may block). */
  *[Symbol.iterator](): Generator<number, void, undefined> {
    for (;;) {
      const p = this.recv();
      if (p === 0) return;
      yield p;
    }
  }

  /** Closes the channel: later sends are refused (CHANNEL_CLOSED); receivers get what is queued, then the end. */
  close(): void {
    this.enter();
    Atomics.or(this.i32, this.base + H_FLAGS, FLAG_CLOSED);
    this.wakeAll();
  }

  private wakeAll(): void {
    const i32 = this.i32;
    Atomics.add(i32, this.base + H_SEND_WAKE, 1);
    Atomics.add(i32, this.base + H_RECV_WAKE, 1);
    Atomics.notify(i32, this.base + H_SEND_WAKE);
    Atomics.notify(i32, this.base + H_RECV_WAKE);
  }

  /** Whether the channel is closed. */
  get closed(): boolean {
    this.enter();
    return this.isClosed();
  }

  /** Whether the channel is closed and nothing is left in it. */
  get done(): boolean {
    this.enter();
    return this.isClosed() && this.ring.peekHead() === EMPTY;
  }

  /**
   * The channel will not be used again: every block still queued is freed (and those of dead agents' steps), then
   * the channel's own block. Call it once no other agent is in a call on it. Any later use throws CHANNEL_DROPPED
   * (or BAD_HANDLE once the block is reused).
   */
  drop(): void {
    this.enter();
    const i32 = this.i32;
    Atomics.or(i32, this.base + H_FLAGS, FLAG_CLOSED | FLAG_DROPPED);
    this.ring.cleanAll();
    for (;;) {
      const p = this.tryRecvOne();
      if (p === 0) break;
      this.heap.free(p);
    }
    this.ring.presence?.release();
    Atomics.store(i32, this.base + H_MAGIC, MAGIC_DROPPED);
    this.wakeAll();
    this.left = true;
    this.heap.free(this.handle.ptr);
  }

  /**
   * This object is done with the channel (the channel goes on for the others): its agent record goes back. Any later
   * use of this object throws. Again is harmless.
   */
  leave(): void {
    if (this.left) return;
    this.enter();
    const i32 = this.i32;
    this.ring.presence?.release();
    Atomics.store(i32, this.rec + R_STATE, S_IDLE);
    Atomics.store(i32, this.rec + R_PTR, 0);
    Atomics.store(i32, this.rec + R_ARMED, 0);
    Atomics.store(i32, this.rec + R_PINGS, 0);
    Atomics.store(i32, this.rec + R_ANSWERS, 0);
    Atomics.store(i32, this.rec + R_PINGED_AT, 0);
    Atomics.store(i32, this.rec + R_OWNER, 0);
    this.left = true;
  }

  /** `using ch = openChannel(heap, handle)` leaves at the end of the block. */
  [Symbol.dispose](): void {
    this.leave();
  }

  /**
   * Cleans the records of agents that died holding the channel open: finishes or undoes the step each named (see
   * docs/design/channel.md). Runs by itself when a step finds a slot stuck or when records run out. Returns how many.
   */
  recover(): number {
    this.enter();
    return this.ring.cleanAll();
  }

  /** The channel's figures. */
  stats(): ChannelStats {
    this.enter();
    const i32 = this.i32;
    const b = this.base;
    const tail = Atomics.load(i32, b + H_TAIL);
    const head = Atomics.load(i32, b + H_HEAD);
    let agents = 0;
    for (let k = 0; k < this.ring.recordCount; k++) if (Atomics.load(i32, this.ring.recordAt(k) + R_OWNER) !== 0) agents++;
    return {
      capacity: this.ring.capacity,
      queued: Math.max(0, (tail - head) | 0),
      sent: tail >>> 0,
      received: head >>> 0,
      closed: this.isClosed(),
      parkedSenders: Atomics.load(i32, b + H_PARKED_SENDERS),
      parkedReceivers: Atomics.load(i32, b + H_PARKED_RECEIVERS),
      agents,
      recoveredSends: Atomics.load(i32, b + H_RECOVERED_SENDS),
      recoveredFrees: Atomics.load(i32, b + H_RECOVERED_FREES),
      recordsCleaned: Atomics.load(i32, b + H_RECORDS_CLEANED),
      wakes: Atomics.load(i32, b + H_WAKES),
    };
  }
}
