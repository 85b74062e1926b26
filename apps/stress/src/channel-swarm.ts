/**
 * The channel-swarm program: blocks handed through one `@paddock/channel` channel by producer and consumer workers
 * while workers are terminated (kills) and others end by themselves (departures), each replaced by a fresh one.
 * Seeded: each run draws its backend, ring capacity, worker counts and the order and timing of its events from its
 * seed. A ledger in shared memory holds one word per block (see channel-swarm-worker.ts). A run passes when the
 * survivors finish (the channel never wedges), no block is received twice, out of order per producer or with its
 * contents changed, what was not received is at most what the workers killed were sending or had received (one
 * block each, or a batch: the rule of docs/design/channel.md), and once everyone is gone the channel holds only the main thread's record.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Heap, HeapOptions } from '@paddock/allocator';
import { createChannel } from '@paddock/channel';
import { mulberry32 } from '../../../tools/test-utils/prng.mjs';
import { numberArg, splitFlag } from './args.js';
import { MAX_SLOTS, SHARED_WORDS, W_BAD, W_DEPART, W_DUPLICATES, W_NEXT_ID, W_ORDER, W_PHANTOMS, W_RECEIVED, W_STOP, type ChannelSwarmRole, type ChannelSwarmWorkerData } from './channel-swarm-protocol.js';
import type { StressProgram } from './program.js';
import { packagesDir } from './swarm-lib.js';

const BACKENDS = ['pool_arena', 'pool_classic', 'pool_global'] as const;
type Backend = (typeof BACKENDS)[number];

/** What one run found. */
export interface ChannelSwarmResult {
  seed: number;
  backend: Backend;
  capacity: number;
  producers: number;
  consumers: number;
  kills: number;
  departures: number;
  received: number;
  notReceived: number;
  recoveredFrees: number;
  faults: string[];
}

