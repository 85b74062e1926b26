/**
 * What every agent of the multi-agent programs uses, whichever the program: its run (`Agent`), the stop
 * word, the start barrier, the doorbells an agent waits on, the rings blocks travel in between agents
 * (Int32 slots in a SharedArrayBuffer, one Atomics.store of the head per batch), and the signal the idle
 * programs wait for from the main thread.
 */
import type { PaddockHeap } from '../peers/paddock-heap.js';
import { K_ABORT, K_BELL, K_GO, K_READY, K_STOP, type ProgramRun, R_BASE, R_HEAD, R_TAIL } from './program-protocol.js';

/** ms on a clock every agent shares. */
export const clock = (): number => performance.timeOrigin + performance.now();

/** One agent's run: the message that started it, the control words, its heap (paddock), and what it reports. */
export interface Agent {
  readonly m: ProgramRun;
  readonly ctl: Int32Array;
  readonly heap: PaddockHeap | null;
  readonly p: Readonly<Record<string, number>>;
  ops: number;
  bad: number;
  t0: number;
  t1: number;
  extra: Record<string, number | null>;
}

export function stopped(a: Agent): boolean {
  return Atomics.load(a.ctl, K_STOP) !== 0;
}

export function barrier(a: Agent): void {
  const { ctl } = a;
  if (Atomics.add(ctl, K_READY, 1) + 1 >= a.m.agents) {
    Atomics.store(ctl, K_GO, 1);
    Atomics.notify(ctl, K_GO);
  }
  while (Atomics.load(ctl, K_GO) === 0) {
    if (Atomics.load(ctl, K_ABORT) !== 0) throw new Error('another agent failed');
    Atomics.wait(ctl, K_GO, 0, 100);
  }
  a.t0 = clock();
}

/** Rings agent k's doorbell: there is something for it (a batch, room in a ring, credit). */
export function bell(ctl: Int32Array, k: number): void {
  Atomics.add(ctl, K_BELL + k, 1);
  Atomics.notify(ctl, K_BELL + k);
}

/**
 * Waits until `ready()`: spins a little, then blocks on this agent's doorbell (paddock: `heap.wait`, which
 * flushes the chains before blocking and drains the inbox after; its bound is Paddock's 500 ms, so a
 * timeout is real idleness). False once the run is stopped.
 */
export function waitUntil(a: Agent, ready: () => boolean): boolean {
  for (let spin = 0; spin < 200; spin++) if (ready()) return true;
  const word = K_BELL + a.m.id;
  for (;;) {
    const seen = Atomics.load(a.ctl, word);
    if (ready()) return true;
    if (stopped(a)) return false;
    if (Atomics.load(a.ctl, K_ABORT) !== 0) throw new Error('another agent failed');
    if (a.heap !== null) a.heap.wait(a.ctl, word, seen);
    else Atomics.wait(a.ctl, word, seen, 500);
  }
}

export class Ring {
  readonly v: Int32Array;
  readonly mask: number;
  /** producer: the agent that puts; consumer: the agent that takes. */
  constructor(
    sab: SharedArrayBuffer,
    private readonly ctl: Int32Array,
    private readonly producer: number,
    private readonly consumer: number,
  ) {
    this.v = new Int32Array(sab);
    this.mask = this.v.length - R_BASE - 1;
  }
  /** Waits for room for n entries after `head`; false once stopped. */
  room(a: Agent, head: number, n: number): boolean {
    return waitUntil(a, () => head + n - Atomics.load(this.v, R_TAIL) <= this.mask + 1);
  }
  /** Waits until at least n entries after `tail` are published; false once stopped. */
  filled(a: Agent, tail: number, n: number): boolean {
    return waitUntil(a, () => Atomics.load(this.v, R_HEAD) - tail >= n);
  }
  put(head: number, p: number): void {
    this.v[R_BASE + (head & this.mask)] = p;
  }
  get(tail: number): number {
    return this.v[R_BASE + (tail & this.mask)] >>> 0;
  }
  publish(head: number): void {
    Atomics.store(this.v, R_HEAD, head);
    bell(this.ctl, this.consumer);
  }
  consumed(tail: number): void {
    Atomics.store(this.v, R_TAIL, tail);
    bell(this.ctl, this.producer);
  }
  head(): number {
    return Atomics.load(this.v, R_HEAD);
  }
}

export function mustMalloc(h: PaddockHeap, size: number): number {
  const p = h.malloc(size);
  if (p === 0) throw new Error(`malloc(${size}) returned 0 (out of memory)`);
  return p;
}

export function touch(u8: Uint8Array, p: number, n: number): void {
  for (let q = p; q < p + n; q = (q & ~4095) + 4096) u8[q] = 1;
  if (n > 0) u8[p + n - 1] = 1;
}

/** What the main thread's `signal` message calls: the running idle program's next phase (null: none waits). */
export const idleSignal: { on: ((what: string) => void) | null } = { on: null };
