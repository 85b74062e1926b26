/**
 * One worker of the swarm program: an agent of the heap that runs a seeded stream of operations
 * (malloc, calloc, free, realloc chains, sends to other agents, idle pauses, bounded waits, flushes) and
 * records every block in the shared ledger. Every block carries its id's pattern; the pattern is checked
 * when the block is received and when it is freed, and each ledger step is a compare-exchange, so a block
 * received or freed twice, or overwritten by another, is reported as a fault.
 *
 * A departing worker leaves part-way without calling detach: once the main thread has told every other
 * worker to stop sending to it, it takes what is still in transit to it, hands a share of what it holds to
 * other agents, frees the rest, and lets its thread end (its event loop runs dry, `process.exit()`, or its
 * ports close). Its agent leaves the heap on the way out; the blocks it allocated that others hold stay live.
 */
import type { Heap } from '@paddock/allocator';
import { swarmWorkerIO, type PeerPort } from '#swarm-host';
import {
  K_DIED,
  K_FREED,
  K_SENT,
  K_REFUSED,
  K_UNUSED,
  L_ALIVE,
  L_FILL_EPOCH,
  L_LEFT,
  L_LIVE_KIB,
  L_NEXT_ID,
  L_PENDING_KIND,
  L_PENDING_OLD,
  L_PENDING_SIZE,
  L_PROGRESS,
  L_SHARED,
  OP_FREE,
  OP_MALLOC,
  OP_NONE,
  OP_REALLOC,
  describeState,
  entry,
  fillPattern,
  fromOf,
  held,
  holderOf,
  kindOf,
  patternByte,
  patternFault,
  rng,
  sampled,
  sent,
  subSeed,
  type BlockBatch,
  type DepartureFigures,
  type FromSwarmWorker,
  type ToSwarmWorker,
  type WorkerFigures,
} from './swarm-protocol.js';

const io = await swarmWorkerIO();
const data = io.data;
const { config, index: me, capacity } = data;
const L = new Int32Array(data.ledger);
const rand = rng(subSeed(config.seed, me));
const mod = (await import(data.lib)) as { attachHeap(handle: unknown): Heap };
const heap = mod.attachHeap(data.handle);
/**
 * The heap's bytes, current. Through the address space, not the heap object: a detached agent (a zombie)
 * still checks and forwards the blocks it is sent, and a closed heap object refuses every use.
 */
function bytes(): Uint8Array {
  heap.space.refresh();
  return heap.space.u8;
}
const largeMax = heap.largeMax;
const MiB = 1 << 20;
const BATCH = 25;

// Blocks this agent holds: parallel arrays with swap-remove.
const hIds: number[] = [];
const hPtrs: number[] = [];
const hSizes: number[] = [];
let heldBytes = 0;

const peers = new Map<number, PeerPort>();
const incoming: BlockBatch[] = [];
const outbox = new Map<number, BlockBatch>();
/** Workers killed (what is in transit from them is written off). */
const dead = new Set<number>();
/** Workers that left or are leaving: nothing is sent to them any more. */
const gone = new Set<number>();
const fig: WorkerFigures = {
  mallocs: 0,
  callocs: 0,
  reallocs: 0,
  frees: 0,
  sent: 0,
  received: 0,
  bytes: 0,
  idles: 0,
  waits: 0,
  maxLive: 0,
  freedAfterLeft: 0,
  fillBlocks: 0,
  fillBytes: 0,
  fullRefusals: 0,
  afterFillRefusals: 0,
};
let mode: 'waiting' | 'running' | 'done' | 'leaving' | 'releasing' | 'zombie' | 'faulted' = 'waiting';
let paused = false;
let sleeping = false;
let idling = false;
let scheduled = false;
let ops = 0;
let longSleeps = 0;
const detachAt = config.detaches.find((d) => d.worker === me)?.atOp ?? -1;
const departure = config.departures.find((d) => d.worker === me);
const leaveAt = departure?.atOp ?? -1;
const fillAt = config.fill?.worker === me ? config.fill.atOp : -1;
const waitCell = new Int32Array(new SharedArrayBuffer(4));