function heapOf(backend: Backend, options: HeapOptions): Promise<Heap> {
  const file = join(packagesDir(), 'allocator', 'dist', `${backend.replace('_', '-')}.js`);
  return import(pathToFileURL(file).href).then((m: { createHeap(o: HeapOptions): Heap }) => m.createHeap(options));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One seeded run. */
export async function runChannelSwarm(seed: number, only?: Backend): Promise<ChannelSwarmResult> {
  const random = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[random() % xs.length]!;
  const backend = only ?? pick(BACKENDS);
  const capacity = pick([2, 8, 64, 256]);
  const producers = 1 + (random() % 3);
  const consumers = 1 + (random() % 3);
  const events = 10 + (random() % 21);
  const heap = await heapOf(backend, { maxBytes: 256 << 20 });
  const ch = createChannel(heap, { capacity, agents: 12 });
  const ledger = new SharedArrayBuffer(4 << 20);
  const shared = new SharedArrayBuffer(SHARED_WORDS * 4);
  const w = new Int32Array(shared);
  const faults: string[] = [];
  let incarnation = 0;
  /** When each worker exited (with its exit code), from its start on. */
  const exits = new Map<Worker, Promise<number>>();
  let stopping = false;
  const start = (role: ChannelSwarmRole, slot: number): Worker => {
    const data: ChannelSwarmWorkerData = {
      heap: heap.handle,
      channel: ch.handle,
      ledger,
      shared,
      role,
      mode: pick(role === 'producer' ? ['send', 'batch', 'async'] : ['recv', 'batch', 'async']),
      slot,
      incarnation: ++incarnation,
      leave: random() % 2 === 0,
    };
    const worker = new Worker(new URL('./channel-swarm-worker.js', import.meta.url), { workerData: data, execArgv: [`--conditions=paddock-${backend.replace('_', '-')}`] });
    heap.watch(worker);
    worker.on('error', (e) => faults.push(`worker ${data.incarnation} (${role}): ${e instanceof Error ? e.message : String(e)}`));
    const me = data.incarnation;
    modes.set(worker, data.mode);
    exits.set(
      worker,
      new Promise<number>((resolve) =>
        worker.once('exit', (code) => {
          // A worker ends when it is told to depart, is killed, or the run is over: any other end is a fault.
          if (!stopping && Atomics.load(w, W_DEPART + slot) !== me && !killed.has(worker)) faults.push(`worker ${me} (${role}) ended by itself (exit code ${code})`);
          resolve(code);
        }),
      ),
    );
    return worker;
  };
  const killed = new WeakSet<Worker>();
  const modes = new Map<Worker, string>();
  /**
   * Blocks a kill may leave not received: a producer's block in its send (a batch producer marks its whole batch of
   * 5 first), a consumer's block received and not yet marked (a batch consumer takes up to 8 at once).
   */
  let mayMiss = 0;
  const finished = (x: Worker) => exits.get(x)!;
  const slots: { role: ChannelSwarmRole; worker: Worker; incarnation: number }[] = [];
  for (let k = 0; k < producers + consumers && k < MAX_SLOTS; k++) {
    const role = k < producers ? 'producer' : 'consumer';
    slots.push({ role, worker: start(role, k), incarnation: incarnation });
  }
  let kills = 0;
  let departures = 0;
  const ids = ledger.byteLength >>> 2;
  for (let e = 0; e < events && faults.length === 0 && Atomics.load(w, W_NEXT_ID) < ids; e++) {
    // Mid-traffic: after some more blocks went through (a wedged channel never gets there: the run times out).
    // A run whose producers used up the ledger's ids ends early.
    const target = Atomics.load(w, W_RECEIVED) + 10 + (random() % 40);
    const deadline = Date.now() + 30_000;
    while (Atomics.load(w, W_RECEIVED) < target && Atomics.load(w, W_NEXT_ID) < ids) {
      if (Date.now() > deadline) {
        faults.push(`no progress for 30 s after ${kills} kills and ${departures} departures: the channel is wedged`);
        break;
      }
      await sleep(1);
    }
    const k = random() % slots.length;
    const s = slots[k]!;
    if (random() % 3 === 0) {
      Atomics.store(w, W_DEPART + k, s.incarnation); // it ends by itself at its next look
      await finished(s.worker);
      departures++;
    } else {
      killed.add(s.worker);
      const mode = modes.get(s.worker);
      mayMiss += s.role === 'producer' ? (mode === 'batch' ? 5 : 1) : mode === 'recv' ? 1 : 8;
      await s.worker.terminate();
      kills++;
    }
    s.worker = start(s.role, k);
    s.incarnation = incarnation;
  }
  stopping = true;
  Atomics.store(w, W_STOP, 1);
  await Promise.all(slots.filter((s) => s.role === 'producer').map((s) => finished(s.worker)));
  ch.close();
  await Promise.all(slots.map((s) => finished(s.worker)));

  for (const [word, what] of [[W_DUPLICATES, 'received twice'], [W_ORDER, 'out of order'], [W_BAD, 'with changed contents'], [W_PHANTOMS, 'never sent']] as const) {
    const n = Atomics.load(w, word);
    if (n !== 0) faults.push(`${n} blocks ${what}`);
  }
  const book = new Int32Array(ledger);
  let received = 0;
  let notReceived = 0;
  for (let id = 0; id < Math.min(Atomics.load(w, W_NEXT_ID), book.length); id++) {
    if (book[id] === 3) received++;
    else if (book[id] !== 0) notReceived++;
  }
  if (notReceived > mayMiss) faults.push(`${notReceived} blocks sent and not received, more than the ${mayMiss} the ${kills} workers killed may have held`);
  for (let look = 0; look < 400 && (ch.recover(), ch.stats().agents > 1); look++) await sleep(10);
  const stats = ch.stats();
  if (stats.agents !== 1) faults.push(`${stats.agents - 1} records of gone workers not taken back`);
  if (stats.queued !== 0 || !ch.done) faults.push(`the channel is not done: ${stats.queued} queued`);
  if (stats.parkedSenders !== 0 || stats.parkedReceivers !== 0) faults.push(`parked counts left: ${stats.parkedSenders} senders, ${stats.parkedReceivers} receivers`);
  ch.drop();
  return { seed, backend, capacity, producers, consumers, kills, departures, received, notReceived, recoveredFrees: stats.recoveredFrees, faults };
}

export const CHANNEL_SWARM_USAGE = `usage: node apps/stress/dist/main.js channel-swarm [--seeds N] [--minutes M] [--seed S] [--backend B]
  --seeds N     runs, seeds drawn from the clock (default 3)
  --minutes M   a soak: keep starting runs with fresh seeds for M minutes (fractions allowed)
  --seed S      one run with this seed (decimal or 0x hex), to replay a failure
  --backend B   pool_arena, pool_classic or pool_global (default: drawn per run)`;

export const channelSwarm: StressProgram = {
  name: 'channel-swarm',
  summary: 'blocks through a channel while producers and consumers are killed and depart, checked by a ledger',
  usage: CHANNEL_SWARM_USAGE,
  async run(args: string[]): Promise<number> {
    let runs = 3;
    let minutes = 0;
    let seeds: number[] | null = null;
    let backend: Backend | undefined;
    for (let i = 0; i < args.length; i++) {
      const [flag, inline] = splitFlag(args[i]!);
      const value = () => inline ?? args[++i];
      if (flag === '--seeds') runs = numberArg(flag, value(), 1, 10_000);
      else if (flag === '--minutes') minutes = numberArg(flag, value(), 0.01, 10_000);
      else if (flag === '--seed') seeds = [numberArg(flag, value(), 0, 0xffffffff) >>> 0];
      else if (flag === '--backend') {
        const b = value();
        if (!BACKENDS.includes(b as Backend)) throw new Error(`--backend takes ${BACKENDS.join(', ')}, got ${JSON.stringify(b)}`);
        backend = b as Backend;
      } else throw new Error(`unknown option ${flag}`);
    }
    const base = Date.now() >>> 0;
    if (seeds === null && minutes > 0) console.log(`channel-swarm: a soak of ${minutes} minutes, seeds from base 0x${base.toString(16).padStart(8, '0')}`);
    const fresh = (k: number) => (base + Math.imul(k, 0x9e3779b1)) >>> 0;
    const until = Date.now() + minutes * 60_000;
    seeds ??= minutes > 0 ? [] : Array.from({ length: runs }, (_, k) => fresh(k));
    const soak = seeds.length === 0;
    let failed = 0;
    for (let k = 0; soak ? Date.now() < until : k < seeds.length; k++) {
      const seed = soak ? fresh(k) : seeds[k]!;
      if (soak) seeds.push(seed);
      const r = await runChannelSwarm(seed, backend);
      const line = `seed 0x${seed.toString(16).padStart(8, '0')} ${r.backend.padEnd(12)} capacity ${String(r.capacity).padStart(3)}, ${r.producers}x${r.consumers}: ${r.kills} killed, ${r.departures} departed, ${r.received} received, ${r.notReceived} not (${r.recoveredFrees} freed by the channel)`;
      console.log(r.faults.length === 0 ? `  ${line}` : `  ${line}\n    FAIL: ${r.faults.join('; ')}`);
      if (r.faults.length > 0) failed++;
    }
    console.log(failed === 0 ? `channel-swarm: PASS - ${seeds.length} runs` : `channel-swarm: FAIL - ${failed} of ${seeds.length} runs`);
    return failed === 0 ? 0 : 1;
  },
};
