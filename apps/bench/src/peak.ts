/**
 * Peak resident memory of one run. Linux keeps the process's high-water mark (VmHWM); writing 5 to
 * /proc/self/clear_refs resets it to the current RSS, so the peak of a run is VmHWM read after it, with
 * the reset just before. Elsewhere (or where the write is refused) the peak is sampled instead: the
 * largest RSS seen at the calls to `sample()`, which the drivers make at the phases where memory peaks.
 */
import { readFileSync, writeFileSync } from 'node:fs';

let resettable: boolean | null = null;
let sampled = 0;

export function rssNow(): number {
  return process.memoryUsage.rss();
}

const nap = new Int32Array(new SharedArrayBuffer(4));

/**
 * Waits (at most 100 ms, in 10 ms steps) until resident memory stops moving: the buffers of the previous
 * run (a SharedArrayBuffer, a wasm memory) are freed some milliseconds after the collection that drops
 * them, on another thread, and a run that starts before that would see them go during its own peak.
 * `gc` collects garbage first.
 */
export function settle(gc: () => void): void {
  gc();
  let last = rssNow();
  for (let i = 0; i < 10; i++) {
    Atomics.wait(nap, 0, 0, 10);
    const now = rssNow();
    if (Math.abs(now - last) < 256 * 1024) return;
    last = now;
  }
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