const producers = Math.ceil(config.workers / 2);
const isProducer = config.pattern !== 'producer-consumer' || me <= producers || config.workers === 1;

function post(m: FromSwarmWorker): void {
  io.post(m);
}

class Fault extends Error {}
function fault(message: string): never {
  throw new Fault(`agent ${me} (heap agent ${heap.agentId}): ${message}`);
}

function pending(kind: number, size = 0, old = 0): void {
  L[L_PENDING_SIZE + me] = size;
  L[L_PENDING_OLD + me] = old;
  Atomics.store(L, L_PENDING_KIND + me, kind);
}

function step(from: number, to: number, id: number, what: string): void {
  const was = Atomics.compareExchange(L, entry(id), from, to);
  if (was !== from) fault(`block ${id} ${what}: the ledger says it is ${describeState(was)}, expected ${describeState(from)}`);
}

function addHeld(id: number, p: number, size: number): void {
  hIds.push(id);
  hPtrs.push(p);
  hSizes.push(size);
  heldBytes += size;
  if (hIds.length > fig.maxLive) fig.maxLive = hIds.length;
}

function takeHeld(k: number): [number, number, number] {
  const r: [number, number, number] = [hIds[k]!, hPtrs[k]!, hSizes[k]!];
  const last = hIds.length - 1;
  hIds[k] = hIds[last]!;
  hPtrs[k] = hPtrs[last]!;
  hSizes[k] = hSizes[last]!;
  hIds.pop();
  hPtrs.pop();
  hSizes.pop();
  heldBytes -= r[2];
  return r;
}

function verify(id: number, p: number, size: number, when: string): void {
  const bad = patternFault(bytes(), p, id, size);
  if (bad >= 0) fault(`block ${id} at ${p} (${size} B) lost its pattern at offset ${bad} ${when}`);
}

function drawSize(): number {
  const { small, large, oversized } = config.mix;
  let r = rand() * (small + large + oversized);
  let size: number;
  if (r < small) {
    r = rand();
    size = r < 0.75 ? Math.floor(rand() * 513) : r < 0.95 ? 513 + Math.floor(rand() * 16 * 1024) : 16 * 1024 + Math.floor(rand() * (MiB - 16 * 1024));
  } else if (r < small + large) {
    size = MiB + 1 + Math.floor(rand() * (Math.min(largeMax, 6 * MiB) - MiB));
  } else {
    size = largeMax + 1 + Math.floor(rand() * 6 * MiB);
  }
  if (size > config.maxHeldBytes - heldBytes) size = Math.floor(rand() * 1024);
  return size;
}

const kib = (bytes: number) => Math.ceil(bytes / 1024);
const overBudget = (bytes: number) => Atomics.load(L, L_LIVE_KIB) + kib(bytes) > config.liveBudgetKiB;

function doMalloc(): void {
  if (hIds.length >= config.maxHeld || heldBytes >= config.maxHeldBytes || overBudget(64 * 1024)) return doFree();
  const id = Atomics.add(L, L_NEXT_ID, 1) + 1;
  if (id >= capacity) return doFree();
  let size = drawSize();
  if (overBudget(size)) size = Math.floor(rand() * 1024);
  const zeroed = rand() < 0.2;
  pending(OP_MALLOC, size);
  let p: number;
  let req = size;
  const epoch = Atomics.load(L, L_FILL_EPOCH);
  try {
    if (zeroed) {
      const count = 1 + Math.floor(rand() * 4);
      const per = Math.floor(size / count);
      req = count * per;
      p = heap.calloc(count, per);
      const u8 = bytes();
      sampled(req, (o) => {
        if (u8[p + o] !== 0) fault(`calloc(${count}, ${per}) at ${p}: byte ${o} is ${u8[p + o]}, not 0`);
      });
      fig.callocs++;
    } else {
      p = heap.malloc(size);
      fig.mallocs++;
    }
  } catch (e) {
    if (!refusedWhileFull(e, epoch)) throw e;
    step(K_UNUSED, K_REFUSED, id, 'refused');
    pending(OP_NONE);
    return;
  }
  const usable = heap.usableSize(p);
  if (p === 0 || usable < req) fault(`malloc(${req}) gave ${p} with usable size ${usable}`);
  fillPattern(bytes(), p, id, req);
  const e = entry(id);
  L[e + 1] = me;
  L[e + 2] = usable;
  L[e + 3] = p;
  Atomics.add(L, L_LIVE_KIB, kib(usable));
  step(0, held(me), id, 'allocated');
  pending(OP_NONE);
  fig.bytes += req;
  addHeld(id, p, req);
}

