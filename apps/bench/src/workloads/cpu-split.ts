/**
 * Where an agent's time went in one program run: the allocator, the program around it, the garbage collector,
 * or waiting. Each agent of a profiled run records a V8 CPU profile (`node:inspector`) and sorts every sample
 * between the run's start and end:
 *
 * - waiting: the thread idles, or the sample's innermost function is one that only waits (the heap's `wait` and
 *   its watch, the harness's barrier and doorbell wait): a blocked `Atomics.wait` is sampled as the function that
 *   called it;
 * - garbage collector: V8's `(garbage collector)` entry;
 * - allocator: any function of the allocator's module on the sample's stack;
 * - program: everything else, V8's own `(program)` entry included.
 *
 * A sample weighs the time to the next one. V8 gives an inlined function's samples to its caller (measured: a
 * small function inlined into a loop gets none of them), so a `malloc` inlined into the program's loop counts as
 * the program; the floor (`split-report.ts`) is the measure that sees it.
 */

/** Milliseconds of one run by where they went, summed over its agents. */
export interface CpuSplit {
  allocatorMs: number;
  programMs: number;
  gcMs: number;
  waitingMs: number;
  samples: number;
}

/** The parts of a V8 CPU profile (`Profiler.stop`) that the split reads. */
export interface CpuProfile {
  readonly nodes: readonly { id: number; callFrame: { functionName: string; url: string }; children?: readonly number[] }[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

/** Functions that only wait: the innermost frame of a sample taken while an agent blocks or watches a word. */
export const WAITING_FUNCTIONS: ReadonlySet<string> = new Set(['wait', 'watchThenWait', 'waitAsync', 'barrier', 'waitUntil']);

export function emptySplit(): CpuSplit {
  return { allocatorMs: 0, programMs: 0, gcMs: 0, waitingMs: 0, samples: 0 };
}

export function addSplit(into: CpuSplit, x: CpuSplit): void {
  into.allocatorMs += x.allocatorMs;
  into.programMs += x.programMs;
  into.gcMs += x.gcMs;
  into.waitingMs += x.waitingMs;
  into.samples += x.samples;
}

const WAITING = 0;
const GC = 1;
const ALLOCATOR = 2;
const PROGRAM = 3;

/**
 * Sorts the samples of `profile` taken from `fromUs` to `toUs` (microseconds after the profile's start) by where
 * they went; `allocatorUrl` is the URL of the allocator's module as V8 names it in a call frame.
 */
export function splitProfile(profile: CpuProfile, allocatorUrl: string, fromUs = 0, toUs = Infinity): CpuSplit {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const kindOf = new Map<number, number>();
  const kind = (id: number): number => {
    let k = kindOf.get(id);
    if (k !== undefined) return k;
    const f = byId.get(id)!.callFrame;
    if (f.functionName === '(idle)' || (WAITING_FUNCTIONS.has(f.functionName) && f.url !== '')) k = WAITING;
    else if (f.functionName === '(garbage collector)') k = GC;
    else {
      k = PROGRAM;
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        if (byId.get(at)!.callFrame.url === allocatorUrl) {
          k = ALLOCATOR;
          break;
        }
      }
    }
    kindOf.set(id, k);
    return k;
  };
  const out = emptySplit();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let t = 0;
  for (let i = 0; i < samples.length; i++) {
    t += deltas[i] ?? 0;
    if (t < fromUs || t > toUs) continue;
    // A sample weighs the time to the next one (the last, the time to the profile's end).
    const next = i + 1 < samples.length ? (deltas[i + 1] ?? 0) : Math.max(0, profile.endTime - profile.startTime - t);
    const ms = next / 1000;
    out.samples++;
    switch (kind(samples[i]!)) {
      case WAITING:
        out.waitingMs += ms;
        break;
      case GC:
        out.gcMs += ms;
        break;
      case ALLOCATOR:
        out.allocatorMs += ms;
        break;
      default:
        out.programMs += ms;
    }
  }
  return out;
}

/** The allocator's share of the busy time (all but waiting), 0..1; null with nothing busy. */
export function allocatorShare(s: CpuSplit): number | null {
  const busy = s.allocatorMs + s.programMs + s.gcMs;
  return busy > 0 ? s.allocatorMs / busy : null;
}

/** A CPU profile being recorded on this thread (see {@link startProfile}). */
export interface Recording {
  readonly session: import('node:inspector/promises').Session;
  /** When the profiler had started, ms on the clock every agent shares (`performance.timeOrigin + now()`). */
  readonly startMs: number;
}

/** Sampling interval of a profiled run, microseconds. */
const SAMPLE_US = 250;

/** Starts V8's sampling profiler on this thread (the main thread or a worker). */
export async function startProfile(): Promise<Recording> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: SAMPLE_US });
  await session.post('Profiler.start');
  return { session, startMs: performance.timeOrigin + performance.now() };
}

/** Stops `rec` and splits its samples from `t0Ms` to `t1Ms` (the run's own start and end, same clock). */
export async function stopProfile(rec: Recording, allocatorUrl: string, t0Ms: number, t1Ms: number): Promise<CpuSplit> {
  try {
    const { profile } = (await rec.session.post('Profiler.stop')) as { profile: CpuProfile };
    return splitProfile(profile, allocatorUrl, (t0Ms - rec.startMs) * 1000, (t1Ms - rec.startMs) * 1000);
  } finally {
    rec.session.disconnect();
  }
}
