/**
 * The multi-agent programs on a Paddock heap: every agent attaches to one heap; blocks travel between agents
 * as pointers in rings (`program-agent.ts`). An agent that finds nothing to do spins a little, then blocks
 * with `heap.wait` (Paddock's own wait: it flushes the chains first and drains the inbox after waking, as an
 * agent about to block should). Each program has a C twin in `native/programs.c` that does the same steps
 * with the same sizes, the same sequences (mulberry32, the same seeds) and the same words in each block.
 */
import { parentPort } from 'node:worker_threads';
import { between, logUniform, mulberry32 as rng } from '../draws.js';
import { type Agent, barrier, clock, idleSignal, mustMalloc, Ring, stopped, touch, waitUntil } from './program-agent.js';
import { K_MAILBOX, R_TAIL } from './program-protocol.js';

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

/** idle: event-driven, phases driven by the main thread's signals (`free`, `end`). */
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
    idleSignal.on = (s: string) => {
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

/** The programs by name (xmalloc-test is producer-consumer's shape; glibc-thread mixed-sizes'). */
export const PADDOCK_PROGRAMS: Record<string, (a: Agent) => void | Promise<void>> = {
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