function freeBlock(id: number, p: number, size: number): void {
  verify(id, p, size, 'when freed');
  pending(OP_FREE, 0, L[entry(id) + 2]!);
  heap.free(p);
  Atomics.sub(L, L_LIVE_KIB, kib(L[entry(id) + 2]!));
  step(held(me), K_FREED, id, 'freed');
  pending(OP_NONE);
  fig.frees++;
  if (Atomics.load(L, L_LEFT + L[entry(id) + 1]!) === 1) fig.freedAfterLeft++;
}

function doFree(): void {
  if (hIds.length === 0) return;
  const [id, p, size] = takeHeld(Math.floor(rand() * hIds.length));
  freeBlock(id, p, size);
}

function liveTargets(): number[] {
  const ts: number[] = [];
  for (let w = 1; w <= config.workers; w++) if (w !== me && !dead.has(w) && !gone.has(w)) ts.push(w);
  return ts;
}

function target(): number {
  const ts = liveTargets();
  if (ts.length === 0) return 0;
  if (config.pattern === 'ring') {
    for (let k = 1; k < config.workers; k++) {
      const w = ((me - 1 + k) % config.workers) + 1;
      if (!dead.has(w) && !gone.has(w)) return w;
    }
    return 0;
  }
  if (config.pattern === 'producer-consumer') {
    const consumers = ts.filter((w) => w > producers);
    if (isProducer) return consumers.length > 0 ? consumers[Math.floor(rand() * consumers.length)]! : 0;
    return 0; // a consumer passes blocks on to the main thread
  }
  const k = Math.floor(rand() * (ts.length + 1));
  return k === ts.length ? 0 : ts[k]!;
}

function sendTo(t: number, id: number, p: number, size: number): void {
  let b = outbox.get(t);
  if (b === undefined) outbox.set(t, (b = { from: me, ids: [], ptrs: [], sizes: [] }));
  step(held(me), sent(me, t), id, `sent to agent ${t}`);
  b.ids.push(id);
  b.ptrs.push(p);
  b.sizes.push(size);
  fig.sent++;
}

function doSend(): void {
  if (hIds.length === 0) return;
  const t = target();
  const [id, p, size] = takeHeld(Math.floor(rand() * hIds.length));
  if (L[entry(id) + 1] === me) Atomics.store(L, L_SHARED + me, 1);
  sendTo(t, id, p, size);
}

function flushOutbox(): void {
  for (const [t, b] of outbox) {
    if (t === 0) post({ kind: 'blocks', batch: b });
    else peers.get(t)?.postMessage(b); // a dead peer's port drops it: the ledger says where it went
  }
  outbox.clear();
}

