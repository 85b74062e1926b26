/**
 * The native references: `native/programs.c`, the same workloads and programs in C (pthreads for agents),
 * built at set-up with the machine's `cc` against a malloc (glibc's, or mimalloc with
 * `-DUSE_MIMALLOC -lmimalloc`). Each batch and each program run is one process of the binary: it draws the
 * same sequences from the same seeds, writes the same words into each block, times its own loop and
 * prints its figures as one line of JSON.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { Adapter } from '../adapter.js';
import type { BatchResult, Peer } from '../runner.js';
import { MAX_SIZE, MIN_SIZE, type TimedWorkload } from '../timed-loops.js';
import { APP, build, type Built, have } from '../toolchain.js';
import type { PeerDescriptor } from './peer.js';

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

/** Runs one program (or the pair or the churn) of the binary at `bin` with `params`. */
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
function timedPeer(name: string, bin: string): Peer {
  const external = (w: TimedWorkload, ops: number): BatchResult => {
    const params: Record<string, number> =
      w.kind === 'pair' ? { ops } : { live: w.live, ops, seed: w.seed, min: MIN_SIZE, max: MAX_SIZE };
    const r = runNative(bin, w.kind, params);
    if (!r.ok) return { ok: false, error: r.error ?? 'failed' };
    return { ok: true, ns: r.seconds * 1e9, ops: r.ops, touched: w.kind === 'churn', peakRss: Math.max(0, r.maxrss - r.rss0) };
  };
  return { name, adapter: new NativePlaceholder(name), loops: null as never, maxBytes: 0, external };
}

/** How the binary is linked: `-D` flags before the source, libraries after it, and what to say when a library is missing. */
export interface NativeLink {
  readonly defines: readonly string[];
  readonly libs: readonly string[];
  readonly missing?: (reason: string) => string;
}

/** Builds `native/programs.c` with `cc` (named by `suffix`), linked as `link` says. */
function buildNative(suffix: string, link: NativeLink): Built {
  if (!have('cc')) return { ok: false, reason: 'no C compiler: `cc` not found (apt-get install -y gcc)' };
  const source = join(APP, 'native', 'programs.c');
  const built = build('native', source, suffix, 'cc', (o) => ['-O2', '-pthread', '-o', o, ...link.defines, source, ...link.libs, '-lm']);
  return built.ok || link.missing === undefined ? built : { ok: false, reason: link.missing(built.reason) };
}

/** A native reference peer: `programs.c` linked against one malloc. */
export function nativeReference(name: string, link: NativeLink): PeerDescriptor {
  return {
    name,
    offers: ['pair-churn', 'one-agent', 'agents'],
    build: { toolchain: 'native', build: () => buildNative(`-${name}`, link) },
    load: (peer, bin) => ({ timed: timedPeer(peer, bin as string), bin: bin as string }),
  };
}
