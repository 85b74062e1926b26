/**
 * The multi-agent programs in plain JavaScript: objects (binary-trees), typed arrays (the per-agent churns)
 * and ArrayBuffers sent with `postMessage` and a transfer list (the messaging programs); dropping a block
 * is its free, the garbage collector's work. The same steps as the Paddock forms, where a program has one.
 */
import { type MessagePort, parentPort } from 'node:worker_threads';
import { between, logUniform, mulberry32 as rng } from '../draws.js';
import { type Agent, barrier, bell, clock, idleSignal, stopped, touch, waitUntil } from './program-agent.js';
import { K_CREDIT } from './program-protocol.js';

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
    idleSignal.on = (s: string) => {
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

/** The programs that have a plain-JS form, by name. */
export const JS_PROGRAMS: Record<string, (a: Agent) => void | Promise<void>> = {
  'binary-trees': binaryTreesJs,
  'producer-consumer': producerConsumerJs,
  'message-ubench': messageUbenchJs,
  'mixed-churn': mixedChurnJs,
  'mixed-sizes': agentChurnJs,
  'glibc-thread': agentChurnJs,
  idle: idleJs,
};
