/**
 * The watch before a blocking wait sleeps. A sleep in `Atomics.wait` and the wake that ends it cost tens of
 * microseconds (a futex wait and wake, and the scheduler putting the thread back), more than many waits take
 * between two agents that hand work back and forth: `heap.wait` therefore watches its word for up to
 * {@link WAIT_WATCH_MS} before it sleeps, as adaptive mutexes spin before they park. Only where the process can
 * run two threads at once: on one core the agent waited for cannot run while this one watches, so the watch
 * could only ever fail, and the agent sleeps at once.
 */
import { availableCores, now } from '@paddock/platform';

/** How long a wait watches its word before it sleeps, in ms. */
export const WAIT_WATCH_MS = 0.02;

/** The watch for a process that can run `cores` threads at once, in ms: {@link WAIT_WATCH_MS}, or 0 on one core. */
export function watchFor(cores: number): number {
  return cores >= 2 ? WAIT_WATCH_MS : 0;
}

/** This agent's watch (ms), decided on the first wait. */
let watchMs = -1;

/**
 * `Atomics.wait(array, index, value, timeoutMs)`, watching the word first for up to {@link WAIT_WATCH_MS} (see
 * above; not for a wait no longer than that). Returns 'ok' when the word changes during the watch, as a wait woken
 * by the notify that follows such a change would; otherwise what `Atomics.wait` returns.
 */
export function watchThenWait(array: Int32Array, index: number, value: number, timeoutMs: number): 'ok' | 'not-equal' | 'timed-out' {
  if (Atomics.load(array, index) !== value) return 'not-equal';
  if (watchMs < 0) watchMs = watchFor(availableCores());
  if (watchMs > 0 && timeoutMs > watchMs) {
    const start = now();
    const until = start + watchMs;
    // The clock is read every 32 looks: a look costs a few ns, a read of the clock tens.
    for (let i = 1; ; i++) {
      if (Atomics.load(array, index) !== value) return 'ok';
      if ((i & 31) === 0 && now() >= until) break;
    }
    timeoutMs = Math.max(0, timeoutMs - (now() - start));
  }
  return Atomics.wait(array, index, value, timeoutMs);
}
