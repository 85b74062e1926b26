/**
 * Telling a live agent from a gone one, for `reap`. An agent keeps an `Atomics.waitAsync` on a word of its area for
 * as long as it is attached (no timeout: such a wait keeps no process alive and costs nothing while it waits). A
 * thread's async waits go with its thread: once a worker has stopped (terminated, crashed, ended), nothing waits on
 * the word any more. So a reaper pings the agent: an `Atomics.notify` of the word that wakes a waiter says the
 * agent's thread is there, busy or not (the wake is queued on its event loop; a thread blocked in a loop or in
 * `Atomics.wait` still holds its wait); one that wakes nobody says it is gone, unless an earlier ping woke the agent
 * and it has not yet answered by waiting again (its event loop has not come round): then it is taken as live for
 * {@link ANSWER_GRACE_MS} after that ping. Where the host has no `Atomics.waitAsync`, or is a browser (below), the
 * agent keeps no wait, and a reaper cannot tell (see `reap`). Words: agent-layout.ts, PRESENCE_OFFSET.
 */
import { AGENT_AREA_COMMIT, AGENT_LIVE, G_STATE, P_ANSWERS, P_ARMED, P_PINGED_AT, P_PINGS, P_WAIT, PRESENCE_OFFSET, type ArenaHeap } from '@paddock/arena';

/** How long after a ping woke an agent that has not answered it yet the agent is still taken as live, in ms. */
export const ANSWER_GRACE_MS = 2000;

/** The low 31 bits of `Date.now()`: what fits a word, compared modulo 2^31. */
function nowMs(): number {
  return Date.now() & 0x7fffffff;
}

/**
 * `Atomics.waitAsync` where a thread's waits are known to go with it: Node's worker threads (checked on Node 20: after
 * `await worker.terminate()` a notify wakes nobody). Not in a browser: in Chromium a reap right after a Web Worker's
 * `terminate()` still found its wait answered, so a page keeps no presence wait and its reaps go as asked (a page
 * learns that an agent is gone from its Web Lock, agent-locks.ts).
 */
function waitAsyncOf(): typeof Atomics.waitAsync | null {
  const waitAsync = (Atomics as { waitAsync?: typeof Atomics.waitAsync }).waitAsync;
  const node = typeof process !== 'undefined' && typeof process.versions?.node === 'string';
  return typeof waitAsync === 'function' && node ? waitAsync : null;
}

/** One agent's wait on its presence word, kept from attach to leave. */
export class Presence {
  private readonly arena: ArenaHeap;
  /** Whether the agent has left (its wait is then not kept again). */
  private readonly gone: () => boolean;
  /** Int32 index of the presence words in the agent's area. */
  private readonly word: number;

  constructor(arena: ArenaHeap, gone: () => boolean) {
    this.arena = arena;
    this.gone = gone;
    this.word = (arena.agentArea + PRESENCE_OFFSET) >>> 2;
    this.keep();
  }

  /** Waits on the presence word; a ping that wakes it is answered by waiting again and counting the answer. */
  private keep(): void {
    const waitAsync = waitAsyncOf();
    if (waitAsync === null || this.gone()) return;
    const i32 = this.arena.i32; // its own area: the views reach it from attach on
    const waiting = waitAsync(i32, this.word + P_WAIT, 0);
    if (!waiting.async) return; // the word is never written: it always waits
    Atomics.store(i32, this.word + P_ARMED, 1);
    void waiting.value.then(() => {
      if (this.gone()) return;
      this.keep();
      Atomics.add(this.arena.i32, this.word + P_ANSWERS, 1);
    });
  }

  /**
   * The agent has left (its area says so: a reaper no longer pings it): the wait is woken and not kept again, so
   * that nothing of this agent (its thread may live on) answers for the next agent laid out in the area. That agent
   * may be waiting already (it zeroed the words and armed its own): it is woken too, and simply waits again.
   */
  leave(): void {
    Atomics.notify(this.arena.i32, this.word + P_WAIT);
  }
}

/** What a ping found of an agent. */
export type AgentPresence = 'live' | 'answering' | 'gone' | 'unknown';

/**
 * Pings the agent whose area is at `area` (the views `i32` reach its presence words): `'live'` when its wait was
 * there, `'answering'` when an earlier ping woke it less than {@link ANSWER_GRACE_MS} ago and it has not waited
 * again yet, `'gone'` when nothing waits, `'unknown'` when it never kept a wait (a host without `waitAsync`).
 */
export function pingAgent(i32: Int32Array, area: number): AgentPresence {
  const w = (area + PRESENCE_OFFSET) >>> 2;
  if (Atomics.load(i32, w + P_ARMED) !== 1) return 'unknown';
  // Counted and stamped before the notify, so that the agent's answer (which follows the wake) never comes before
  // the ping it answers, and another reaper that finds the wait taken finds the stamp; both taken back if it woke
  // nobody (the stamp only if no other ping stamped it since).
  const stamp = nowMs();
  const stampedBefore = Atomics.exchange(i32, w + P_PINGED_AT, stamp);
  Atomics.add(i32, w + P_PINGS, 1);
  if (Atomics.notify(i32, w + P_WAIT, 1) > 0) return 'live';
  Atomics.sub(i32, w + P_PINGS, 1);
  Atomics.compareExchange(i32, w + P_PINGED_AT, stamp, stampedBefore);
  const unanswered = Atomics.load(i32, w + P_PINGS) - Atomics.load(i32, w + P_ANSWERS);
  if (unanswered > 0 && ((nowMs() - Atomics.load(i32, w + P_PINGED_AT)) & 0x7fffffff) < ANSWER_GRACE_MS) return 'answering';
  return 'gone';
}

/**
 * Pings agent `agentId` of `arena`'s heap when it is another agent that has not left (see {@link pingAgent});
 * `'gone'` for one that left, crashed or has no area, and for this agent itself.
 */
export function pingLiveAgent(arena: ArenaHeap, agentId: number): AgentPresence {
  const area = arena.areaOf(agentId);
  if (area === 0 || area === arena.agentArea || !arena.cover(area + AGENT_AREA_COMMIT)) return 'gone';
  if (Atomics.load(arena.i32, (area >>> 2) + G_STATE) !== AGENT_LIVE) return 'gone';
  return pingAgent(arena.i32, area);
}
