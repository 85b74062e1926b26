/**
 * One run of the swarm (see swarm.ts): its workers started through the host (#swarm-host: worker_threads
 * Workers in Node, module Web Workers in a browser), every block checked against the ledger, the heap checked
 * against what died. Nothing here imports a Node module, so a browser page runs the same runs.
 */
import type { Heap } from '@paddock/allocator';
import { catchUncaught, openChannel, startSwarmWorker, type PeerPort } from '#swarm-host';
import {
  K_DIED,
  K_FREED,
  K_HELD,
  K_SENT,
  K_REFUSED,
  K_UNUSED,
  L_ALIVE,
  L_LEFT,
  L_LIVE_KIB,
  L_NEXT_ID,
  L_PENDING_KIND,
  L_PENDING_OLD,
  L_PENDING_SIZE,
  L_PROGRESS,
  L_SHARED,
  describeConfig,
  describeState,
  drawConfig,
  entry,
  fromOf,
  held,
  holderOf,
  kindOf,
  ledgerBytes,
  patternFault,
  sent,
  subSeed,
  type Backend,
  type BlockBatch,
  type FromSwarmWorker,
  type RunConfig,
  type SwarmThread,
  type SwarmWorkerData,
  type ToSwarmWorker,
  type WorkerFigures,
} from './swarm-protocol.js';
import { KillWindow, Stranded, liveByClass, nothingToReap, strandedMismatch, usableBound } from './swarm-stranded.js';

const MiB = 1 << 20;

/** What one run did. */
export interface RunFigures {
  seed: string;
  config: string;
  ok: boolean;
  reason?: string;
  ms: number;
  blocks: number;
  bytes: number;
  frees: number;
  reallocs: number;
  sent: number;
  kills: number;
  reaps: number;
  releaseLiveReaps: number;
  /** Killed workers reaped by `heap.watch` (the others by an explicit `reap`). */
  watchReaps: number;
  detaches: number;
  /** Workers whose thread ended by itself part-way. */
  departures: number;
  /** Blocks a departing worker had allocated that other agents held or had in transit when it ended. */
  leftLive: number;
  /** Blocks a departing worker had sent that were still in transit when it ended. */
  leftInTransit: number;
  /** Blocks freed (by workers or the main thread) after the worker that allocated them had left. */
  freedAfterLeft: number;
  /** 1 when the run filled its heap to the limit (see `Fill`), else 0. */
  fills: number;
  /** Blocks the fill got before `OUT_OF_MEMORY`. */
  fillBlocks: number;
  /** Bytes those blocks held. */
  fillBytes: number;
  /** Allocations refused with `OUT_OF_MEMORY` while the fill held the heap full (the fill's own included). */
  fullRefusals: number;
  /** Allocations refused with `OUT_OF_MEMORY` after the fill had given its blocks back (see swarm-worker.ts). */
  afterFillRefusals: number;
  died: number;
  diedBytes: number;
  /** pool_global: slabs whose blocks were all free that went back to the address space during the run. */
  slabsReturned: number;
  idles: number;
  waits: number;
  checks: number;
  mainFrees: number;
  quarantinedBytes: number;
}

export const hex = (n: number) => `0x${(n >>> 0).toString(16).padStart(8, '0')}`;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

class RunFailure extends Error {}

/** A worker and its messages, queued until asked for. */
class Agent {
  readonly worker: SwarmThread<PeerPort>;
  readonly queue: FromSwarmWorker[] = [];
  waiters: { kind: string; resolve: (m: FromSwarmWorker) => void }[] = [];
  agentId = 0;
  /** The key its agents record for their thread (what `watch` finds them by). */
  readonly thread: number;
  /** Still part of the run: not killed, not departed. */
  alive = true;
  killed = false;
  /** Asked to leave (it does no more operations); `departed` once its thread has ended. */
  leaving = false;
  departed = false;
  done = false;
  detached = false;
  figures: WorkerFigures | null = null;
  /** Resolves with the exit code. */
  readonly exited: Promise<number>;