function doReallocChain(): void {
  if (hIds.length === 0) return;
  const k = Math.floor(rand() * hIds.length);
  const id = hIds[k]!;
  let p = hPtrs[k]!;
  let size = hSizes[k]!;
  const n = 1 + Math.floor(rand() * 6);
  for (let i = 0; i < n; i++) {
    const r = rand();
    let next = r < 0.6 ? Math.floor(size * (1.2 + rand() * 2.8)) + 1 : r < 0.85 ? Math.floor(size * rand()) : drawSize();
    if (next - size > config.maxHeldBytes - heldBytes || (next > size && overBudget(next))) next = Math.floor(size / 2);
    const e = entry(id);
    pending(OP_REALLOC, next, L[e + 2]!);
    const epoch = Atomics.load(L, L_FILL_EPOCH);
    let q: number;
    try {
      q = heap.realloc(p, next);
    } catch (e) {
      if (!refusedWhileFull(e, epoch)) throw e;
      pending(OP_NONE);
      verify(id, p, size, 'after its realloc was refused for want of room'); // a refused realloc leaves the block as it was
      break;
    }
    const keep = Math.min(size, next);
    // The bytes the old size's pattern covered, up to the new size, must have come along.
    const u8 = bytes();
    let bad = -1;
    sampled(size, (o) => {
      if (o < keep && u8[q + o] !== patternByte(id, o)) {
        bad = o;
        return false;
      }
    });
    if (bad >= 0) fault(`realloc of block ${id} ${p} (${size} B) -> ${q} (${next} B) lost byte ${bad}`);
    const usable = heap.usableSize(q);
    if (usable < next) fault(`realloc to ${next} gave usable size ${usable}`);
    fillPattern(bytes(), q, id, next);
    if (q !== p) L[e + 1] = me;
    L[e + 3] = q;
    Atomics.add(L, L_LIVE_KIB, kib(usable) - kib(L[e + 2]!));
    L[e + 2] = usable;
    pending(OP_NONE);
    heldBytes += next - size;
    fig.bytes += Math.max(0, next - size);
    fig.reallocs++;
    p = q;
    size = next;
  }
  hPtrs[k] = p;
  hSizes[k] = size;
}

function maintenance(): void {
  const r = rand();
  if (r < 0.3) heap.flush();
  else if (r < 0.55) heap.drain();
  else if (r < 0.75) heap.flushCache();
  else if (r < 0.9) heap.tick();
  else if (r < 0.97) heap.purgeRetention();
  else heap.returnIdle();
}

/**
 * Whether `e`, thrown by an allocation that started when the fill epoch read `before`, is the heap saying it is
 * full in a run with a fill: `OUT_OF_MEMORY` once the fill has begun. While the fill holds the heap full that is
 * what every allocation should meet; after it, each backend may still refuse for a while, in ways its design
 * note states: the classic pool never merges or returns what it handed out (class memory stays with its class),
 * the global pool's empty slabs go back only on the main thread's idle return, and the arena's regions, once
 * carved, keep their address space (an oversized request needs room outside them) while the filler's emptied
 * arenas wait for its next sweep. Those are counted apart (`afterFillRefusals`). Any other error, a 0, or a
 * block handed out twice stays a fault.
 */
function refusedWhileFull(e: unknown, before: number): boolean {
  if (config.fill === null || (e as { code?: string })?.code !== 'OUT_OF_MEMORY') return false;
  const after = Atomics.load(L, L_FILL_EPOCH);
  if (after === 0) return false;
  if ((before & 1) === 1 || after !== before) fig.fullRefusals++;
  else fig.afterFillRefusals++;
  return true;
}

/** The tag the fill writes at both ends of its `k`th block. */
const fillTag = (k: number) => (Math.imul(k + 1, 0x9e3779b1) ^ (me << 24)) | 0;

/**
 * The fill (see `Fill`): mallocs blocks of the fill's size until the heap says `OUT_OF_MEMORY`, then asks again
 * for that size, a small, a large and an oversized one; every block must be a nonzero pointer whose usable
 * bytes lie inside the buffer and below 4 GiB, none may overlap another or a block this worker holds, each
 * keeps the tag written at its two ends, the heap checks clean (not on pool_global, whose check needs the other
 * agents paused), and every refusal is a HeapError
 * `OUT_OF_MEMORY`. Then all of them are freed.
 */
