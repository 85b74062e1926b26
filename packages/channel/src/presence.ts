/**
 * Telling whether the agent holding a channel record is still there. The owner keeps an `Atomics.waitAsync` on a
 * word of its record (R_WAIT, never written) for as long as it holds the record: such a wait costs nothing while it
 * waits and keeps no process alive, and it goes with its thread (Node: after a worker is terminated, a notify of the
 * word wakes nobody). An agent that finds the owner's step stuck pings it: a notify that wakes a waiter says the
 * owner's thread is there, busy or blocked or not. A woken owner waits again, from its event loop or, sooner, from
 * its next slow path of the channel (see {@link RecordPresence.answer}); until it has, a ping that wakes nobody is
 * taken as "still answering" for {@link ANSWER_GRACE_MS}. In a browser (whose workers' waits were seen to answer
 * after `terminate()`) the owner holds a Web Lock instead ({@link channelLockName}), which only the async calls ask
 * about ({@link heldLockNames}); elsewhere with no `waitAsync`, its owner is never taken for dead.
 */
import { hasAgentLocks, holdAgentLock } from '@paddock/platform';
import { R_ANSWERS, R_ARMED, R_PINGED_AT, R_PINGS, R_WAIT } from './layout.js';

/** R_ARMED: the owner keeps its `Atomics.waitAsync` (Node). */
export const ARMED_WAIT = 1;
/** R_ARMED: the owner holds its Web Lock (browsers; see {@link channelLockName}). */
export const ARMED_LOCK = 2;

/**
 * The Web Lock the owner of a channel record holds while it holds the record, where the host has Web Locks (a
 * browser): named after the channel's id and the owner's token, both in the channel block, so any agent can name it.
 * The browser lets it go when the owner's worker is terminated; `navigator.locks.query()` then no longer lists it.
 */
export function channelLockName(channelId: number, token: number): string {
  return `paddock-channel:${channelId >>> 0}:${token}`;
}

interface LockQuery {
  query(): Promise<{ held?: { name?: string }[] }>;
}

/** The names of the Web Locks held now (any agent of this origin), or null where the host has none. */
export async function heldLockNames(): Promise<Set<string> | null> {
  if (!hasAgentLocks()) return null;
  const locks = (globalThis as { navigator?: { locks?: Partial<LockQuery> } }).navigator?.locks;
  if (typeof locks?.query !== 'function') return null;
  const snapshot = await (locks as LockQuery).query();
  const names = new Set<string>();
  for (const l of snapshot.held ?? []) if (typeof l.name === 'string') names.add(l.name);
  return names;
}

/** How long an owner woken by a ping that has not waited again is still taken as alive, in ms. */
export const ANSWER_GRACE_MS = 2000;

/** The low 31 bits of `Date.now()`. */
function nowMs(): number {
  return Date.now() & 0x7fffffff;
}

function presenceWait(): typeof Atomics.waitAsync | null {
  const waitAsync = (Atomics as { waitAsync?: typeof Atomics.waitAsync }).waitAsync;
  const node = typeof process !== 'undefined' && typeof process.versions?.node === 'string';
  return typeof waitAsync === 'function' && node ? waitAsync : null;
}

/** The owner's side: its wait on its record's presence word, from taking the record to giving it back. */
export class RecordPresence {
  /** Counts the waits armed: a wait that settles after a newer one was armed does nothing. */
  private armings = 0;
  /** The pings seen when the wait was last armed. */
  private pingsSeen = 0;
  private held = true;
  /** Lets the owner's Web Lock go (null where the host has none). */
  private readonly releaseLock: (() => void) | null;

  constructor(
    private readonly i32: Int32Array,
    /** Int32 index of the record. */
    private readonly record: number,
    /** The Web Lock to hold while the record is held (see {@link channelLockName}). */
    lockName: string,
  ) {
    this.arm();
    this.releaseLock = holdAgentLock(lockName, () => {
      if (this.held) Atomics.store(this.i32, this.record + R_ARMED, ARMED_LOCK);
    });
  }

  private arm(): void {
    const waitAsync = presenceWait();
    if (waitAsync === null || !this.held) return;
    const armed = ++this.armings;
    this.pingsSeen = Atomics.load(this.i32, this.record + R_PINGS);
    const waiting = waitAsync(this.i32, this.record + R_WAIT, 0);
    if (!waiting.async) return; // the word is never written: it always waits
    Atomics.store(this.i32, this.record + R_ARMED, ARMED_WAIT);
    void waiting.value.then(() => {
      if (armed !== this.armings || !this.held) return;
      this.arm();
      Atomics.add(this.i32, this.record + R_ANSWERS, 1);
    });
  }

  /**
   * From the owner's slow paths (a wait, a stuck slot): when a ping woke the wait since it was armed, waits again at
   * once, without waiting for the event loop (a worker busy in a loop of blocking receives may not return to it).
   */
  answer(): void {
    // A plain load: this runs on every call of the channel object, and a ping it misses is seen by the next one.
    if (!this.held || this.i32[this.record + R_PINGS] === this.pingsSeen) return;
    this.arm();
    Atomics.add(this.i32, this.record + R_ANSWERS, 1);
  }

  /**
   * The record goes back: the wait is not kept again, and is woken (unless `lost`: the record was taken from this
   * owner, and its word may already be another owner's, whose wait must not be woken for nothing; a wait of this
   * owner left there settles with the next ping and does nothing).
   */
  release(lost = false): void {
    this.held = false;
    this.armings++;
    this.releaseLock?.();
    if (!lost) Atomics.notify(this.i32, this.record + R_WAIT);
  }
}

/** What a ping found of a record's owner. */
export type OwnerPresence = 'live' | 'answering' | 'gone' | 'unknown';

/** Pings the owner of the record at Int32 index `record` (see above). */
export function pingOwner(i32: Int32Array, record: number): OwnerPresence {
  // A Web Lock is asked about from the async calls only (heldLockNames): here its owner is not judged.
  if (Atomics.load(i32, record + R_ARMED) !== ARMED_WAIT) return 'unknown';
  const stamp = nowMs();
  const before = Atomics.exchange(i32, record + R_PINGED_AT, stamp);
  Atomics.add(i32, record + R_PINGS, 1);
  if (Atomics.notify(i32, record + R_WAIT, 1) > 0) return 'live';
  Atomics.sub(i32, record + R_PINGS, 1);
  Atomics.compareExchange(i32, record + R_PINGED_AT, stamp, before);
  const unanswered = Atomics.load(i32, record + R_PINGS) - Atomics.load(i32, record + R_ANSWERS);
  if (unanswered > 0 && ((nowMs() - Atomics.load(i32, record + R_PINGED_AT)) & 0x7fffffff) < ANSWER_GRACE_MS) return 'answering';
  return 'gone';
}
