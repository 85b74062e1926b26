/**
 * One agent of the multi-agent programs (`programs.ts`), in a worker. A worker is started once per mode
 * (and Paddock backend) and runs many rounds: each round the main thread sends `run` with a fresh heap
 * handle (paddock) or fresh ports (js), the agents meet at a barrier, run their part, and report.
 *
 * Every program here has a C twin in `native/programs.c` that does the same steps with the same sizes,
 * the same sequences (mulberry32, the same seeds) and the same words written into each block.
 *
 * - `paddock`: all agents attach to one heap; blocks travel between agents as pointers in rings of Int32
 *   slots in SharedArrayBuffers (one Atomics.store of the head per batch). An agent that finds nothing
 *   to do spins a little, then blocks with `heap.wait` (Paddock's own wait: it flushes the chains first
 *   and drains the inbox after waking, as an agent about to block should: docs/design/allocator.md).
 * - `js`: plain JavaScript: objects (binary-trees), typed arrays (the per-agent churns) and ArrayBuffers
 *   sent with `postMessage` and a transfer list (the messaging programs); the garbage collector frees.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { between, logUniform, mulberry32 as rng } from './draws.js';
import {
  K_ABORT,
  K_BELL,
  K_CREDIT,
  K_GO,
  K_MAILBOX,
  K_READY,
  K_STOP,
  type ProgramReport,
  type ProgramRun,
  R_BASE,
  R_HEAD,
  R_TAIL,
  type WorkerMode,
} from './program-protocol.js';

interface WorkerHeap {
  malloc(size: number): number;
  free(ptr: number): void;
  flush(): number;
  drain(): number;
  wait(array: Int32Array, index: number, value: number, timeoutMs?: number): string;
  readonly i32: Int32Array;
  readonly u8: Uint8Array;
  startIdle(): void;
  stopIdle(): void;
  detach(): void;
  stats(): { committedBytes: number; liveBytes: number };
}

const data = workerData as { mode: WorkerMode; url: string | null };
let attachHeap: ((handle: unknown) => WorkerHeap) | null = null;
if (data.mode === 'paddock') {
  attachHeap = ((await import(data.url as string)) as { attachHeap: (h: unknown) => WorkerHeap }).attachHeap;
}

const clock = (): number => performance.timeOrigin + performance.now();

class Stopped extends Error {}

// --- agent plumbing ---------------------------------------------------------------------------------

interface Agent {
  readonly m: ProgramRun;
  readonly ctl: Int32Array;
  readonly heap: WorkerHeap | null;
  readonly p: Readonly<Record<string, number>>;
  ops: number;
  bad: number;
  t0: number;
  t1: number;
  extra: Record<string, number | null>;
}

function stopped(a: Agent): boolean {
  return Atomics.load(a.ctl, K_STOP) !== 0;
}

function barrier(a: Agent): void {
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
function bell(ctl: Int32Array, k: number): void {
  Atomics.add(ctl, K_BELL + k, 1);
  Atomics.notify(ctl, K_BELL + k);
}

/**
 * Waits until `ready()`: spins a little, then blocks on this agent's doorbell (paddock: `heap.wait`, which
 * flushes the chains before blocking and drains the inbox after; its bound is Paddock's 500 ms, so a
 * timeout is real idleness). False once the run is stopped.
 */