function doFill(): void {
  const size = config.fill!.size;
  Atomics.add(L, L_FILL_EPOCH, 1);
  const ptrs: number[] = [];
  const sizes: number[] = [];
  const take = (s: number): boolean => {
    let p: number;
    try {
      p = heap.malloc(s);
    } catch (e) {
      const code = (e as { code?: string })?.code;
      if (code !== 'OUT_OF_MEMORY') fault(`the fill's malloc(${s}) after ${ptrs.length} blocks threw ${code ?? ''} ${(e as Error)?.message}, not OUT_OF_MEMORY`);
      fig.fullRefusals++;
      return false;
    }
    const usable = heap.usableSize(p);
    const u8 = bytes();
    if (p === 0 || !Number.isInteger(p) || usable < s || p + usable > u8.length || p + usable > 2 ** 32) {
      fault(`the fill's malloc(${s}) gave ${p} with usable size ${usable} in a buffer of ${u8.length} bytes`);
    }
    const t = fillTag(ptrs.length);
    new DataView(u8.buffer).setInt32(p, t, true);
    new DataView(u8.buffer).setInt32(p + s - 4, t, true);
    ptrs.push(p);
    sizes.push(s);
    return true;
  };
  while (take(size)) {
    if (ptrs.length > 1 << 22) fault(`the fill of ${size} B blocks got ${ptrs.length} blocks and no OUT_OF_MEMORY`);
  }
  fig.fillBlocks = ptrs.length;
  fig.fillBytes = ptrs.length * size;
  for (const s of [size, 32, 4096, 2 * MiB, 16 * MiB]) take(s);
  // Distinct and apart: sorted by address, each block ends before the next begins (this worker's own held blocks
  // among them); then every tag is still in place.
  const all = ptrs.map((p, k) => [p, sizes[k]!, k] as const).concat(hPtrs.map((p, k) => [p, hSizes[k]!, -1] as const));
  all.sort((x, y) => x[0] - y[0]);
  for (let i = 1; i < all.length; i++) {
    const [p, s] = all[i - 1]!;
    if (p + Math.max(s, 1) > all[i]![0]) fault(`the fill: the block at ${p} (${s} B) overlaps the one at ${all[i]![0]} (${all[i]![1]} B)`);
  }
  const view = new DataView(bytes().buffer);
  for (let k = 0; k < ptrs.length; k++) {
    const p = ptrs[k]!;
    const t = fillTag(k);
    if (view.getInt32(p, true) !== t || view.getInt32(p + sizes[k]! - 4, true) !== t) fault(`the fill's block ${k} at ${p} lost its tag: another block shares its bytes`);
  }
  // The arena and the classic pool check this agent's own memory; the global pool's check walks the shared free
  // lists, which other agents change while it reads (the main thread checks it with the workers paused).
  if (config.backend !== 'pool_global') heap.check();
  for (let k = ptrs.length - 1; k >= 0; k--) heap.free(ptrs[k]!);
  Atomics.add(L, L_FILL_EPOCH, 1);
}

function oneOp(): void {
  ops++;
  Atomics.store(L, L_PROGRESS + me, ops);
  if (ops === fillAt) return doFill();
  if (ops === detachAt) return doDetach();
  if (ops === leaveAt) return doLeave();
  const r = rand();
  if (r < config.reallocChance) return doReallocChain();
  const x = rand();
  if (x < 0.02) return maintenance();
  if (isProducer) {
    if (config.pattern === 'producer-consumer') {
      if (x < 0.55) return doMalloc();
      if (x < 0.93) return doSend();
      return doFree();
    }
    if (x < 0.47) return doMalloc();
    if (x < 0.75) return doFree();
    return doSend();
  }
  // a consumer
  if (x < 0.15) return doMalloc();
  if (x < 0.9) return doFree();
  return doSend();
}

