/**
 * What the swarm program's main thread and its workers share: the seeded generator, how one run's
 * configuration is drawn from its seed, the block pattern, the block ledger in shared memory and the
 * messages. Agent indices: 0 is the main thread (it only frees, reaps and checks), 1..8 are workers.
 */
import { mulberry32Unit } from '../../../tools/test-utils/prng.mjs';

/** The swarm's seeded generator: fractions in [0, 1), from the repository's one generator (mulberry32). */
export const rng = mulberry32Unit;

/** A sub-seed of `seed` for `salt` (a worker index, a purpose). */
export function subSeed(seed: number, salt: number): number {
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(salt + 1, 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  return (h ^ (h >>> 15)) >>> 0;
}

export type Backend = 'pool_arena' | 'pool_classic' | 'pool_global';
export type Pattern = 'ring' | 'producer-consumer' | 'all-to-all';

/** How a departing worker's thread ends by itself: its event loop runs dry, `process.exit()`, or its ports close. */
export type LeaveHow = 'natural' | 'exit' | 'close';

/**
 * A worker that leaves part-way the way a finished worker does in a real program: it never calls `detach`;
 * its thread ends by itself and its agent leaves the heap on the way out. Before it ends it hands a share of
 * the blocks it holds to other agents and frees the rest; blocks it allocated that others hold stay live and
 * are freed later into an owner that has left.
 */
export interface Departure {
  worker: number;
  atOp: number;
  how: LeaveHow;
  /** The share of the blocks it holds at the end that it sends to other agents (the rest it frees). */
  handOff: number;
  /** End right after the last sends are posted (they are still in transit), instead of waiting until they are received. */
  transit: boolean;
}

/**
 * A fill to the heap's limit: at operation `atOp` worker `worker` (one that runs to the end: never killed,
 * detached or departing) mallocs blocks of `size` until the heap says `OUT_OF_MEMORY`, asks a few times more,
 * checks that every block it got is distinct and still carries its tag, then frees them all. Meanwhile another
 * agent's allocation may find the heap full: an `OUT_OF_MEMORY` then is expected (see `L_FILL_EPOCH`), any
 * other error, a 0, or a block handed out twice is a fault.
 */
export interface Fill {
  worker: number;
  atOp: number;
  size: number;
}

/** One run of the swarm, all drawn from its seed. */
export interface RunConfig {
  seed: number;
  workers: number;
  backend: Backend;
  profile: number;
  heapBytes: number;
  /** Relative weights of small (<= 1 MiB), large (to largeMax) and oversized requests. */
  mix: { small: number; large: number; oversized: number };
  pattern: Pattern;
  /** Per batch of operations, the chance of an idle pause (startIdle + sleep, or a bounded wait). */
  idleChance: number;
  /** Per operation, the chance of a realloc chain (1-6 reallocs of one block). */
  reallocChance: number;
  /** Workers that detach part-way (then only forward what they receive to the main thread). */
  detaches: { worker: number; atOp: number }[];
  /**
   * Workers terminated part-way. On pool_arena they are reaped: by the main thread's explicit `reap`, or, with
   * `watch`, by the `heap.watch(worker)` the main thread set when it started the worker. On pool_global they
   * are never reaped nor watched (it keeps no agent state): what they held stays live. The classic pool has none.
   */
  kills: { worker: number; atOp: number; watch: boolean }[];
  /** Workers whose thread ends by itself part-way, without calling detach (see {@link Departure}). */
  departures: Departure[];
  /** Operations each worker runs. */
  ops: number;
  /** Blocks one worker holds at most. */
  maxHeld: number;
  /** Bytes one worker holds at most. */
  maxHeldBytes: number;
  /** KiB live in the whole run at most (blocks in transit and in caches count): a producer waits for its consumers. */
  liveBudgetKiB: number;
  /** A fill to the heap's limit, or null (see {@link Fill}). */
  fill: Fill | null;
}

const MiB = 1 << 20;
const HEAP_SIZES = [256 * MiB, 1024 * MiB, 4 * 1024 * MiB - 65536];
const MIXES = [
  { small: 1, large: 0, oversized: 0 },
  { small: 1, large: 0.01, oversized: 0 },
  { small: 1, large: 0.03, oversized: 0.005 },
  { small: 1, large: 0.002, oversized: 0.01 },
  { small: 1, large: 0.05, oversized: 0.02 },
];
const PATTERNS: Pattern[] = ['ring', 'producer-consumer', 'all-to-all'];
/** The share of the runs drawn for the arena that move to pool_global (see the end of {@link drawConfig}). */
const GLOBAL_SHARE = 0.4;

/** The share of runs drawn with a fill to the heap's limit (see {@link Fill}). */
const FILL_SHARE = 0.12;
/**
 * Sizes a fill is drawn from: class sizes whose slabs reach the top of the space, large sizes, oversized ones.
 * Each block written at its two ends only, so a fill of 4 GiB keeps at most an eighth of it resident.
 */
const FILL_SIZES = [64 * 1024, 256 * 1024, 1024 * 1024, 1536 * 1024, 2 * MiB, 4 * MiB, 16 * MiB];
/** Heaps a fill run gets: 1 GiB and the largest a heap can be, 4 GiB (whose top is where slab ends wrap). */
const FILL_HEAP_SIZES = [1024 * MiB, 4 * 1024 * MiB];

/**
 * What to draw: `backend` forces one backend; `noGlobal` draws every seed as before pool_global was drawn;
 * `noFill` draws no fill (a page in a browser cannot have a 4 GiB heap).
 */
export interface DrawOptions {
  backend?: Backend;
  noGlobal?: boolean;
  noFill?: boolean;
}

/** Draws one run's configuration from its seed. `scale` multiplies the operation count. */
export function drawConfig(seed: number, scale = 1, only: DrawOptions = {}): RunConfig {
  const r = rng(subSeed(seed, 1000));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  let workers = 1 + Math.floor(r() * 8);
  let backend: Backend = r() < 0.7 ? 'pool_arena' : 'pool_classic';
  if (only.backend) backend = only.backend;
  const profile = 1 + Math.floor(r() * 10);
  let heapBytes = pick(HEAP_SIZES);
  // The classic pool never merges or returns large blocks (docs/design/pool-classic.md): give it the largest heap.
  if (backend === 'pool_classic') heapBytes = HEAP_SIZES[HEAP_SIZES.length - 1]!;
  let mix = pick(MIXES);
  // A small heap's address space is cut up by oversized mappings (each reserves at least one arena-aligned
  // power of two): keep them to the larger heaps.
  if (heapBytes < 1024 * MiB) mix = { ...mix, oversized: 0 };
  const pattern = pick(PATTERNS);
  const idleChance = pick([0, 0.0005, 0.002, 0.005]);
  const reallocChance = pick([0, 0.05, 0.15]);
  const ops = Math.max(200, Math.round((1500 + Math.floor(r() * 6000)) * scale));
  const detaches: RunConfig['detaches'] = [];
  const kills: RunConfig['kills'] = [];
  for (let w = 1; w <= workers; w++) {
    const d = r();
    const atOp = Math.floor(r() * ops * 0.9);
    if (workers > 1 && d < 0.12) detaches.push({ worker: w, atOp });
    else if (backend !== 'pool_classic' && workers > 1 && d < 0.3) kills.push({ worker: w, atOp, watch: false });
  }
  // A 256 MiB heap holds at most 93 arenas of 2 MiB: nine agents each keeping a few partly used arenas of
  // their own exhaust it (seen in soaks: every slot carved, all by live agents). Such a heap gets at most 4
  // workers; every draw above is made as before, so the other runs of a seed replay unchanged.
  if (heapBytes < 1024 * MiB && workers > 4) {
    workers = 4;
    for (const list of [detaches, kills]) for (let i = list.length - 1; i >= 0; i--) if (list[i]!.worker > workers) list.splice(i, 1);
  }
  // Leave at least one worker that runs to the end.
  while (detaches.length + kills.length >= workers && workers > 0) (kills.length > 0 ? kills : detaches).pop();
  // Departures and how kills are reaped come from a stream of their own, so every draw above (and so the
  // runs of seeds recorded before departures existed) stays as it was.
  const rd = rng(subSeed(seed, 1001));
  const departures: Departure[] = [];
  for (let w = 1; w <= 8; w++) {
    const [d, at, how, handOff, transit, watch] = [rd(), rd(), rd(), rd(), rd(), rd()];
    if (w > workers) continue;
    const kill = kills.find((k) => k.worker === w);
    if (kill) kill.watch = watch < 0.5;
    else if (workers > 1 && d < 0.15 && !detaches.some((x) => x.worker === w)) {
      departures.push({
        worker: w,
        atOp: 1 + Math.floor(at * ops * 0.9),
        how: (['natural', 'exit', 'close'] as const)[Math.floor(how * 3)]!,
        handOff: [0, 0.5, 1][Math.floor(handOff * 3)]!,
        transit: transit < 0.5,
      });
    }
  }
  while (detaches.length + kills.length + departures.length >= workers && departures.length > 0) departures.pop();
  const maxHeld = pick([16, 64, 256, 1024]);
  const maxHeldBytes = Math.min(64 * MiB, Math.floor(heapBytes / (8 * (workers + 1))));
  let liveBudgetKiB = Math.floor(heapBytes / 4 / 1024);
  // Each agent may retain up to its rung's large-retention budget (16 MiB at rung 3, 128 MiB at rung 10) and
  // keeps its own arenas: a 256 MiB heap shared by up to 9 agents runs at the low rungs, with less live.
  let rung = profile;
  if (heapBytes < 1024 * MiB) {
    rung = 1 + (profile % 2);
    liveBudgetKiB = Math.floor(heapBytes / 8 / 1024);
  }
  // pool_global comes from a stream of its own, drawn after everything else, so every draw above is as it
  // was (a seed recorded with two backends replays as before under `noGlobal`): a run drawn for the arena
  // moves to the global pool with this chance, with all the rest of its draws, kills included (never
  // reaped there, nor watched).
  if (backend === 'pool_arena' && !only.backend && !only.noGlobal && rng(subSeed(seed, 1002))() < GLOBAL_SHARE) backend = 'pool_global';
  if (backend === 'pool_global') for (const k of kills) k.watch = false;
  // Fills come from a stream of their own too, drawn last: every draw above stays as it was.
  const rf = rng(subSeed(seed, 1003));
  const [f, fillAt, fillSize, fillHeap] = [rf(), rf(), rf(), rf()];
  let fill: Fill | null = null;
  const filler = [...Array(workers).keys()].map((i) => i + 1).find((w) => ![...detaches, ...kills, ...departures].some((x) => x.worker === w));
  if (!only.noFill && f < FILL_SHARE && filler !== undefined) {
    // The classic pool keeps its 4 GiB (it never merges or returns large blocks, above).
    if (backend !== 'pool_classic') heapBytes = FILL_HEAP_SIZES[Math.floor(fillHeap * FILL_HEAP_SIZES.length)]!;
    fill = { worker: filler, atOp: 1 + Math.floor(fillAt * ops * 0.8), size: FILL_SIZES[Math.floor(fillSize * FILL_SIZES.length)]! };
  }
  return { seed, workers, backend, profile: rung, heapBytes, mix, pattern, idleChance, reallocChance, detaches, kills, departures, ops, maxHeld, maxHeldBytes, liveBudgetKiB, fill };
}

export function describeConfig(c: RunConfig): string {
  const mix = `mix ${c.mix.large > 0 ? `L${c.mix.large}` : 'S'}${c.mix.oversized > 0 ? `+O${c.mix.oversized}` : ''}`;
  return [
    c.backend.slice(5),
    `p${c.profile}`,
    `w${c.workers}`,
    c.pattern,
    `${Math.round(c.heapBytes / MiB)}MiB`,
    mix,
    `idle ${c.idleChance}`,
    `realloc ${c.reallocChance}`,
    `ops ${c.ops}`,
    `held ${c.maxHeld}`,
    `detach [${c.detaches.map((d) => `${d.worker}@${d.atOp}`).join(',')}]`,
    `kill [${c.kills.map((d) => `${d.worker}@${d.atOp}${d.watch ? ':watch' : ''}`).join(',')}]`,
    `leave [${c.departures.map((d) => `${d.worker}@${d.atOp}:${d.how}:h${d.handOff}${d.transit ? ':transit' : ''}`).join(',')}]`,
    ...(c.fill ? [`fill ${c.fill.size >= MiB ? `${c.fill.size / MiB}MiB` : `${c.fill.size / 1024}KiB`} by ${c.fill.worker}@${c.fill.atOp}`] : []),
  ].join(' ');
}

// ---- the block pattern ----------------------------------------------------------------------------

/** The byte at offset `o` of block `id`. */
export function patternByte(id: number, o: number): number {
  const h = Math.imul(id, 0x9e3779b1) >>> 0;
  return ((h >>> ((o & 3) << 3)) ^ (o >>> 2) ^ (o >>> 12)) & 255;
}

/** Visits the offsets a block's pattern covers: its first and last 64 bytes and one byte every 4 KiB between. */
export function sampled(size: number, visit: (o: number) => boolean | void): boolean {
  const head = Math.min(size, 64);
  for (let o = 0; o < head; o++) if (visit(o) === false) return false;
  for (let o = 4096; o < size - 64; o += 4096) if (visit(o) === false) return false;
  for (let o = Math.max(head, size - 64); o < size; o++) if (visit(o) === false) return false;
  return true;
}

/** Writes block `id`'s pattern over `[from, size)` of the block at `p`. */
export function fillPattern(u8: Uint8Array, p: number, id: number, size: number, from = 0): void {
  sampled(size, (o) => {
    if (o >= from) u8[p + o] = patternByte(id, o);
  });
}

/** The first offset below `size` where the block at `p` does not carry `id`'s pattern, or -1. */
export function patternFault(u8: Uint8Array, p: number, id: number, size: number): number {
  let bad = -1;
  sampled(size, (o) => {
    if (u8[p + o] !== patternByte(id, o)) {
      bad = o;
      return false;
    }
  });
  return bad;
}

// ---- the ledger -----------------------------------------------------------------------------------

/**
 * The block ledger: an Int32Array over a SharedArrayBuffer every agent updates with compare-exchange.
 * Header words, then per-agent words, then four words per block id: state, owner agent (the worker that
 * allocated it, or moved it in a realloc), usable bytes, address.
 * A state is kind | holder << 4 | from << 8.
 */
export const L_NEXT_ID = 0;
/** KiB of blocks live in the whole run (usable sizes), against `RunConfig.liveBudgetKiB`. */
export const L_LIVE_KIB = 1;
/**
 * Counts the fill's starts and ends (odd while a fill holds the heap full): an `OUT_OF_MEMORY` another agent
 * meets is expected when this word was odd, or changed, across its allocation.
 */
export const L_FILL_EPOCH = 2;
/** Per agent (index a): progress (operations done), alive flag, "shared one of its own blocks" flag. */
export const L_PROGRESS = 16;
export const L_ALIVE = 32;
export const L_SHARED = 48;
/** Per agent: the operation in flight (kind), its request size, the usable size it may release. */
export const L_PENDING_KIND = 64;
export const L_PENDING_SIZE = 80;
export const L_PENDING_OLD = 96;
/** Per agent: 1 once the main thread saw the thread of a departing worker end (its agent has left the heap). */
export const L_LEFT = 112;
export const L_ENTRIES = 128;

export const K_UNUSED = 0;
export const K_HELD = 1;
export const K_SENT = 2;
export const K_FREED = 3;
export const K_DIED = 4;
/** Its malloc was refused with `OUT_OF_MEMORY` while a fill held the heap full: no block was ever made. */
export const K_REFUSED = 5;

export const OP_NONE = 0;
export const OP_MALLOC = 1;
export const OP_FREE = 2;
export const OP_REALLOC = 3;

export const held = (agent: number) => K_HELD | (agent << 4);
export const sent = (from: number, to: number) => K_SENT | (to << 4) | (from << 8);
export const kindOf = (s: number) => s & 15;
export const holderOf = (s: number) => (s >>> 4) & 15;
export const fromOf = (s: number) => (s >>> 8) & 15;

export function ledgerBytes(capacity: number): number {
  return (L_ENTRIES + 4 * capacity) * 4;
}
export const entry = (id: number) => L_ENTRIES + 4 * id;

export function describeState(s: number): string {
  const k = kindOf(s);
  if (k === K_UNUSED) return 'unused';
  if (k === K_HELD) return `held by agent ${holderOf(s)}`;
  if (k === K_SENT) return `sent from agent ${fromOf(s)} to agent ${holderOf(s)}`;
  if (k === K_FREED) return 'freed';
  if (k === K_DIED) return 'died with its worker';
  if (k === K_REFUSED) return 'refused (the heap was full)';
  return `state ${s}`;
}

// ---- messages -------------------------------------------------------------------------------------

/** Blocks in transit: parallel arrays of ids, pointers and requested sizes. */
export interface BlockBatch {
  from: number;
  ids: number[];
  ptrs: number[];
  sizes: number[];
}

/** A port between two workers (a MessagePort of the host: worker_threads' in Node, the browser's in a page). */
export type PeerPort = unknown;

export interface SwarmWorkerData {
  lib: string;
  handle: unknown;
  ledger: SharedArrayBuffer;
  capacity: number;
  index: number;
  config: RunConfig;
}

/** Main thread to worker. */
export type ToSwarmWorker =
  | { cmd: 'peers'; ports: { index: number; port: PeerPort }[] }
  | { cmd: 'pause' }
  | { cmd: 'resume'; dead: number[]; gone: number[] }
  /** To a worker that asked to leave: nobody sends to it any more; take what is in transit, hand over, end. */
  | { cmd: 'depart'; dead: number[]; gone: number[] }
  | { cmd: 'release' }
  | { cmd: 'finish' };

export interface WorkerFigures {
  mallocs: number;
  callocs: number;
  reallocs: number;
  frees: number;
  sent: number;
  received: number;
  bytes: number;
  idles: number;
  waits: number;
  maxLive: number;
  /** Blocks freed after the worker that allocated them had left (its thread had ended). */
  freedAfterLeft: number;
  /** Blocks the fill got before the heap said `OUT_OF_MEMORY` (0: this worker made no fill). */
  fillBlocks: number;
  /** Bytes those blocks held (what was asked for). */
  fillBytes: number;
  /** This worker's allocations refused with `OUT_OF_MEMORY` while a fill held the heap full. */
  fullRefusals: number;
  /** Its allocations refused with `OUT_OF_MEMORY` after the fill had given its blocks back. */
  afterFillRefusals: number;
}

/** What a departing worker saw just before its thread ended. */
export interface DepartureFigures {
  /** Blocks it allocated that other agents held or had in transit. */
  ownedLive: number;
  /** Blocks it had sent that were not received yet. */
  inTransit: number;
  /** Blocks it sent and freed in its last step. */
  handedOff: number;
  freed: number;
}

/** Worker to main thread. */
export type FromSwarmWorker =
  | { kind: 'ready'; index: number; agentId: number; largeMax: number }
  | { kind: 'blocks'; batch: BlockBatch }
  | { kind: 'paused'; index: number }
  | { kind: 'done'; index: number }
  | { kind: 'detached'; index: number }
  /** It reached its departure: it does no more operations and waits for the main thread's 'depart'. */
  | { kind: 'leaving'; index: number }
  /** Its last message: its thread ends right after. */
  | { kind: 'departed'; index: number; figures: WorkerFigures; departure: DepartureFigures }
  | { kind: 'released'; index: number }
  | { kind: 'finished'; index: number; figures: WorkerFigures }
  | { kind: 'fault'; index: number; message: string };

// ---- the host ------------------------------------------------------------------------------------

/** A swarm worker as the main thread sees it (`#swarm-host` starts it: a worker_threads Worker, a Web Worker). */
export interface SwarmThread<Port = PeerPort> {
  /** The key its agents record for their thread (what `watch` finds them by in Node). */
  readonly thread: number;
  /**
   * What `heap.watch` takes for it, or null where a watch cannot be tied to this one worker (a browser's
   * watch reaps every agent whose Web Lock goes): the run then watches none of its workers.
   */
  readonly watchable: object | null;
  onMessage(fn: (m: FromSwarmWorker) => void): void;
  onError(fn: (e: unknown) => void): void;
  /** Once its thread has ended, with its exit code. */
  onExit(fn: (code: number) => void): void;
  post(m: ToSwarmWorker, transfer?: Port[]): void;
  /** Ends its thread at whatever instruction it is at; resolves once the thread is gone. */
  terminate(): Promise<unknown>;
}

/** What a swarm worker sees of its host. */
export interface SwarmWorkerIO<Port = PeerPort> {
  data: SwarmWorkerData;
  post(m: FromSwarmWorker): void;
  onCommand(fn: (m: ToSwarmWorker) => void): void;
  onPeer(port: Port, fn: (b: BlockBatch) => void): void;
  /** Runs `fn` once the events waiting now have run (setImmediate). */
  soon(fn: () => void): void;
  /** Ends the thread the way a departure says, after its last message (`peers` are its ports to the others). */
  leave(how: LeaveHow, peers: Port[]): void;
  /** Closes its ports after its last message, so its thread ends. */
  finish(peers: Port[]): void;
}
