/** What the main thread and `program-worker.ts` say to each other (the multi-agent programs). */
import type { MessagePort } from 'node:worker_threads';
import type { HeapHandle } from '@paddock/allocator';
import type { CpuSplit } from './cpu-split.js';

/** Control words (Int32 indexes into `ctl`). */
export const K_READY = 0;
export const K_GO = 1;
export const K_STOP = 2;
export const K_ABORT = 3;
/** idle: 1 held, 2 free now, 3 freed. */
export const K_PHASE = 4;
/** larson: the mailbox (an array index). */
export const K_MAILBOX = 5;
/** Doorbells, one per agent (8..15): bumped and notified when there is something for that agent; an agent blocks on its own. */
export const K_BELL = 8;
/** js producer-consumer: batches consumed, per producer (16..23). */
export const K_CREDIT = 16;
export const K_WORDS = 32;

/** A ring of Int32 entries in a SharedArrayBuffer: head at word 0, tail at word 16, entries from word 32. */
export const R_HEAD = 0;
export const R_TAIL = 16;
export const R_BASE = 32;

export function ringBytes(capacity: number): number {
  let c = 1;
  while (c < capacity) c <<= 1;
  return (R_BASE + c) * 4;
}

/** `paddock`: the heap in `handle`, attached with `attachHeap` from `url`; `js`: plain JavaScript. */
export type WorkerMode = 'paddock' | 'js';

export interface ProgramRun {
  readonly cmd: 'run';
  readonly program: string;
  readonly id: number;
  readonly agents: number;
  readonly params: Readonly<Record<string, number>>;
  readonly handle: HeapHandle | null;
  readonly ctl: SharedArrayBuffer;
  /** Rings (paddock mode), by the program's own numbering. */
  readonly rings: SharedArrayBuffer[];
  /** Extra shared words: larson's slot arrays, mstress's transfer array, idle's pointer list... */
  readonly shared: SharedArrayBuffer | null;
  /** js mode: ports by the program's own numbering (in[k], out[k]). */
  readonly ports: { in: MessagePort | MessagePort[] | null; out: MessagePort | null };
  /** Record a CPU profile of the run and report where its time went (paddock mode; see `cpu-split.ts`). */
  readonly profile: boolean;
}

export interface ProgramReport {
  readonly id: number;
  readonly t0: number;
  readonly t1: number;
  readonly ops: number;
  readonly bad: number;
  readonly extra: Record<string, number | null>;
  readonly error: string | null;
  /** Where the agent's time went from t0 to t1, in a profiled run. */
  readonly cpu: CpuSplit | null;
}

/** Messages a worker sends while a run is in progress (idle's phases), besides its final report. */
export interface ProgramEvent {
  readonly event: string;
  readonly id: number;
  readonly t: number;
}