function waitUntil(a: Agent, ready: () => boolean): boolean {
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

class Ring {
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

function mustMalloc(h: WorkerHeap, size: number): number {
  const p = h.malloc(size);
  if (p === 0) throw new Error(`malloc(${size}) returned 0 (out of memory)`);
  return p;
}

function touch(u8: Uint8Array, p: number, n: number): void {
  for (let q = p; q < p + n; q = (q & ~4095) + 4096) u8[q] = 1;
  if (n > 0) u8[p + n - 1] = 1;
}

// --- paddock programs -------------------------------------------------------------------------------

function binaryTrees(a: Agent): void {
  const h = a.heap!;
  const depth = a.p.depth;
  let n = 0;
  const build = (d: number): number => {
    const p = mustMalloc(h, 32);
    n++;
    let l = 0;
    let r = 0;
    if (d > 0) {
      l = build(d - 1);
      r = build(d - 1);
    }
    const v = h.i32;
    v[p >>> 2] = l;
    v[(p >>> 2) + 1] = r;
    return p;
  };
  const check = (p: number, v: Int32Array): number => {
    const l = v[p >>> 2] >>> 0;
    return l === 0 ? 1 : 1 + check(l, v) + check(v[(p >>> 2) + 1] >>> 0, v);
  };
  const drop = (p: number, v: Int32Array): void => {
    const l = v[p >>> 2] >>> 0;
    if (l !== 0) {
      drop(l, v);
      drop(v[(p >>> 2) + 1] >>> 0, v);
    }
    h.free(p);
  };
  barrier(a);
  let longLived = 0;
  if (a.m.id === 0) {
    const stretch = build(depth + 1);
    if (check(stretch, h.i32) !== 2 ** (depth + 2) - 1) a.bad++;
    drop(stretch, h.i32);
    longLived = build(depth);
  }
  let k = 0;
  for (let d = 4; d <= depth; d += 2) {
    const iters = 2 ** (depth - d + 4);
    for (let i = 0; i < iters; i++, k++) {
      if (k % a.m.agents !== a.m.id) continue;
      const t = build(d);
      if (check(t, h.i32) !== 2 ** (d + 1) - 1) a.bad++;
      drop(t, h.i32);
    }
  }
  if (longLived !== 0) {
    if (check(longLived, h.i32) !== 2 ** (depth + 1) - 1) a.bad++;
    drop(longLived, h.i32);
  }
  a.t1 = clock();
  a.ops = n;
}

/** producer-consumer (4 KiB payloads) and xmalloc-test (8..64 B): producers 0..P-1, the consumer is agent P. */
function producerConsumer(a: Agent): void {
  const h = a.heap!;
  const P = a.p.producers;
  const batch = a.p.batch;
  const lo = a.p.min;
  const hi = a.p.max;
  const rings = a.m.rings.map((s, k) => new Ring(s, a.ctl, k, P));
  barrier(a);
  if (a.m.id < P) {
    const ring = rings[a.m.id];
    const next = rng(0x9c0ffee ^ a.m.id);
    let head = 0;
    let serial = 0;
    while (!stopped(a)) {
      if (!ring.room(a, head, batch)) break;
      for (let i = 0; i < batch; i++) {
        const s = lo === hi ? lo : between(next, lo, hi);
        const p = mustMalloc(h, s);
        const v = h.i32;
        v[p >>> 2] = serial++;
        v[((p + s) >>> 2) - 1] = s;
        ring.put(head + i, p);
      }
      head += batch;
      ring.publish(head);
      a.ops += batch;
    }
    a.t1 = clock();
    return;
  }
  const tails = new Array<number>(P).fill(0);
  const expect = new Array<number>(P).fill(0);
  const anything = () => {
    for (let k = 0; k < P; k++) if (rings[k].head() !== tails[k]) return true;
    return false;
  };
  while (!stopped(a)) {
    if (!waitUntil(a, anything)) break;
    for (let k = 0; k < P; k++) {
      const ring = rings[k];
      const hd = ring.head();
      let t = tails[k];
      if (hd === t) continue;
      const v = h.i32;
      for (; t !== hd; t++) {
        const p = ring.get(t);
        if (v[p >>> 2] !== expect[k]++) a.bad++;
        h.free(p);
        a.ops++;
      }
      tails[k] = t;
      ring.consumed(t);
    }
  }
  a.t1 = clock();
}

function messageUbench(a: Agent): void {
  const h = a.heap!;
  const window = a.p.window;
  const size = a.p.size;
  const me = a.m.id;
  const inRing = new Ring(a.m.rings[me], a.ctl, 1 - me, me);
  const out = new Ring(a.m.rings[1 - me], a.ctl, me, 1 - me);
  let head = 0;
  let tail = 0;
  barrier(a);
  for (let i = 0; i < window / 2; i++) {
    const p = mustMalloc(h, size);
    h.i32[p >>> 2] = i;
    out.put(head++, p);
  }
  out.publish(head);
  while (!stopped(a)) {
    if (!inRing.filled(a, tail, 1)) break;
    const hd = inRing.head();
    for (; tail !== hd; tail++) {
      const p = inRing.get(tail);
      const value = h.i32[p >>> 2];
      h.free(p);
      const q = mustMalloc(h, size);
      h.i32[q >>> 2] = value + 1;
      out.put(head++, q);
      a.ops++;
    }
    inRing.consumed(tail);
    out.publish(head);
  }
  a.t1 = clock();
}

function mixedChurn(a: Agent): void {
  const h = a.heap!;
  const { burst, scratch, inflight } = a.p as { burst: number; scratch: number; inflight: number };
  const size = 4096;
  const k = a.m.id;
  const n = a.m.agents;
  const from = (k + n - 1) % n;
  const inRing = new Ring(a.m.rings[k], a.ctl, from, k);
  const out = new Ring(a.m.rings[(k + 1) % n], a.ctl, k, (k + 1) % n);
  const kept = new Array<number>(scratch).fill(0);
  let head = 0;
  let tail = 0;
  barrier(a);
  for (let b = 0; b < inflight; b++) {
    for (let i = 0; i < burst; i++) {
      const p = mustMalloc(h, size);
      h.i32[p >>> 2] = k;
      out.put(head++, p);
    }
  }
  out.publish(head);
  while (!stopped(a)) {
    if (!inRing.filled(a, tail, burst)) break;
    let v = h.i32;
    for (let i = 0; i < burst; i++, tail++) {
      const p = inRing.get(tail);
      if (v[p >>> 2] !== from) a.bad++;
      h.free(p);
    }
    inRing.consumed(tail);
    for (let s = 0; s < scratch; s++) {
      const p = mustMalloc(h, size);
      h.i32[p >>> 2] = s;
      kept[s] = p;
    }
    if (!out.room(a, head, burst)) break;
    for (let i = 0; i < burst; i++) {
      const p = mustMalloc(h, size);
      v = h.i32;
      v[p >>> 2] = k;
      out.put(head++, p);
    }
    out.publish(head);
    for (let s = 0; s < scratch; s++) h.free(kept[s]);
    a.ops += burst;
  }
  a.t1 = clock();
}

/** Per-agent churn with log-uniform sizes: mixed-sizes (16 B..64 KiB) and glibc-thread (4 B..32 KiB). */
function agentChurn(a: Agent): void {
  const h = a.heap!;
  const live = Math.floor(a.p.live / a.m.agents);
  const { min, max } = a.p as { min: number; max: number };
  const next = rng(a.p.seed ^ Math.imul(a.m.id, 0x85ebca6b));
  const slot = new Int32Array(live);
  for (let i = 0; i < live; i++) {
    const s = logUniform(next, min, max);
    const p = mustMalloc(h, s);
    touch(h.u8, p, s);
    slot[i] = p;
  }
  barrier(a);
  let ops = 0;
  while (!stopped(a)) {
    let u8 = h.u8;
    for (let k = 0; k < 256; k++) {
      const v = between(next, 0, live - 1);
      h.free(slot[v] >>> 0);
      const s = logUniform(next, min, max);
      const p = mustMalloc(h, s);
      if (p >= u8.length) u8 = h.u8;
      u8[p] = 1;
      slot[v] = p;
    }
    ops += 256;
  }
  a.t1 = clock();
  a.ops = ops;
  for (let i = 0; i < live; i++) h.free(slot[i] >>> 0);
}

function larson(a: Agent): void {
  const h = a.heap!;
  const { slots, min, max, round } = a.p as { slots: number; min: number; max: number; round: number };
  const arrays: Int32Array[] = [];
  for (let k = 0; k <= a.m.agents; k++) arrays.push(new Int32Array(a.m.shared!, k * slots * 4, slots));
  // each agent fills its own array; agent 0 the spare one too
  const fill = (arr: Int32Array, seed: number) => {
    const next = rng(seed);
    for (let i = 0; i < slots; i++) arr[i] = mustMalloc(h, between(next, min, max));
  };
  fill(arrays[a.m.id], 0x1a250 + a.m.id);
  if (a.m.id === 0) fill(arrays[a.m.agents], 0x1a250 + a.m.agents);
  const next = rng(0x1a2503 ^ Math.imul(a.m.id, 0x9e3779b1));
  let mine = a.m.id;
  barrier(a);
  let ops = 0;
  while (!stopped(a)) {
    const arr = arrays[mine];
    let u8 = h.u8;
    for (let k = 0; k < round; k++) {
      const v = between(next, 0, slots - 1);
      h.free(arr[v] >>> 0);
      const p = mustMalloc(h, between(next, min, max));
      if (p >= u8.length) u8 = h.u8;
      u8[p] = 1;
      arr[v] = p;
    }
    ops += round;
    mine = Atomics.exchange(a.ctl, K_MAILBOX, mine);
  }
  a.t1 = clock();
  a.ops = ops;
}

function mstress(a: Agent): void {
  const h = a.heap!;
  const { scale, iterations } = a.p as { scale: number; iterations: number };
  const transfer = new Int32Array(a.m.shared!);
  const T = transfer.length;
  barrier(a);
  const next = rng(a.m.id * 43 + 1);
  const chance = (perc: number) => next() % 100 < perc;
  const alloc = (items0: number): number => {
    let items = items0;
    if (chance(1)) items *= 10;
    if (items === 40 && chance(10)) items = 4000;
    const bytes = items * 8;
    const p = mustMalloc(h, bytes);
    const v = h.i32;
    v[p >>> 2] = items;
    v[((p + bytes) >>> 2) - 1] = items;
    return p;
  };
  const release = (p: number): void => {
    if (p === 0) return;
    const v = h.i32;
    const items = v[p >>> 2];
    if (v[((p + items * 8) >>> 2) - 1] !== items) a.bad++;
    h.free(p);
  };
  for (let it = 0; it < iterations; it++) {
    let allocs = 100 * scale * ((a.m.id % 8) + 1);
    let retain = allocs >> 1;
    const data = new Int32Array(allocs + 1);
    const kept = new Int32Array(retain + 1);
    let top = 0;
    let rtop = 0;
    while (allocs > 0 || retain > 0) {
      if (retain === 0 || (chance(50) && allocs > 0)) {
        allocs--;
        data[top++] = alloc(1 << (next() % 5));
      } else {
        kept[rtop++] = alloc(1 << (next() % 7));
        retain--;
      }
      a.ops++;
      if (chance(66) && top > 0) {
        const i = next() % top;
        release(data[i] >>> 0);
        data[i] = 0;
      }
      if (chance(25) && top > 0) {
        const i = next() % top;
        const t = next() % T;
        data[i] = Atomics.exchange(transfer, t, data[i]);
      }
    }
    for (let i = 0; i < rtop; i++) release(kept[i] >>> 0);
    for (let i = 0; i < top; i++) release(data[i] >>> 0);
  }
  a.t1 = clock();
}

function rptest(a: Agent): void {
  const h = a.heap!;
  const { count, opcount, cross, min, max } = a.p as { count: number; opcount: number; cross: number; min: number; max: number };
  const k = a.m.id;
  const n = a.m.agents;
  const inRing = new Ring(a.m.rings[k], a.ctl, (k + n - 1) % n, k);
  const out = new Ring(a.m.rings[(k + 1) % n], a.ctl, k, (k + 1) % n);
  const next = rng(0x5e7 ^ Math.imul(k, 0x27d4eb2d));
  const set = new Int32Array(count);
  let head = 0;
  let tail = 0;
  barrier(a);
  let loop = 0;
  while (!stopped(a)) {
    const hd = inRing.head();
    for (; tail !== hd; tail++) h.free(inRing.get(tail));
    inRing.consumed(tail);
    for (let i = 0; i < count; i++) {
      const s = logUniform(next, min, max);
      const p = mustMalloc(h, s);
      h.i32[p >>> 2] = s;
      set[i] = p;
    }
    for (let i = 0; i < opcount; i++) {
      const v = between(next, 0, count - 1);
      h.free(set[v] >>> 0);
      const s = logUniform(next, min, max);
      const p = mustMalloc(h, s);
      h.i32[p >>> 2] = s;
      set[v] = p;
    }
    a.ops += count + opcount;
    if (++loop % cross === 0 && out.room(a, head, count)) {
      for (let i = 0; i < count; i++) out.put(head++, set[i]);
      out.publish(head);
    } else {
      for (let i = 0; i < count; i++) h.free(set[i] >>> 0);
    }
  }
  a.t1 = clock();
}

function cacheScratch(a: Agent): void {
  const h = a.heap!;
  const { iterations, objsize, reps } = a.p as { iterations: number; objsize: number; reps: number };
  const initial = new Int32Array(a.m.shared!);
  barrier(a);
  h.free(initial[a.m.id] >>> 0);
  for (let i = 0; i < iterations; i++) {
    const p = mustMalloc(h, objsize);
    const u8 = h.u8;
    for (let j = 0; j < reps; j++) {
      for (let k = 0; k < objsize; k++) {
        u8[p + k] = k;
        u8[p + k] = u8[p + k] + 1;
      }
    }
    h.free(p);
    a.ops++;
  }
  a.t1 = clock();
}

function largeCrossFree(a: Agent): void {
  const h = a.heap!;
  const { rounds, size } = a.p as { rounds: number; size: number };
  const ring = new Ring(a.m.rings[0], a.ctl, 0, 1);
  barrier(a);
  if (a.m.id === 0) {
    const seen = new Set<number>();
    let head = 0;
    for (let i = 0; i < rounds; i++) {
      if (!ring.room(a, head, 1)) break;
      const p = mustMalloc(h, size);
      touch(h.u8, p, size);
      seen.add(p);
      ring.put(head++, p);
      ring.publish(head);
      a.ops++;
    }
    a.t1 = clock();
    a.extra.distinctAddresses = seen.size;
    // the last blocks come home, then the committed figure
    for (let i = 0; i < 50 && Atomics.load(ring.v, R_TAIL) !== head; i++) Atomics.wait(ring.v, R_TAIL, Atomics.load(ring.v, R_TAIL), 10);
    h.drain();
    a.extra.committedBytes = h.stats().committedBytes;
    return;
  }
  let tail = 0;
  while (tail < rounds) {
    if (!ring.filled(a, tail, 1)) break;
    const hd = ring.head();
    for (; tail !== hd; tail++) {
      h.free(ring.get(tail));
      h.flush();
    }
    ring.consumed(tail);
  }
  a.t1 = clock();
}

// --- idle return (both modes): event-driven, phases through K_PHASE and main's signals -------------

let signal: ((s: string) => void) | null = null;

function idlePaddock(a: Agent): Promise<void> {
  const h = a.heap!;
  const { block, count } = a.p as { block: number; count: number };
  const list = new Int32Array(a.m.shared!);
  return new Promise((resolve) => {
    if (a.m.id === 0) {
      a.t0 = clock();
      for (let i = 0; i < count; i++) {
        const p = mustMalloc(h, block);
        touch(h.u8, p, block);
        list[i] = p;
      }
      a.t1 = clock();
      h.startIdle();
      parentPort!.postMessage({ event: 'held', id: a.m.id, t: a.t1 });
    }
    signal = (s: string) => {
      if (s === 'free' && a.m.id === 1) {
        a.t0 = clock();
        for (let i = 0; i < count; i++) h.free(list[i] >>> 0);
        a.t1 = clock();
        h.startIdle();
        parentPort!.postMessage({ event: 'freed', id: a.m.id, t: a.t1 });
      } else if (s === 'end') {
        h.stopIdle();
        a.extra.committedBytes = h.stats().committedBytes;
        resolve();
      }
    };
  });
}

let idleHeld: ArrayBuffer[] = [];

function idleJs(a: Agent): Promise<void> {
  const { block, count } = a.p as { block: number; count: number };
  return new Promise((resolve) => {
    if (a.m.id === 0) {
      a.t0 = clock();
      idleHeld = [];
      for (let i = 0; i < count; i++) {
        const b = new ArrayBuffer(block);
        touch(new Uint8Array(b), 0, block);
        idleHeld.push(b);
      }
      a.t1 = clock();
      parentPort!.postMessage({ event: 'held', id: a.m.id, t: a.t1 });
    } else {
      (a.m.ports.in as MessagePort).on('message', (m: { blocks: ArrayBuffer[] }) => {
        // the blocks arrive and are dropped: what a JS program does to free them
        a.extra.received = m.blocks.length;
        a.t1 = clock();
        parentPort!.postMessage({ event: 'freed', id: a.m.id, t: a.t1 });
      });
    }
    signal = (s: string) => {
      if (s === 'free' && a.m.id === 0) {
        a.t0 = clock();
        const blocks = idleHeld;
        idleHeld = [];
        a.m.ports.out!.postMessage({ blocks }, blocks);
      } else if (s === 'end') {
        (a.m.ports.in as MessagePort | null)?.removeAllListeners('message');
        resolve();
      }
    };
  });
}

// --- js programs ---------------------------------------------------------------------------------------

interface JsNode {
  l: JsNode | null;
  r: JsNode | null;
}

function binaryTreesJs(a: Agent): void {
  const depth = a.p.depth;
  let n = 0;
  const build = (d: number): JsNode => {
    n++;
    return d > 0 ? { l: build(d - 1), r: build(d - 1) } : { l: null, r: null };
  };
  const check = (t: JsNode): number => (t.l === null ? 1 : 1 + check(t.l) + check(t.r as JsNode));
  barrier(a);
  let longLived: JsNode | null = null;
  if (a.m.id === 0) {
    if (check(build(depth + 1)) !== 2 ** (depth + 2) - 1) a.bad++;
    longLived = build(depth);
  }
  let k = 0;
  for (let d = 4; d <= depth; d += 2) {
    const iters = 2 ** (depth - d + 4);
    for (let i = 0; i < iters; i++, k++) {
      if (k % a.m.agents !== a.m.id) continue;
      if (check(build(d)) !== 2 ** (d + 1) - 1) a.bad++;
    }
  }
  if (longLived !== null && check(longLived) !== 2 ** (depth + 1) - 1) a.bad++;
  a.t1 = clock();
  a.ops = n;
}

/** Typed arrays as blocks: `new Uint8Array(size)` is the malloc, dropping it the free. */
function agentChurnJs(a: Agent): void {
  const live = Math.floor(a.p.live / a.m.agents);
  const { min, max } = a.p as { min: number; max: number };
  const next = rng(a.p.seed ^ Math.imul(a.m.id, 0x85ebca6b));
  const slot = new Array<Uint8Array>(live);
  for (let i = 0; i < live; i++) {
    const s = logUniform(next, min, max);
    const b = new Uint8Array(s);
    touch(b, 0, s);
    slot[i] = b;
  }
  barrier(a);
  let ops = 0;
  while (!stopped(a)) {
    for (let k = 0; k < 256; k++) {
      const v = between(next, 0, live - 1);
      const b = new Uint8Array(logUniform(next, min, max));
      b[0] = 1;
      slot[v] = b;
    }
    ops += 256;
  }
  a.t1 = clock();
  a.ops = ops;
}

/** Producers post batches of ArrayBuffers (transferred); the consumer reads and drops them. */
function producerConsumerJs(a: Agent): Promise<void> | void {
  const P = a.p.producers;
  const { batch, min, max } = a.p as { batch: number; min: number; max: number };
  const credit = a.ctl; // batches consumed per producer (back-pressure: at most 32 in flight)
  const CREDIT = K_CREDIT;
  if (a.m.id < P) {
    const port = a.m.ports.out!;
    const next = rng(0x9c0ffee ^ a.m.id);
    barrier(a);
    let sent = 0;
    let serial = 0;
    while (!stopped(a)) {
      const me = a.m.id;
      if (!waitUntil(a, () => sent - Atomics.load(credit, CREDIT + me) < 32)) break;
      const bufs = new Array<ArrayBuffer>(batch);
      for (let i = 0; i < batch; i++) {
        const s = min === max ? min : between(next, min, max);
        const b = new ArrayBuffer(s);
        const v = new Int32Array(b);
        v[0] = serial++;
        v[(s >> 2) - 1] = s;
        bufs[i] = b;
      }
      port.postMessage(bufs, bufs);
      sent++;
      a.ops += batch;
    }
    port.postMessage(null);
    a.t1 = clock();
    return;
  }
  return new Promise((resolve) => {
    const expect = new Array<number>(P).fill(0);
    let ended = 0;
    const ports = a.m.ports.in as MessagePort[];
    barrier(a);
    ports.forEach((port, k) => {
      port.on('message', (bufs: ArrayBuffer[] | null) => {
        if (bufs === null) {
          port.removeAllListeners('message');
          if (++ended === P) {
            a.t1 = clock();
            resolve();
          }
          return;
        }
        for (const b of bufs) {
          if (new Int32Array(b)[0] !== expect[k]++) a.bad++;
          a.ops++;
        }
        Atomics.add(credit, CREDIT + k, 1);
        bell(credit, k);
      });
    });
  });
}

function onStop(a: Agent, done: () => void): void {
  const poll = setInterval(() => {
    if (stopped(a)) {
      clearInterval(poll);
      done();
    }
  }, 5);
}

/** The end of a plain-JS message program, once: the clock read, the port silenced, the promise resolved. */
function finisher(a: Agent, inPort: MessagePort, resolve: () => void): () => void {
  let finished = false;
  return () => {
    if (finished) return;
    finished = true;
    a.t1 = clock();
    inPort.removeAllListeners('message');
    resolve();
  };
}

/** Each message its own ArrayBuffer, posted with a transfer; the receiver reads it, drops it, replies. */
function messageUbenchJs(a: Agent): Promise<void> {
  const { window, size } = a.p as { window: number; size: number };
  const inPort = a.m.ports.in as MessagePort;
  const out = a.m.ports.out!;
  return new Promise((resolve) => {
    const finish = finisher(a, inPort, resolve);
    inPort.on('message', (b: ArrayBuffer) => {
      if (stopped(a)) return finish();
      const value = new Int32Array(b)[0];
      const q = new ArrayBuffer(size);
      new Int32Array(q)[0] = value + 1;
      out.postMessage(q, [q]);
      a.ops++;
    });
    barrier(a);
    for (let i = 0; i < window / 2; i++) {
      const q = new ArrayBuffer(size);
      new Int32Array(q)[0] = i;
      out.postMessage(q, [q]);
    }
    onStop(a, finish);
  });
}

function mixedChurnJs(a: Agent): Promise<void> {
  const { burst, scratch, inflight } = a.p as { burst: number; scratch: number; inflight: number };
  const size = 4096;
  const k = a.m.id;
  const from = (k + a.m.agents - 1) % a.m.agents;
  const inPort = a.m.ports.in as MessagePort;
  const out = a.m.ports.out!;
  const send = () => {
    const bufs = new Array<ArrayBuffer>(burst);
    for (let i = 0; i < burst; i++) {
      const b = new ArrayBuffer(size);
      new Int32Array(b)[0] = k;
      bufs[i] = b;
    }
    out.postMessage(bufs, bufs);
  };
  return new Promise((resolve) => {
    const finish = finisher(a, inPort, resolve);
    let kept: ArrayBuffer[] = [];
    inPort.on('message', (bufs: ArrayBuffer[]) => {
      if (stopped(a)) return finish();
      for (const b of bufs) if (new Int32Array(b)[0] !== from) a.bad++;
      kept = new Array<ArrayBuffer>(scratch);
      for (let s = 0; s < scratch; s++) {
        const b = new ArrayBuffer(size);
        new Int32Array(b)[0] = s;
        kept[s] = b;
      }
      send();
      kept = [];
      a.ops += burst;
    });
    barrier(a);
    for (let b = 0; b < inflight; b++) send();
    onStop(a, finish);
    void kept;
  });
}

// --- dispatch -----------------------------------------------------------------------------------------

type Program = (a: Agent) => void | Promise<void>;

const PADDOCK: Record<string, Program> = {
  'binary-trees': binaryTrees,
  'producer-consumer': producerConsumer,
  'xmalloc-test': producerConsumer,
  'message-ubench': messageUbench,
  'mixed-churn': mixedChurn,
  'mixed-sizes': agentChurn,
  'glibc-thread': agentChurn,
  larson,
  mstress,
  rptest,
  'cache-scratch': cacheScratch,
  'large-cross-free': largeCrossFree,
  idle: idlePaddock,
};

const JS: Record<string, Program> = {
  'binary-trees': binaryTreesJs,
  'producer-consumer': producerConsumerJs,
  'message-ubench': messageUbenchJs,
  'mixed-churn': mixedChurnJs,
  'mixed-sizes': agentChurnJs,
  'glibc-thread': agentChurnJs,
  idle: idleJs,
};

parentPort!.on('message', (m: ProgramRun | { cmd: 'signal'; what: string } | { cmd: 'exit' }) => {
  if (m.cmd === 'exit') {
    parentPort!.close();
    return;
  }
  if (m.cmd === 'signal') {
    signal?.(m.what);
    return;
  }
  void runOne(m);
});

async function runOne(m: ProgramRun): Promise<void> {
  const ctl = new Int32Array(m.ctl);
  let heap: WorkerHeap | null = null;
  const a: Agent = { m, ctl, heap: null, p: m.params, ops: 0, bad: 0, t0: 0, t1: 0, extra: {} };
  let error: string | null = null;
  try {
    if (data.mode === 'paddock') {
      heap = attachHeap!(m.handle);
      (a as { heap: WorkerHeap | null }).heap = heap;
    }
    const table = data.mode === 'paddock' ? PADDOCK : JS;
    const fn = table[m.program];
    if (!fn) throw new Error(`no ${data.mode} version of ${m.program}`);
    await fn(a);
  } catch (err) {
    if (!(err instanceof Stopped)) {
      error = err instanceof Error ? (err.stack ?? err.message) : String(err);
      Atomics.store(ctl, K_ABORT, 1);
      Atomics.store(ctl, K_GO, 1);
      Atomics.notify(ctl, K_GO);
    }
  } finally {
    signal = null;
    try {
      heap?.detach();
    } catch (err) {
      error ??= `detach: ${err instanceof Error ? err.message : String(err)}`;
    }
    const ins = Array.isArray(m.ports.in) ? m.ports.in : m.ports.in ? [m.ports.in] : [];
    for (const port of ins) port.close();
    m.ports.out?.close();
  }
  const r: ProgramReport = { id: m.id, t0: a.t0, t1: a.t1, ops: a.ops, bad: a.bad, extra: a.extra, error };
  parentPort!.postMessage(r);
}