function receive(): void {
  while (incoming.length > 0) {
    const b = incoming.shift()!;
    for (let i = 0; i < b.ids.length; i++) {
      const id = b.ids[i]!;
      const p = b.ptrs[i]!;
      const size = b.sizes[i]!;
      const e = entry(id);
      const was = Atomics.compareExchange(L, e, sent(b.from, me), mode === 'zombie' ? sent(me, 0) : held(me));
      if (was !== sent(b.from, me)) {
        if (kindOf(was) === K_DIED) continue; // the main thread wrote it off (its sender died)
        fault(`received block ${id} from agent ${b.from}, but the ledger says it is ${describeState(was)}`);
      }
      fig.received++;
      verify(id, p, size, `when received from agent ${b.from}`);
      if (mode === 'zombie') {
        let f = outbox.get(0);
        if (f === undefined) outbox.set(0, (f = { from: me, ids: [], ptrs: [], sizes: [] }));
        f.ids.push(id);
        f.ptrs.push(p);
        f.sizes.push(size);
        continue;
      }
      if (mode === 'releasing') freeBlock(id, p, size);
      else addHeld(id, p, size);
    }
  }
  flushOutbox();
}

function releaseAll(): void {
  while (hIds.length > 0) {
    const [id, p, size] = takeHeld(hIds.length - 1);
    freeBlock(id, p, size);
  }
}

function doDetach(): void {
  flushOutbox();
  releaseAll();
  receive();
  releaseAll();
  heap.detach();
  mode = 'zombie';
  post({ kind: 'detached', index: me });
}

/** Reached its departure: no more operations; the main thread answers with 'depart' (see {@link depart}). */
function doLeave(): void {
  flushOutbox();
  mode = 'leaving';
  post({ kind: 'leaving', index: me });
}

/** Ledger ids in use so far. */
const idsInUse = () => Math.min(Atomics.load(L, L_NEXT_ID), capacity - 1);

/** Blocks sent to this worker by a worker that was not killed and not received yet. */
function inboundPending(): number {
  let n = 0;
  for (let id = 1, last = idsInUse(); id <= last; id++) {
    const s = Atomics.load(L, entry(id));
    if (kindOf(s) === K_SENT && holderOf(s) === me && !dead.has(fromOf(s))) n++;
  }
  return n;
}

/** What this worker leaves behind: its blocks others hold, and its sends not received yet (killed workers' aside). */
function leftBehind(): DepartureFigures {
  const d: DepartureFigures = { ownedLive: 0, inTransit: 0, handedOff: 0, freed: 0 };
  for (let id = 1, last = idsInUse(); id <= last; id++) {
    const e = entry(id);
    const s = Atomics.load(L, e);
    const k = kindOf(s);
    if (k === K_UNUSED || k === K_FREED || k === K_DIED || k === K_REFUSED) continue;
    if (L[e + 1] === me && !dead.has(holderOf(s))) d.ownedLive++;
    if (k === K_SENT && fromOf(s) === me && !dead.has(holderOf(s))) d.inTransit++; // sent to a killed worker: never arrives
  }
  return d;
}

/**
 * The departure, after the main thread's 'depart' (nobody sends here any more): take every block still in
 * transit to this worker, hand a share of what it holds to other agents and free the rest, post the last
 * sends, maybe wait until they are received, and end the thread without calling detach.
 */
function depart(): void {
  const d = departure!;
  receive();
  if (inboundPending() > 0) {
    setTimeout(() => guarded(depart), 1);
    return;
  }
  let handedOff = 0;
  let freed = 0;
  while (hIds.length > 0) {
    const [id, p, size] = takeHeld(hIds.length - 1);
    if (rand() < d.handOff) {
      if (L[entry(id) + 1] === me) Atomics.store(L, L_SHARED + me, 1);
      sendTo(target(), id, p, size);
      handedOff++;
    } else {
      freeBlock(id, p, size);
      freed++;
    }
  }
  flushOutbox();
  const end = () => {
    const left = leftBehind();
    if (!d.transit && left.inTransit > 0) {
      setTimeout(() => guarded(end), 1);
      return;
    }
    mode = 'done';
    post({ kind: 'departed', index: me, figures: fig, departure: { ...left, handedOff, freed } });
    io.leave(d.how, [...peers.values()]);
  };
  end();
}

