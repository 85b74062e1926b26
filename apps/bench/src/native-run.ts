/** Runs one workload of the native references (`native/programs.c`, built by `toolchain.ts`). */
import { spawnSync } from 'node:child_process';
import type { Adapter } from './adapter.js';
import type { BatchResult, Peer } from './runner.js';
import { MAX_SIZE, MIN_SIZE, type Workload } from './workloads.js';

export interface NativeResult {
  readonly ok: boolean;
  readonly alloc?: string;
  readonly seconds: number;
  readonly ops: number;
  readonly bad: number;
  /** The process's resident memory at its start and its peak (ru_maxrss), bytes. */
  readonly rss0: number;
  readonly maxrss: number;
  readonly error?: string;
  readonly [extra: string]: unknown;
}

export function runNative(bin: string, program: string, params: Record<string, number>, timeoutMs = 120_000): NativeResult {
  const args = [program, ...Object.entries(params).map(([k, v]) => `${k}=${Math.round(v)}`)];
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: timeoutMs });
  const fail = (error: string): NativeResult => ({ ok: false, seconds: 0, ops: 0, bad: 0, rss0: 0, maxrss: 0, error });
  if (r.error) return fail(r.error.message);
  const line = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  try {
    const res = JSON.parse(line) as NativeResult;
    if (!res.ok) return fail(res.error ?? `exit ${r.status}`);
    return res;
  } catch {
    return fail(`exit ${r.status}, signal ${r.signal}: ${(r.stderr ?? '').trim().slice(0, 200) || line.slice(0, 200)}`);
  }
}

/** A placeholder adapter: the native references never run in this process. */
class NativePlaceholder implements Adapter {
  constructor(readonly name: string) {}
  setup(): void {}
  malloc(): number {
    return 0;
  }
  free(): void {}
  teardown(): void {}
  bytes(): Uint8Array | null {
    return null;
  }
}

/**
 * The native reference as a peer of the pair and the churn: each batch is one run of the C program,
 * which draws the same sequence from the same seed, prefills and writes the blocks the same way, and
 * times its own loop (process start and the sequence are outside the timing).
 */
export function nativePeer(name: string, bin: string): Peer {
  const external = (w: Workload, ops: number): BatchResult => {
    const params: Record<string, number> =
      w.kind === 'pair' ? { ops } : { live: w.live, ops, seed: w.seed, min: MIN_SIZE, max: MAX_SIZE };
    const r = runNative(bin, w.kind, params);
    if (!r.ok) return { ok: false, error: r.error ?? 'failed' };
    return { ok: true, ns: r.seconds * 1e9, ops: r.ops, touched: w.kind === 'churn', peakRss: Math.max(0, r.maxrss - r.rss0) };
  };
  return { name, adapter: new NativePlaceholder(name), loops: null as never, maxBytes: 0, external };
}
