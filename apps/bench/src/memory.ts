/**
 * Memory as the workloads read it: a full garbage collection between runs, the process's resident memory
 * now and once it has settled, and the peak of one run. Linux keeps the process's high-water mark (VmHWM);
 * writing 5 to /proc/self/clear_refs resets it to the current RSS, so the peak of a run is VmHWM read
 * after it, with the reset just before. Elsewhere (or where the write is refused) the peak is sampled
 * instead: the largest RSS seen at the calls to `sample()`, which the drivers make at the phases where
 * memory peaks.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Full garbage collection between batches: old buffers go, and no collection is due mid-batch. */
export const collectGarbage: () => void = (() => {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return g;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

let resettable: boolean | null = null;
let sampled = 0;

/** Resident memory of this process (the OS's figure). */
export function rssNow(): number {
  return process.memoryUsage.rss();
}

const nap = new Int32Array(new SharedArrayBuffer(4));

/**
 * Waits (at most 100 ms, in 10 ms steps) until resident memory stops moving, and returns it: the buffers
 * of the previous run (a SharedArrayBuffer, a wasm memory) are freed some milliseconds after the
 * collection that drops them, on another thread, and a run that starts before that would see them go
 * during its own peak. `gc` collects garbage first.
 */
export function settle(gc: () => void = collectGarbage): number {
  gc();
  let last = rssNow();
  for (let i = 0; i < 10; i++) {
    Atomics.wait(nap, 0, 0, 10);
    const now = rssNow();
    if (Math.abs(now - last) < 256 * 1024) return now;
    last = now;
  }
  return last;
}

/** Starts a run: resets the high-water mark; returns RSS now (the run's base). */
export function resetPeak(): number {
  if (resettable !== false) {
    try {
      writeFileSync('/proc/self/clear_refs', '5');
      resettable = true;
    } catch {
      resettable = false;
    }
  }
  sampled = rssNow();
  return sampled;
}

export function sample(): void {
  const r = rssNow();
  if (r > sampled) sampled = r;
}

/** The run's peak RSS in bytes (the high-water mark since `resetPeak`). */
export function peakRss(): number {
  sample();
  if (resettable) {
    try {
      const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync('/proc/self/status', 'utf8'));
      if (m) return Math.max(Number(m[1]) * 1024, sampled);
    } catch {
      // fall through to the sampled peak
    }
  }
  return sampled;
}

export function peakMethod(): string {
  return resettable ? 'VmHWM reset per run (/proc/self/clear_refs)' : 'sampled RSS';
}

const PAGE = 4096;

/**
 * Writes one byte into every page of [from, to) of `u8`, as a program writes what it allocates: memory
 * a peer gave back to the OS (or never touched) faults in here.
 */
export function touchPages(u8: Uint8Array, from: number, to: number): void {
  for (let q = from; q < to; q = (q & ~(PAGE - 1)) + PAGE) u8[q] = 1;
  if (to > from) u8[to - 1] = 1;
}
