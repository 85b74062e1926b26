/**
 * A channel object: one agent's hold on a channel (its record in the channel's block, its view of the ring), and the
 * public calls. Waits are heap waits (`heap.wait`, `heap.waitAsync`): this agent's pending frees go home before it
 * sleeps and what came home is taken in after; a waiter is counted parked first, so that a sender or receiver
 * notifies only when someone is (docs/design/channel.md, parking).
 */
import { HeapError, type Heap } from '@paddock/allocator';
import { agentCanBlock } from '@paddock/platform';
import {
  FLAG_CLOSED,
  FLAG_DROPPED,
  H_FLAGS,
  H_HEAD,
  H_ID,
  H_MAGIC,
  H_PARKED_RECEIVERS,
  H_PARKED_SENDERS,
  H_RECORDS_CLEANED,
  H_RECOVERED_FREES,
  H_RECOVERED_SENDS,
  H_RECV_WAKE,
  H_SEND_WAKE,
  H_TAIL,
  H_TOKENS,
  H_WAKES,
  MAGIC,
  MAGIC_DROPPED,
  R_ANSWERS,
  R_ARMED,
  R_OWNER,
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
import { RecordPresence } from './presence.js';
import { EMPTY, READY, Ring, STUCK } from './ring.js';

/** What `recv`, `recvAsync` and the batch receives return when their timeout passed first. */
export const TIMED_OUT = -1;
/** Steps retried before a waiter parks. */
const SPINS = 16;
/** A waiter that found a slot claimed mid-step parks this long at most before it looks again, in ms. */
const STUCK_WAIT_MS = 2;

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

/** One agent's hold on a channel (see createChannel and openChannel). */
export class Channel {
  readonly handle: ChannelHandle;
  private readonly heap: Heap;
  private readonly ring: Ring;
  private readonly i32: Int32Array;
  private readonly base: number;
  private readonly id: number;
  /** Int32 index of this object's record. */
  private readonly rec: number;
  private left = false;

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
    for (let pass = 0; pass < 2; pass++) {
      for (let k = 0; k < ring.recordCount; k++) {
        const r = ring.recordAt(k);
        if (Atomics.compareExchange(i32, r + R_OWNER, 0, token) !== 0) continue;
        Atomics.store(i32, r + R_STATE, S_IDLE);
        Atomics.store(i32, r + R_PTR, 0);
        ring.rec = r;
        ring.recIndex = k;
        ring.claimTag = ((k + 1) << STAMP_BITS) | 0;
        ring.presence = new RecordPresence(i32, r);
        return r;
      }
      ring.cleanAll();
    }
    throw new HeapError('CHANNEL_AGENTS', `every one of the channel's ${ring.recordCount} agent records is held by a live agent (createChannel's agents option)`);
  }

  // ---- checks --------------------------------------------------------------------------------------------

  /** Every call starts here. @throws HeapError CHANNEL_DROPPED (or BAD_HANDLE), DETACHED. */
  private enter(): void {
    const i32 = this.i32;
    if (this.left) throw new HeapError('BAD_HANDLE', 'this channel object has left the channel (leave()): open it again');
    if (Atomics.load(i32, this.base + H_MAGIC) !== MAGIC || i32[this.base + H_ID] !== this.id) {
      // A dropped channel's block went back to the heap, whose free lists may have written its first words; the
      // flags word says dropped until the block is reused.
      if (i32[this.base + H_MAGIC] === MAGIC_DROPPED || (Atomics.load(i32, this.base + H_FLAGS) & FLAG_DROPPED) !== 0) {
        throw new HeapError('CHANNEL_DROPPED', 'this channel has been dropped');
      }
      throw new HeapError('BAD_HANDLE', 'the channel block no longer holds this channel (dropped and reused?)');
    }
    if (this.heap.isDetached) throw new HeapError('DETACHED', 'the heap object this channel was opened with is closed');
  }

  private closedError(): HeapError {
    return new HeapError('CHANNEL_CLOSED', 'this channel is closed: it takes no more blocks');
  }

  /** @throws HeapError BAD_POINTER unless `ptr` is a live block of this heap. */
  private checkPointer(ptr: number): void {
    if (typeof ptr !== 'number' || (ptr >>> 0) !== ptr || ptr === 0) throw new HeapError('BAD_POINTER', `send takes a block pointer, got ${describe(ptr)}`);
    try {
      this.heap.usableSize(ptr);
    } catch (err) {
      if (err instanceof HeapError && err.code === 'DETACHED') throw err;
      const why = err instanceof Error ? err.message : String(err);
      throw new HeapError('BAD_POINTER', `send: ${ptr} is not a live block of this heap (${why})`, ptr);
    }
  }

  private checkCanBlock(): void {
    if (!agentCanBlock()) {
      throw new HeapError('CANNOT_BLOCK', 'this thread may not block (a browser window\'s main thread): use sendAsync, recvAsync or for await');
    }
  }

  private checkCount(ptrs: ArrayLike<number>, count: number | undefined): number {
    if (ptrs === null || typeof ptrs !== 'object' || typeof ptrs.length !== 'number') throw new TypeError('a batch send takes an array of pointers');
    const n = count ?? ptrs.length;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > ptrs.length) throw new RangeError(`count must be an integer from 0 to ${ptrs.length}, got ${describe(n)}`);
    for (let k = 0; k < n; k++) this.checkPointer(ptrs[k]!);
    return n;
  }

  private checkOut(out: Uint32Array | number[], max: number | undefined): number {
    if (!(out instanceof Uint32Array) && !Array.isArray(out)) throw new TypeError('a batch receive takes a Uint32Array or an array to fill');
    const n = max ?? out.length;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || (out instanceof Uint32Array && n > out.length)) {
      throw new RangeError(`max must be an integer from 1 to ${out.length}, got ${describe(n)}`);
    }
    return n;
  }

  private checkTimeout(timeoutMs: number): void {
    if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be a non-negative number, got ${describe(timeoutMs)}`);
  }

  private isClosed(): boolean {
    return (Atomics.load(this.i32, this.base + H_FLAGS) & FLAG_CLOSED) !== 0;
  }

  // ---- one send, one receive -----------------------------------------------------------------------------

  /** One attempt to send `ptr` (checked): true when it went; false when full or stuck. */
  private trySendOne(ptr: number): boolean {
    const i32 = this.i32;
    Atomics.store(i32, this.rec + R_PTR, ptr);
    Atomics.store(i32, this.rec + R_STATE, S_SEND_INTENT);
    const r = this.ring.sendStep(ptr);
    Atomics.store(i32, this.rec + R_STATE, S_IDLE);
    if (r !== 1) return false;
    this.ring.wakeReceivers(1);
    return true;
  }

  /** One attempt to receive: the block, or 0 (empty or stuck). */
  private tryRecvOne(): number {
    const i32 = this.i32;
    Atomics.store(i32, this.rec + R_PTR, 0);
    Atomics.store(i32, this.rec + R_STATE, S_RECV);
    const r = this.ring.recvStep();
    Atomics.store(i32, this.rec + R_STATE, S_IDLE);
    if (r === EMPTY || r === STUCK) return 0;
    this.ring.wakeSenders(1);
    return r >>> 0;
  }

  /**
   * Sends `ptr` (checked), waiting while full: blocking (`blocking`) or not (returns a promise then). The record
   * names the block for the whole call, waits included: a sender that dies waiting has its block freed.
   */
  private sendWaiting(ptr: number, blocking: true): void;
  private sendWaiting(ptr: number, blocking: false): Promise<void> | undefined;
  private sendWaiting(ptr: number, blocking: boolean): Promise<void> | undefined {
    const i32 = this.i32;
    const ring = this.ring;
    Atomics.store(i32, this.rec + R_PTR, ptr);
    Atomics.store(i32, this.rec + R_STATE, S_SEND_INTENT);
    for (let spin = 0; ; spin++) {
      const r = ring.sendStep(ptr);
      if (r === 1) return this.sent();
      if (this.isClosed()) return this.sendRefused();
      if (spin < SPINS) continue;
      const wake = Atomics.load(i32, this.base + H_SEND_WAKE);
      Atomics.add(i32, this.base + H_PARKED_SENDERS, 1);
      const again = ring.sendStep(ptr);
      if (again === 1 || this.isClosed()) {
        Atomics.sub(i32, this.base + H_PARKED_SENDERS, 1);
        if (again === 1) return this.sent();
        return this.sendRefused();
      }
      ring.presence?.answer();
      const bound = again === STUCK ? STUCK_WAIT_MS : Infinity;
      if (!blocking) return this.sendParkedAsync(ptr, wake, bound);
      try {
        this.heap.wait(i32, this.base + H_SEND_WAKE, wake, bound);
      } finally {
        Atomics.sub(i32, this.base + H_PARKED_SENDERS, 1);
      }
      this.enter();
    }
  }

  private async sendParkedAsync(ptr: number, wake: number, bound: number): Promise<void> {
    const keep = keepAlive();
    try {
      await this.heap.waitAsync(this.i32, this.base + H_SEND_WAKE, wake, bound);
    } finally {
      clearTimeout(keep);
      Atomics.sub(this.i32, this.base + H_PARKED_SENDERS, 1);
    }
    this.enter();
    return this.sendWaiting(ptr, false);
  }

  private sent(): undefined {
    Atomics.store(this.i32, this.rec + R_STATE, S_IDLE);
    this.ring.wakeReceivers(1);
    return undefined;
  }

  private sendRefused(): never {
    Atomics.store(this.i32, this.rec + R_STATE, S_IDLE); // the block stays the caller's
    throw this.closedError();
  }

  /**
   * Receives, waiting until `deadline` (a `performance.now()` time, Infinity for none): the block, 0 once closed and
   * empty, TIMED_OUT. Blocking, or a promise of it.
   */
  private recvWaiting(deadline: number, blocking: true): number;
  private recvWaiting(deadline: number, blocking: false): number | Promise<number>;
  private recvWaiting(deadline: number, blocking: boolean): number | Promise<number> {
    const i32 = this.i32;
    const ring = this.ring;
    for (let spin = 0; ; spin++) {
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
      if (spin < SPINS) continue;
      const left = deadline - performance.now();
      if (left <= 0) return TIMED_OUT;
      const wake = Atomics.load(i32, this.base + H_RECV_WAKE);
      Atomics.add(i32, this.base + H_PARKED_RECEIVERS, 1);
      p = this.tryRecvOne();
      if (p !== 0 || this.isClosed()) {
        Atomics.sub(i32, this.base + H_PARKED_RECEIVERS, 1);
        if (p !== 0) return p;
        continue;
      }
      ring.presence?.answer();
      const bound = ring.peekHead() === STUCK ? Math.min(left, STUCK_WAIT_MS) : left;
      if (!blocking) return this.recvParkedAsync(deadline, wake, bound);
      try {
        this.heap.wait(i32, this.base + H_RECV_WAKE, wake, bound);
      } finally {
        Atomics.sub(i32, this.base + H_PARKED_RECEIVERS, 1);
      }
      this.enter();
    }
  }

  private async recvParkedAsync(deadline: number, wake: number, bound: number): Promise<number> {
    const keep = keepAlive();
    try {
      await this.heap.waitAsync(this.i32, this.base + H_RECV_WAKE, wake, bound);
    } finally {
      clearTimeout(keep);
      Atomics.sub(this.i32, this.base + H_PARKED_RECEIVERS, 1);
    }
    this.enter();
    return this.recvWaiting(deadline, false);
  }

  private deadlineOf(timeoutMs: number | undefined): number {
    if (timeoutMs === undefined) return Infinity;
    this.checkTimeout(timeoutMs);
    return performance.now() + timeoutMs;
  }

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
    for (let k = 0; k < n; k++) this.sendWaiting(ptrs[k]!, true);
  }

  /** Sends as many of `ptrs[0..count)` as fit now, in order; returns how many went (a prefix). */
  trySendBatch(ptrs: ArrayLike<number>, count?: number): number {
    this.enter();
    const n = this.checkCount(ptrs, count);
    if (this.isClosed()) throw this.closedError();
    let k = 0;
    while (k < n && this.trySendOne(ptrs[k]!)) k++;
    return k;
  }

  /** {@link sendBatch} without blocking the agent. */
  async sendBatchAsync(ptrs: ArrayLike<number>, count?: number): Promise<void> {
    this.enter();
    const n = this.checkCount(ptrs, count);
    if (this.isClosed()) throw this.closedError();
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
    while (k < max) {
      const p = this.tryRecvOne();
      if (p === 0) break;
      out[k++] = p;
    }
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