  constructor(
    readonly index: number,
    data: SwarmWorkerData,
    onMessage: (a: Agent, m: FromSwarmWorker) => boolean,
    onFail: (message: string) => void,
  ) {
    this.worker = startSwarmWorker(data);
    this.thread = this.worker.thread;
    this.exited = new Promise((r) => this.worker.onExit((code) => r(code)));
    this.worker.onMessage((m: FromSwarmWorker) => {
      if (onMessage(this, m)) return;
      const k = this.waiters.findIndex((w) => w.kind === m.kind);
      if (k >= 0) this.waiters.splice(k, 1)[0]!.resolve(m);
      else this.queue.push(m);
    });
    this.worker.onError((e) => onFail(`worker ${index} threw: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));
    this.worker.onExit((code) => {
      if (this.alive && this.figures === null) onFail(`worker ${index} exited (code ${code}) before it finished`);
    });
  }

  next(kind: FromSwarmWorker['kind']): Promise<FromSwarmWorker> {
    const k = this.queue.findIndex((m) => m.kind === kind);
    if (k >= 0) return Promise.resolve(this.queue.splice(k, 1)[0]!);
    return new Promise((resolve) => this.waiters.push({ kind, resolve }));
  }

  send(m: ToSwarmWorker, transfer: PeerPort[] = []): void {
    this.worker.post(m, transfer);
  }
}

/** The module of `backend`'s build in `lib` (a folder, or a URL: a browser page serves the builds). */
export function libModule(lib: string, backend: Backend): string {
  const dir = /^(file|https?):/.test(lib) ? lib : new URL(`file://${lib.endsWith('/') ? lib : `${lib}/`}`).href;
  return new URL(`${backend.replace('_', '-')}.js`, dir.endsWith('/') ? dir : `${dir}/`).href;
}

/** Runs one seeded run. Never throws: a failure comes back in the figures. */
export async function runOne(config: RunConfig, lib: string, runTimeoutMs: number, log: (s: string) => void): Promise<RunFigures> {
  const t0 = Date.now();
  const fig: RunFigures = {
    seed: hex(config.seed),
    config: describeConfig(config),
    ok: false,
    ms: 0,
    blocks: 0,
    bytes: 0,
    frees: 0,
    reallocs: 0,
    sent: 0,
    kills: 0,
    reaps: 0,
    releaseLiveReaps: 0,
    watchReaps: 0,
    detaches: 0,
    departures: 0,
    leftLive: 0,
    leftInTransit: 0,
    freedAfterLeft: 0,
    fills: 0,
    fillBlocks: 0,
    fillBytes: 0,
    fullRefusals: 0,
    afterFillRefusals: 0,
    died: 0,
    diedBytes: 0,
    slabsReturned: 0,
    idles: 0,
    waits: 0,
    checks: 0,
    mainFrees: 0,
    quarantinedBytes: 0,
  };
  const mod = (await import(libModule(lib, config.backend))) as { createHeap(o: object): Heap };
  const heap = mod.createHeap({ maxBytes: config.heapBytes, profile: config.profile, watchWorkers: false }); // the run picks which workers to watch (below)
  const capacity = config.workers * config.ops + 64;
  const ledger = new SharedArrayBuffer(ledgerBytes(capacity));
  const L = new Int32Array(ledger);
  const agents: Agent[] = [];
  let failure: string | null = null;
  let failWake: (() => void) | null = null;
  const fail = (message: string) => {
    if (failure === null) failure = message;
    failWake?.();
  };
  /** Live blocks the dead took with them may be off by the operation each was in when it died. */
  const window = new KillWindow();
  const releasedLive = new Set<number>();
  /** Blocks of a worker reaped with releaseLive that lie in other agents' arenas (they stay live). */
  const keptLive = new Set<number>();
  const reaps: string[] = [];
  const departures: string[] = [];

  const mainFree = (b: BlockBatch) => {
    try {
      for (let i = 0; i < b.ids.length; i++) {
        const id = b.ids[i]!;
        const e = entry(id);
        const was = Atomics.compareExchange(L, e, sent(b.from, 0), held(0));
        if (was !== sent(b.from, 0)) {
          if (kindOf(was) === K_DIED) continue;
          throw new RunFailure(`main received block ${id} from agent ${b.from}, but the ledger says it is ${describeState(was)}`);
        }
        const bad = patternFault(heap.u8, b.ptrs[i]!, id, b.sizes[i]!);
        if (bad >= 0) throw new RunFailure(`block ${id} at ${b.ptrs[i]} lost its pattern at offset ${bad} when main received it from agent ${b.from}`);
        heap.free(b.ptrs[i]!);
        Atomics.sub(L, L_LIVE_KIB, Math.ceil(L[e + 2]! / 1024));
        if (Atomics.compareExchange(L, e, held(0), K_FREED) !== held(0)) throw new RunFailure(`block ${id} changed state while main freed it`);
        fig.mainFrees++;
        if (Atomics.load(L, L_LEFT + L[e + 1]!) === 1) fig.freedAfterLeft++;
      }
    } catch (e) {
      fail(e instanceof RunFailure ? e.message : `main thread: ${(e as Error).name} ${(e as { code?: string }).code ?? ''}: ${(e as Error).message}`);
    }
  };

  const onMessage = (a: Agent, m: FromSwarmWorker): boolean => {
    if (m.kind === 'blocks') {
      mainFree(m.batch);
      return true;
    }
    if (m.kind === 'fault') {
      fail(m.message);
      return true;
    }
    if (m.kind === 'done') a.done = true;
    if (m.kind === 'finished') a.figures = m.figures;
    if (m.kind === 'detached') {
      a.detached = true;
      a.done = true;
      fig.detaches++;
    }
    if (m.kind === 'leaving') a.leaving = true;
    if (m.kind === 'departed') a.figures = m.figures;
    return false;
  };

  /** Where each worker stood, for a run that timed out. */
  const standing = () =>
    agents
      .map((a) => `${a.index}: ${a.killed ? 'killed' : a.departed ? 'departed' : a.leaving && a.figures !== null ? 'departing (its thread has not ended)' : a.leaving ? `leaving${inbound(a.index)}` : a.detached ? 'detached' : a.done ? 'done' : 'running'} at op ${L[L_PROGRESS + a.index]}`)
      .join(', ');
  /** Blocks on their way to worker `w`, for a run that timed out while it was leaving. */
  const inbound = (w: number) => {
    const ids: string[] = [];
    for (let id = 1, n = Math.min(Atomics.load(L, L_NEXT_ID), capacity - 1); id <= n; id++) {
      const st = Atomics.load(L, entry(id));
      if (kindOf(st) === K_SENT && holderOf(st) === w && ids.length < 4) ids.push(`${id} ${describeState(st)}`);
    }
    return ids.length > 0 ? ` (blocks on their way to it: ${ids.join('; ')})` : '';
  };
  /** What the main thread is waiting for, for a run that timed out. */
  let phase = 'starting';
  const timer = setTimeout(() => fail(`the run took more than ${runTimeoutMs / 1000} s (main thread: ${phase}; workers ${standing()})`), runTimeoutMs);
  const failed = new Promise<void>((r) => (failWake = r));
  const guard = async <T>(p: Promise<T>): Promise<T> => {
    const r = await Promise.race([p, failed.then(() => undefined)]);
    if (failure !== null) throw new RunFailure(failure);
    return r as T;
  };
  const live = () => agents.filter((a) => a.alive);
  // A reap run by a watch happens in a worker's 'exit' event: what it throws would end the process.
  const onUncaught = (e: Error) => fail(`main thread, uncaught: ${e?.name} ${(e as { code?: string })?.code ?? ''}: ${e?.message}\n${e?.stack ?? ''}`);
  const stopCatching = catchUncaught(onUncaught);

  try {
    for (let w = 1; w <= config.workers; w++) {
      const data: SwarmWorkerData = { lib: libModule(lib, config.backend), handle: heap.handle, ledger, capacity, index: w, config };
      const a = new Agent(w, data, onMessage, fail);
      agents.push(a);
      // On pool_arena the workers are watched, but for two kinds: one whose kill is reaped explicitly (the
      // watch would reap it first), and a departing one, whose agent must be seen to leave by itself (a watch
      // would reap an agent that failed to). A worker that finishes and detaches leaves the watch nothing.
      const unwatched = config.kills.some((k) => k.worker === w && !k.watch) || config.departures.some((d) => d.worker === w);
      if (config.backend === 'pool_arena' && !unwatched && a.worker.watchable !== null) heap.watch(a.worker.watchable as Parameters<Heap['watch']>[0]);
    }
    for (const a of agents) {
      const m = (await guard(a.next('ready'))) as Extract<FromSwarmWorker, { kind: 'ready' }>;
      a.agentId = m.agentId;
    }
    const largeMax = heap.largeMax;
    // Whether a block of `usable` bytes lives in the heap's arenas or slabs, where its live bytes are counted: on the
    // arena backend a size up to largeMax whose span packs an arena badly gets an oversized mapping instead.
    const tier = (heap as unknown as { largeTier?: { inArena(size: number): boolean } }).largeTier;
    const countedLive = (usable: number): boolean => usable <= largeMax && (usable <= MiB || tier === undefined || tier.inArena(usable));
    // A mesh of ports, one per pair of workers.
    const ports = new Map<number, { index: number; port: PeerPort }[]>();
    for (const a of agents) ports.set(a.index, []);
    for (let i = 1; i <= config.workers; i++) {
      for (let j = i + 1; j <= config.workers; j++) {
        const [one, other] = openChannel();
        ports.get(i)!.push({ index: j, port: one });
        ports.get(j)!.push({ index: i, port: other });
      }
    }
    heap.startIdle();
    for (const a of agents) {
      const ps = ports.get(a.index)!;
      a.send({ cmd: 'peers', ports: ps }, ps.map((p) => p.port));
    }

    const dead: number[] = [];
    const gone: number[] = [];
    const pauseAll = async () => {
      const ws = live();
      for (const a of ws) a.send({ cmd: 'pause' });
      for (const a of ws) await guard(a.next('paused'));
    };
    const resumeAll = (except?: Agent) => {
      for (const a of live()) if (a !== except) a.send({ cmd: 'resume', dead: [...dead], gone: [...gone] });
    };
    const arenaEngine = () => (heap as unknown as { engine: { arenaOwnerOf(p: number): number; agentsOnThread(thread: number): number[] } }).engine;
    /** A worker that asked to leave: once nobody sends to it any more, it hands over and its thread ends by itself. */
    const depart = async (a: Agent) => {
      phase = `pausing the workers for worker ${a.index} to leave`;
      await pauseAll();
      gone.push(a.index);
      resumeAll(a);
      a.send({ cmd: 'depart', dead: [...dead], gone: [...gone] });
      phase = `waiting for worker ${a.index} to leave`;
      const m = (await guard(a.next('departed'))) as Extract<FromSwarmWorker, { kind: 'departed' }>;
      phase = `waiting for the thread of worker ${a.index} to end after it left`;
      const code = await guard(a.exited);
      phase = 'running';
      a.alive = false;
      a.departed = true;
      Atomics.store(L, L_LEFT + a.index, 1);
      fig.departures++;
      fig.leftLive += m.departure.ownedLive;
      fig.leftInTransit += m.departure.inTransit;
      const how = config.departures.find((d) => d.worker === a.index)!.how;
      if (code !== 0) throw new RunFailure(`worker ${a.index} left (${how}) with exit code ${code}`);
      // It took nothing with it: it held no block, and none was on its way to it (but from a killed worker).
      for (let id = 1, n = Math.min(Atomics.load(L, L_NEXT_ID), capacity - 1); id <= n; id++) {
        const st = Atomics.load(L, entry(id));
        const k = kindOf(st);
        if ((k === K_HELD || k === K_SENT) && holderOf(st) === a.index && !(k === K_SENT && agents[fromOf(st) - 1]?.killed)) {
          throw new RunFailure(`worker ${a.index} left (${how}), but block ${id} is ${describeState(st)}: lost`);
        }
      }
      // Its agent left the heap by itself: nothing of its thread is live for a watch or a reap to find.
      if (config.backend === 'pool_arena') {
        const still = arenaEngine().agentsOnThread(a.thread);
        if (still.length > 0) throw new RunFailure(`worker ${a.index} left (${how}), but its agent ${still.join(', ')} is still live in the heap`);
      }
      departures.push(`worker ${a.index} (agent ${a.agentId}) left at op ${L[L_PROGRESS + a.index]} (${how}): ${JSON.stringify(m.departure)}`);
    };
    /** Bytes of slabs quarantined by this agent's reaps (the arena's figure; the classic pool cannot reap). */
    const quarantinedBytes = () => {
      const s = heap.stats();
      return s.backend === 'pool_arena' ? s.quarantinedBytes : 0;
    };
    const kill = async (a: Agent, watched: boolean) => {
      a.alive = false;
      a.killed = true;
      const quarantinedBefore = quarantinedBytes();
      phase = `terminating worker ${a.index}`;
      await a.worker.terminate(); // a watch reaps it in the 'exit' event, before this resolves
      Atomics.store(L, L_ALIVE + a.index, 0);
      dead.push(a.index);
      fig.kills++;
      // The operation it was in, if any, for the live-bytes bounds.
      const op = Atomics.load(L, L_PENDING_KIND + a.index);
      const size = L[L_PENDING_SIZE + a.index]!;
      const old = L[L_PENDING_OLD + a.index]!;
      window.add(op, size, old, largeMax);
      phase = `pausing the workers to reap worker ${a.index}`;
      await pauseAll();
      phase = 'running';
      heap.stopIdle();
      const what = `worker ${a.index} (agent ${a.agentId}) killed at op ${L[L_PROGRESS + a.index]} in op ${op}`;
      const reaped = config.backend !== 'pool_global';
      if (!reaped) {
        const refused = nothingToReap(heap, a.agentId);
        if (refused !== null) throw new RunFailure(`${what}: ${refused}`);
        reaps.push(`${what}, not reaped (pool_global keeps no agent state)`);
      } else if (watched) await reapedByWatch(a, what, quarantinedBefore);
      else reapExplicitly(a, what);
      if (reaped) fig.reaps++;
      try {
        heap.check();
        fig.checks++;
      } catch (e) {
        throw new RunFailure(`check() after ${reaped ? 'reaping' : 'killing'} worker ${a.index} (killed at op ${L[L_PROGRESS + a.index]}, pending op ${op}): ${(e as Error).message}`);
      }
      heap.startIdle();
      resumeAll();
    };
    /**
     * The watch reaped the killed worker's agent when its thread ended (its live blocks stay live): nothing is left to
     * reap. In Node and Bun that is done when `terminate()` resolves; Deno emits the exit while the thread may still
     * run, and the watch's reap waits until the thread stops answering (refused as alive until then, up to a few
     * seconds): waited for here.
     */
    const reapedByWatch = async (a: Agent, what: string, quarantinedBefore: number) => {
      let again: string | null = null;
      let deferred = false; // refused as alive first: the thread still ran after its exit event
      for (const until = Date.now() + 10_000; ; ) {
        try {
          again = JSON.stringify(heap.reap(a.agentId));
          break;
        } catch (e) {
          if (e instanceof RangeError) break; // reaped by the watch
          if ((e as { code?: unknown }).code !== 'AGENT_ALIVE' || Date.now() > until) throw e;
          deferred = true;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      // Once the thread stopped answering, this reap and the watch's next look race: either may take it.
      if (deferred) again = null;
      if (again !== null) throw new RunFailure(`${what} and watched, but the watch did not reap it (an explicit reap did: ${again})`);
      const quarantined = quarantinedBytes() - quarantinedBefore;
      fig.quarantinedBytes += quarantined;
      fig.watchReaps++;
      reaps.push(`${what}, reaped by watch (quarantined ${quarantined} bytes)`);
    };
    /**
     * Reaps the killed worker's agent; with releaseLive when it never shared a block it owned and no worker
     * had left the heap before (detached or departed). releaseLive releases every live block of the arenas
     * the dead agent owned, and those include the arenas of an agent that left which it had taken over (by a
     * free that reached them) or adopted (by a tick): blocks other agents still hold or cache.
     */
    const reapExplicitly = (a: Agent, what: string) => {
      const someoneLeft = agents.some((x) => x.detached || x.departed);
      const releaseLive = Atomics.load(L, L_SHARED + a.index) === 0 && !someoneLeft;
      if (releaseLive) releasedLive.add(a.index);
      // releaseLive drops the live blocks of the dead agent's arenas. A block its cache handed it may lie in
      // another agent's arena: that one stays live (nothing records who holds it), so note where each is.
      const arenaOf = new Map<number, number>();
      if (releaseLive) {
        const engine = arenaEngine();
        const n = Math.min(Atomics.load(L, L_NEXT_ID), capacity - 1);
        for (let id = 1; id <= n; id++) {
          const e = entry(id);
          if (L[e + 1] === a.index && kindOf(L[e]!) !== K_FREED && kindOf(L[e]!) !== K_UNUSED && kindOf(L[e]!) !== K_REFUSED) arenaOf.set(id, engine.arenaOwnerOf(L[e + 3]! >>> 0));
        }
      }
      const report = heap.reap(a.agentId, { releaseLive });
      for (const [id, slot] of arenaOf) if (slot === 0 || slot !== report.ownerSlot) keptLive.add(id);
      if (releaseLive) fig.releaseLiveReaps++;
      fig.quarantinedBytes += report.quarantinedBytes;
      reaps.push(`${what}, reaped${releaseLive ? ' with releaseLive' : ''}: ${JSON.stringify(report)}`);
    };

    // Run: kill workers when they reach their operation, let workers that asked to leave go, until every
    // worker still in the run is done.
    const kills = [...config.kills];
    phase = 'running';
    while (true) {
      if (failure !== null) throw new RunFailure(failure);
      for (let k = kills.length - 1; k >= 0; k--) {
        const a = agents[kills[k]!.worker - 1]!;
        if (Atomics.load(L, L_PROGRESS + a.index) >= kills[k]!.atOp || a.done) {
          const { watch } = kills.splice(k, 1)[0]!;
          await kill(a, watch);
        }
      }
      for (const a of live()) if (a.leaving) await depart(a);
      if (kills.length === 0 && live().every((a) => a.done)) break;
      await guard(sleep(kills.length > 0 ? 1 : 10));
    }

    // Release: every worker frees what it holds; then wait until nothing is in flight.
    phase = 'releasing';
    for (const a of live()) a.send({ cmd: 'release' });
    for (const a of live()) await guard(a.next('released'));
    // Blocks die only with a killed worker: a worker that departed took nothing with it.
    const alive = (x: number) => x === 0 || !agents[x - 1]!.killed;
    const settleStart = Date.now();
    let quietSince = 0;
    while (true) {
      const n = Math.min(Atomics.load(L, L_NEXT_ID), capacity);
      let inFlight = 0;
      let first = '';
      for (let id = 1; id <= n && id < capacity; id++) {
        const s = Atomics.load(L, entry(id));
        const k = kindOf(s);
        const busy = (k === K_HELD && alive(holderOf(s))) || (k === K_SENT && alive(holderOf(s)) && alive(fromOf(s)));
        if (busy) {
          inFlight++;
          if (first === '') first = `block ${id} is ${describeState(s)}`;
        }
      }
      if (inFlight === 0) {
        if (quietSince === 0) quietSince = Date.now();
        if (Date.now() - quietSince > (dead.length > 0 ? 150 : 20)) break;
      } else quietSince = 0;
      if (Date.now() - settleStart > 20_000) throw new RunFailure(`${inFlight} blocks never arrived or were never freed after release (${first})`);
      await guard(sleep(10));
    }

    // Finish: every worker detaches and reports.
    phase = 'finishing';
    for (const a of live()) a.send({ cmd: 'finish' });
    for (const a of live()) {
      await guard(a.next('finished'));
    }
    await guard(Promise.all(live().map((a) => a.exited)));
    heap.stopIdle();

    // The ledger: every block freed exactly once, or written off with a dead worker.
    const n = Math.min(Atomics.load(L, L_NEXT_ID), capacity - 1);
    fig.blocks = n;
    const stranded = new Stranded();
    let unwritten = 0;
    for (let id = 1; id <= n; id++) {
      const e = entry(id);
      const s = Atomics.load(L, e);
      const k = kindOf(s);
      if (k === K_FREED || k === K_REFUSED) continue;
      const diedHere =
        (k === K_HELD && !alive(holderOf(s))) || (k === K_SENT && (!alive(holderOf(s)) || !alive(fromOf(s))));
      if (k === K_UNUSED && dead.length > 0) {
        unwritten++; // its id was taken by a worker killed before it recorded the block
        continue;
      }
      if (!diedHere) throw new RunFailure(`block ${id} is ${describeState(s)} at the end: lost (never freed)`);
      if (Atomics.compareExchange(L, e, s, K_DIED) !== s) throw new RunFailure(`block ${id} changed state at the end`);
      fig.died++;
      const owner = L[e + 1]!;
      const usable = L[e + 2]!;
      fig.diedBytes += usable;
      if (countedLive(usable) && (!releasedLive.has(owner) || keptLive.has(id))) stranded.add(usable);
    }
    if (unwritten > dead.length) throw new RunFailure(`${unwritten} block ids were taken but never recorded, with ${dead.length} workers killed`);
    // On pool_global an unrecorded id is inside the window already: the pending words say malloc before any
    // heap call, and the id is taken before them.
    if (unwritten > 0 && config.backend !== 'pool_global') window.bytesHigh += unwritten * usableBound(largeMax, largeMax);

    // The heap: every agent's arenas adopted by the main thread; check() passes; live bytes are what died.
    for (let i = 0; i < 3; i++) {
      heap.tick();
      heap.flushCache();
      heap.flush();
      heap.drain();
    }
    heap.returnIdle();
    try {
      heap.check();
      fig.checks++;
    } catch (e) {
      throw new RunFailure(`check() at the end: ${(e as Error).message}`);
    }
    const s = heap.stats();
    if (config.backend === 'pool_global') fig.slabsReturned = (heap as unknown as { pool: { returnedSlabs: number } }).pool.returnedSlabs;
    const expectedLive = stranded.bytes;
    const lo = expectedLive - window.bytesLow - fig.quarantinedBytes;
    const hi = expectedLive + window.bytesHigh + fig.quarantinedBytes;
    const mismatch = config.backend === 'pool_global' ? strandedMismatch(s, stranded, window) : null;
    if (mismatch !== null) throw new RunFailure(mismatch);
    if (s.liveBytes < lo || s.liveBytes > hi) {
      throw new RunFailure(
        `live bytes at the end: ${s.liveBytes}, expected ${expectedLive}` +
          (lo !== hi ? ` (${lo}..${hi} allowing for the operations the killed workers were in and quarantined slabs)` : '') +
          ` - ${s.liveBytes > expectedLive ? 'blocks were freed but never came back (leaked)' : 'blocks live in the ledger are free in the heap'}` +
          liveByClass(s, stranded.byClass),
      );
    }
    for (const a of agents) {
      const f = a.figures;
      if (f === null) continue;
      fig.bytes += f.bytes;
      fig.frees += f.frees;
      fig.reallocs += f.reallocs;
      fig.sent += f.sent;
      fig.idles += f.idles;
      fig.waits += f.waits;
      fig.freedAfterLeft += f.freedAfterLeft;
      fig.fillBlocks += f.fillBlocks;
      fig.fillBytes += f.fillBytes;
      fig.fullRefusals += f.fullRefusals;
      fig.afterFillRefusals += f.afterFillRefusals;
    }
    // The filler runs to the end, so its figures are here: a fill that got nothing did not fill anything.
    if (config.fill !== null) {
      if (fig.fillBlocks === 0) throw new RunFailure(`the fill by worker ${config.fill.worker} got no block before OUT_OF_MEMORY`);
      fig.fills = 1;
    }
    fig.ok = true;
  } catch (e) {
    fig.ok = false;
    fig.reason = e instanceof RunFailure ? e.message : failure ?? `${(e as Error).name}: ${(e as Error).message}\n${(e as Error).stack}`;
    if (reaps.length > 0) fig.reason += `\n  reaps: ${reaps.join('\n         ')}`;
    if (departures.length > 0) fig.reason += `\n  departures: ${departures.join('\n              ')}`;
  } finally {
    clearTimeout(timer);
    stopCatching();
    heap.stopIdle();
    await Promise.all(agents.filter((a) => a.alive).map((a) => a.worker.terminate().catch(() => 0)));
    fig.ms = Date.now() - t0;
  }
  return fig;
}
