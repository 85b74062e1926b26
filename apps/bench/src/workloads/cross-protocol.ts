/** The cross-agent free workload's shared words and messages (main thread and `cross-worker.ts`). */
import type { MessagePort } from 'node:worker_threads';
import type { HeapHandle } from '@paddock/allocator';

// Control words (Int32 indexes into `ctl`).
export const C_READY = 0;
/** Batches published. */
export const C_HEAD = 1;
/** Batches consumed. */
export const C_TAIL = 2;
/** Total batches once the producer is done; -1 before. */
export const C_END = 3;
/** Bumped on every publish and at the end: what the consumer waits on (no lost wake-ups). */
export const C_EPOCH = 4;
/** 1 once the consumer has sent every block home (flushCache + flush). */
export const C_DONE = 5;
/** Set by a side that failed: the other stops waiting. */
export const C_ABORT = 6;
export const C_WORDS = 8;

export type CrossMode = 'paddock' | 'js-transfer' | 'js-typed';

export interface CrossWorkerData {
  readonly role: 'producer' | 'consumer';
  readonly mode: CrossMode;
  readonly paddockUrl: string | null;
  readonly port: MessagePort | null;
}

export interface CrossRun {
  readonly cmd: 'run';
  readonly round: number;
  /** The heap's handle (paddock mode). */
  readonly handle: HeapHandle | null;
  readonly ctl: SharedArrayBuffer;
  readonly ring: SharedArrayBuffer | null;
  readonly batch: number;
  readonly slots: number;
  readonly durationMs: number;
}

export interface CrossReport {
  readonly round: number;
  readonly role: 'producer' | 'consumer';
  /** ms on a clock both workers share (timeOrigin + now). */
  readonly t: number;
  readonly batches: number;
  /** Serials that did not match (consumer). */
  readonly bad: number;
  /** ms this side spent blocked: the producer on a full ring, the consumer on an empty one. */
  readonly waitMs: number;
  /** Producer, paddock: objects its explicit drains reclaimed, live bytes after the final drain, committed bytes. */
  readonly drained: number | null;
  readonly liveBytesAfter: number | null;
  readonly committedBytes: number | null;
  readonly error: string | null;
}