function guarded(fn: () => void): void {
  if (mode === 'faulted') return;
  try {
    fn();
  } catch (e) {
    mode = 'faulted';
    const err = e as Error;
    const what = err instanceof Fault ? err.message : `agent ${me} (heap agent ${heap.agentId}): ${err?.name ?? 'Error'}${(err as { code?: string }).code ? ` ${(err as { code?: string }).code}` : ''}: ${err?.message}\n${err?.stack ?? ''}`;
    post({ kind: 'fault', index: me, message: what });
  }
}

function schedule(): void {
  if (scheduled || paused || sleeping || mode === 'faulted') return;
  scheduled = true;
  io.soon(run);
}

function run(): void {
  scheduled = false;
  if (paused || sleeping) return;
  guarded(() => {
    receive();
    if (mode !== 'running') return;
    for (let i = 0; i < BATCH && mode === 'running'; i++) {
      oneOp();
      if (ops >= config.ops && mode === 'running') {
        mode = 'done';
        flushOutbox();
        post({ kind: 'done', index: me });
      }
    }
    flushOutbox();
    if (mode === 'running' && config.idleChance > 0 && rand() < config.idleChance * BATCH) {
      if (rand() < 0.6) {
        // Mostly short pauses; a few long enough (about 1.1 s of ticks) for the idle return to run.
        const long = longSleeps < 4 && rand() < 0.2;
        if (long) longSleeps++;
        fig.idles++;
        idling = true;
        sleeping = true;
        heap.startIdle();
        setTimeout(() => {
          sleeping = false;
          if (idling) heap.stopIdle();
          idling = false;
          schedule();
        }, long ? 600 + Math.floor(rand() * 600) : 5 + Math.floor(rand() * 120));
        return;
      }
      fig.waits++;
      heap.wait(waitCell, 0, 0, rand() < 0.1 ? 500 : 1 + Math.floor(rand() * 60));
    }
  });
  if (mode === 'running') schedule();
}

function onPeer(b: BlockBatch): void {
  incoming.push(b);
  if (!paused && !sleeping && mode !== 'running') guarded(receive);
  else schedule();
}

io.onCommand((m: ToSwarmWorker) => {
  switch (m.cmd) {
    case 'peers':
      for (const { index, port: p } of m.ports) {
        peers.set(index, p as PeerPort);
        io.onPeer(p as PeerPort, onPeer);
      }
      mode = 'running';
      Atomics.store(L, L_ALIVE + me, 1);
      schedule();
      break;
    case 'pause':
      paused = true;
      if (idling) heap.stopIdle();
      post({ kind: 'paused', index: me });
      break;
    case 'resume':
      for (const d of m.dead) dead.add(d);
      for (const g of m.gone) gone.add(g);
      paused = false;
      if (idling && sleeping && !heap.isDetached) heap.startIdle();
      if (mode === 'running') schedule();
      else guarded(receive);
      break;
    case 'depart':
      for (const d of m.dead) dead.add(d);
      for (const g of m.gone) gone.add(g);
      paused = false;
      guarded(depart);
      break;
    case 'release':
      guarded(() => {
        receive();
        if (mode !== 'zombie') {
          releaseAll();
          mode = 'releasing';
        }
      });
      post({ kind: 'released', index: me });
      break;
    case 'finish':
      guarded(() => {
        receive();
        if (!heap.isDetached) {
          releaseAll();
          heap.flushCache();
          heap.flush();
          heap.drain();
          heap.detach();
        }
      });
      if (mode !== 'faulted') post({ kind: 'finished', index: me, figures: fig });
      io.finish([...peers.values()]);
      break;
  }
});

post({ kind: 'ready', index: me, agentId: heap.agentId, largeMax });
