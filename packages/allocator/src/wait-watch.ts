/**
 * The watch before a blocking wait sleeps. A sleep in `Atomics.wait` and the wake that ends it cost tens of
 * microseconds (a futex wait and wake, and the scheduler putting the thread back), more than many waits take
 * between two agents that hand work back and forth: `heap.wait` therefore watches its word for a short while
 * before it sleeps, when that has lately paid. Spin-then-sleep is what adaptive mutexes do (glibc's adaptive
 * mutex, WebKit's and Rust's parking lots); this one decides from the agent's own recent waits:
 * - it watches only while its recent waits were short (under {@link SHORT_WAIT_MS} on average), since a watch of
 *   {@link WAIT_WATCH_MS} cannot see a change that comes later;
 * - and only while most recent watches saw the word change. Where they fail (on one core, the agent waited for
 *   cannot run while this one watches) it sleeps at once, and watches once every {@link WATCH_PROBE_EVERY} waits
 *   to find out whether watching pays again.
 * One policy per agent (this module's state is per thread), whatever heaps or words it waits on.
 */
import { now } from '@paddock/platform';

/** How long a wait watches its word before it sleeps, in ms. */
export const WAIT_WATCH_MS = 0.02;
/** Waits shorter than this (ms), on average, are short enough that a watch may see the word change. */
export const SHORT_WAIT_MS = 0.1;
/** A wait counts at most this long (ms) in the average, so that one long idle wait is soon outweighed. */
export const WAIT_SAMPLE_CAP_MS = 1;
/** While watches mostly fail, one wait in this many still watches. */
export const WATCH_PROBE_EVERY = 64;

/** An agent's record of its recent waits and watches, and the decision it makes from them. */
export class WaitWatch {
  /** How long recent waits took, in ms (a moving average over about the last eight). */
  typicalMs = WAIT_SAMPLE_CAP_MS;
  /** The share of recent watches that saw their word change (a moving average over about the last eight). */
  hits = 1;
  /** Waits since the last watch. */
  private sinceWatch = 0;

  /** Whether the next wait, of at most `timeoutMs`, watches its word first. */
  shouldWatch(timeoutMs: number): boolean {
    if (this.typicalMs >= SHORT_WAIT_MS || timeoutMs <= WAIT_WATCH_MS) return false;
    if (this.hits < 0.5 && ++this.sinceWatch < WATCH_PROBE_EVERY) return false;
    this.sinceWatch = 0;
    return true;
  }

  /** Records a watch: whether it saw its word change. */
  watched(seen: boolean): void {
    this.hits += ((seen ? 1 : 0) - this.hits) / 8;
  }

  /** Records a wait (watch and sleep together) that took `ms`. */
  waited(ms: number): void {
    this.typicalMs += (Math.min(WAIT_SAMPLE_CAP_MS, ms) - this.typicalMs) / 8;
  }
}

/** This agent's policy. */
const agentWatch = new WaitWatch();

/**
 * `Atomics.wait(array, index, value, timeoutMs)`, watching the word first for up to {@link WAIT_WATCH_MS} when this
 * agent's {@link WaitWatch} says so. Returns 'ok' when the word changes during the watch, as a wait woken by the
 * notify that follows such a change would; otherwise what `Atomics.wait` returns.
 */
export function watchThenWait(array: Int32Array, index: number, value: number, timeoutMs: number): 'ok' | 'not-equal' | 'timed-out' {
  if (Atomics.load(array, index) !== value) return 'not-equal';
  const start = now();
  let seen = false;
  if (agentWatch.shouldWatch(timeoutMs)) {
    const until = start + WAIT_WATCH_MS;
    // The clock is read every 32 looks: a look is a few ns, a read of the clock tens.
    for (let i = 1; ; i++) {
      if (Atomics.load(array, index) !== value) {
        seen = true;
        break;
      }
      if ((i & 31) === 0 && now() >= until) break;
    }
    agentWatch.watched(seen);
  }
  const result = seen ? 'ok' : Atomics.wait(array, index, value, Math.max(0, timeoutMs - (now() - start)));
  agentWatch.waited(now() - start);
  return result;
}
