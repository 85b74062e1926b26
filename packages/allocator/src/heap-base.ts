/**
 * What every backend's heap does the same way, written once in `HeapBase`: the argument checks and refusals
 * they share (a closed heap object refuses every use with `DETACHED`), `calloc` over the backend's `malloc`,
 * the bounded `wait` and `waitAsync`, views of the heap that are always current (refreshed on access when another agent grew
 * the buffer), this agent's id, the idle tick run on the event loop, and the agent's life: it leaves the heap
 * by itself when its thread ends, `close()` (or `using`) leaves it at once, and a worker stopped from outside is
 * recovered at its exit by the heap objects of the thread that created it (they watch its workers by default,
 * worker-watch.ts) or by `watch(worker)`. The backends keep what differs: malloc, free and realloc (the fast
 * paths stay methods of the concrete class, so their call sites stay monomorphic), and what to do around a wait.
 */
import type { ArenaSnapshot } from '@paddock/arena';
import type { MappingPicture } from '@paddock/large';
import { HeapError, agentCanBlock, describeValue, now, onThreadExit, pageReturnAddon, rss, type AddressSpace, type PageReturnAddon, type PageReturnMode, type ThreadEnd } from '@paddock/platform';
import { Scope } from './scope.js';
import { watchThenWait } from './wait-watch.js';
import { SNAPSHOT_VERSION, type HeapSnapshot, type SnapshotClass } from './snapshot.js';
import type { HeapStats } from './stats.js';
import { HeapViews } from './views.js';
import { TICK_MAX_MS, TICK_MIN_MS, type AttachOptions, type BackgroundErrorHandler, type BackgroundWork, type BrowserWorker, type Heap, type WatchableWorker, type WatchOptions } from './types.js';
import { warnOnce } from './warn-once.js';
import { threadExited, threadWatched, unwatchThreadWorkers, watchThreadWorkers } from './worker-watch.js';

/** How often an exited worker's thread that still answers is looked at again, and for how long at most (ms). */
const EXIT_RECHECK_MS = 50;
const EXIT_PATIENCE_MS = 30_000;

export { watchedThreadAlive } from './worker-watch.js';

/** The error every use of a heap object gets once its agent has left the heap. */
export function closedError(): HeapError {
  return new HeapError('DETACHED', 'this heap object is closed (its agent left the heap); attach again to use the heap');
}

/** The addon behind a page-return mode: the one loaded when pages go back, null when they do not. */
export function addonOf(mode: PageReturnMode): PageReturnAddon {
  return mode === 'native' ? pageReturnAddon() : null;
}

/**
 * The bytes `calloc(count, size)` asks for, checked: both non-negative integers, the product within `maxBytes`.
 * @throws RangeError otherwise.
 */
export function callocBytes(count: number, size: number, maxBytes: number): number {
  if ((count >>> 0) !== count) throw new RangeError(`calloc count must be a non-negative integer, got ${describeValue(count)}`);
  if ((size >>> 0) !== size) throw new RangeError(`calloc size must be a non-negative integer, got ${describeValue(size)}`);
  const total = count * size;
  if (total > maxBytes) throw new RangeError(`calloc(${count}, ${size}) asks for ${total} bytes, more than maxBytes ${maxBytes}`);
  return total;
}

/** Applies what of `options` belongs to the heap object (its `onError`, checked already); returns `heap`. */
export function withOptions<H extends HeapBase>(heap: H, options: AttachOptions): H {
  if (options.onError !== undefined) heap.onError = options.onError;
  if (options.watchWorkers !== false) heap.watchThreadWorkers();
  return heap;
}

/** Whether `buffer` is shared memory (a SharedArrayBuffer; a shared wasm memory's buffer is one too). */
function isShared(buffer: ArrayBufferLike): boolean {
  return typeof SharedArrayBuffer !== 'undefined' && buffer instanceof SharedArrayBuffer;
}

/**
 * Per heap object: the thread-exit hook to drop when it closes, and the workers it watches. Kept outside the
 * objects: the heap's hot paths read fields of the heap object, and V8 reads fewer fields faster.
 */
const exitHooks = new WeakMap<object, () => void>();
const watchedWorkers = new WeakMap<object, WeakSet<object>>();

/** Per heap object: the handler set with `onError` (none: the default). */
const errorHandlers = new WeakMap<object, BackgroundErrorHandler | null>();

/** What every backend's heap does the same way (see above; typed views and strings: views.ts); each backend's heap class extends it. */
export abstract class HeapBase extends HeapViews {
  /** The address space underneath (views, reserve, commit). */
  abstract override readonly space: AddressSpace;
  /**
   * Whether the agent has left the heap. Declared here, assigned by each backend's constructor where its field
   * layout wants it: V8 lays fields out in the order they are first assigned, and a base constructor assigns
   * before the backend's (the arena's malloc and free read their fields first).
   */
  protected declare detached: boolean;
  /** Allocates `size` bytes: see the backends. */
  abstract override malloc(size: number): number;
  /** One idle visit; returns the milliseconds until the next. */
  abstract tick(): number;
  /** This agent's figures: see the backends. */
  abstract stats(): HeapStats;
  /** The backend this heap object runs. */
  abstract readonly backend: string;
  /** Leaves the heap: see the backends. */
  abstract detach(): void;
  /** The thread is ending by an exception nobody caught: leave what there is for a reaper (backend's choice). */
  protected abstract threadCrashed(): void;
  /** Reaps the agents that ran on the thread with key `thread` and did not leave; returns how many. */
  protected abstract reapThread(thread: number, options: WatchOptions): number;
  /** Browsers: starts waiting on other agents' locks to reap those that go; false where it cannot. */
  protected abstract watchByLocks(): boolean;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private dataView: DataView | null = null;

  /**
   * Called once by each backend's constructor: in a Node worker, this agent leaves the heap when its thread
   * ends by itself (the event loop runs dry, `process.exit()`, the port closes): everything it holds is
   * flushed, its empty arenas go back and the rest is handed over. A thread ended by an uncaught exception is
   * left for a reaper instead (it may have stopped half way through an update), see {@link watch}.
   */
  protected leaveWithThread(): void {
    const unhook = onThreadExit((end: ThreadEnd) => {
      exitHooks.delete(this);
      if (this.detached) return;
      try {
        if (end === 'crashed') this.threadCrashed();
        else this.detach();
      } catch {
        // The thread is ending and nobody could catch this (a detach that found the heap corrupt): what could
        // not be handed over is left to be reaped, with every check, as if the thread had crashed.
        try {
          this.threadCrashed();
        } catch {
          // Nothing more can be done from a thread that is ending; `watch` still reaps it.
        }
      }
    });
    exitHooks.set(this, unhook);
  }

  /**
   * Where errors of this heap object's background work go (see {@link Heap.onError}): a visit of the idle tick that
   * throws, a reap that `watch` starts when a worker exits (or, in a browser, when an agent's lock goes). null (the
   * default): a console warning, once per error code. The work goes on either way: the tick is rescheduled.
   */
  get onError(): BackgroundErrorHandler | null {
    // A heap wrapped by the instrumented builds (Object.create over it) finds the handler set on the heap itself.
    for (let o: object | null = this; o !== null; o = Object.getPrototypeOf(o) as object | null) {
      const handler = errorHandlers.get(o);
      if (handler !== undefined) return handler;
    }
    return null;
  }

  set onError(handler: BackgroundErrorHandler | null | undefined) {
    if (handler != null && typeof handler !== 'function') throw new TypeError(`onError must be a function or null, got ${describeValue(handler)}`);
    errorHandlers.set(this, handler ?? null);
  }

  /**
   * Hands an error of background work (`during`) to the {@link onError} handler, or to the default warning. Never
   * throws: a handler that throws is reported by the default warning in its place.
   */
  protected reportError(err: unknown, during: BackgroundWork): void {
    const handler = this.onError;
    if (handler !== null) {
      try {
        handler(err, during);
        return;
      } catch (thrown) {
        err = thrown;
      }
    }
    try {
      warnOnce(this, err, during, this.space.agentId);
    } catch {
      // Nothing more can be said from here.
    }
  }

  /** Forgets the thread-exit hook (the agent left some other way). */
  protected forgetThreadExit(): void {
    exitHooks.get(this)?.();
    exitHooks.delete(this);
    unwatchThreadWorkers(this);
  }

  /**
   * @internal (the `watchWorkers` option, on by default) Watches every Worker this thread creates from now on, as
   * {@link watch} would (worker-watch.ts): Node, Bun and Deno. Nothing on a backend that cannot reap.
   */
  watchThreadWorkers(): void {
    if (this.canReap) watchThreadWorkers(this);
  }

  /**
   * @internal worker-watch.ts: a Worker this thread created (key `thread`) has exited; its agents that did not leave
   * are reaped, live blocks kept. Not one this heap object watches itself: its own watch reaps it, with its options.
   */
  workerExited(thread: number, worker: object): void {
    if (this.detached || watchedWorkers.get(this)?.has(worker) === true) return;
    this.reapExited(thread, {}, 0);
  }

  /**
   * Reaps what an exited worker's thread (key `thread`) left in the heap. A worker's `exit` event says its thread
   * has stopped in Node and Bun, but Deno emits it while a terminated thread may still be running: an agent of the
   * thread that still answers a ping (presence.ts) is looked at again every {@link EXIT_RECHECK_MS} ms, and reaped
   * once it no longer answers (reported through `onError` if it still does after {@link EXIT_PATIENCE_MS} ms).
   */
  private reapExited(thread: number, options: WatchOptions, waited: number): void {
    if (this.detached) return;
    try {
      if (this.threadAnswers(thread)) {
        if (waited >= EXIT_PATIENCE_MS) {
          throw new HeapError('AGENT_ALIVE', `a worker (threadId ${thread - 1}) exited, but an agent of its thread still answers after ${waited} ms: not reaped`);
        }
        const t = setTimeout(() => this.reapExited(thread, options, waited + EXIT_RECHECK_MS), EXIT_RECHECK_MS);
        (t as { unref?: () => void }).unref?.();
        return;
      }
      this.reapThread(thread, options);
    } catch (err) {
      this.reportError(err, 'reap');
    }
  }

  /** Whether an agent of thread `thread` that has not left still answers a ping (the backends that reap say). */
  protected threadAnswers(_thread: number): boolean {
    return false;
  }

  /**
   * Leaves the heap now: the same as {@link detach}. Calling it again does nothing; every other use of this
   * object afterwards throws a `HeapError` with code `DETACHED`.
   */
  close(): void {
    this.detach();
  }

  /** `using heap = attachHeap(handle)` closes the heap at the end of the block. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Ties a worker to the agents it runs, so that nothing it held stays stranded when it goes. In Node, Bun and
   * Deno a heap object already does this for every worker its thread creates (the `watchWorkers` option, on by
   * default): call it for `releaseLive`, for a worker another thread created, or in a browser.
   *
   * Node (`worker_threads` Worker): when `worker` exits for any reason (`terminate()`, an uncaught
   * exception, `process.exit`), every agent of its thread that did not leave the heap by itself is reaped by
   * this agent (its arenas checked and adopted, its cache and chains sent home, its inbox drained). Its live
   * blocks stay live (another agent may hold them) unless `releaseLive` is set.
   *
   * Browser (Web Worker): a Web Worker has no exit event. Every agent in a browser holds a Web Lock while it
   * is attached, which the browser lets go when the worker is terminated or closes itself; from this call on,
   * this agent waits on those locks and reaps each agent whose lock goes while it is still attached (live
   * blocks kept; `releaseLive` is refused there, since a lock does not say which worker an agent ran on). The
   * worker's `terminate()` also makes it look for agents that attached since.
   *
   * Watching a worker twice does nothing more. Returns whether this heap will reap (false on the classic
   * pool, which cannot, and in a host with neither exit events nor Web Locks).
   * @throws TypeError when `worker` is neither; HeapError DETACHED once closed.
   */
  watch(worker: WatchableWorker | BrowserWorker, options: WatchOptions = {}): boolean {
    if (this.detached) throw closedError();
    if (options === null || typeof options !== 'object') throw new TypeError('watch options must be an object');
    const w = worker as { threadId?: unknown; once?: unknown; terminate?: unknown };
    if (w === null || typeof w !== 'object') throw new TypeError(`watch takes a Worker, got ${describeValue(worker)}`);
    let watched = watchedWorkers.get(this);
    if (watched === undefined) watchedWorkers.set(this, (watched = new WeakSet()));
    if (typeof w.threadId === 'number' && typeof w.once === 'function') {
      if (w.threadId < 0) throw new RangeError('watch: the worker has exited already (its threadId is -1)');
      if (watched.has(worker)) return this.canReap;
      watched.add(worker);
      const thread = w.threadId + 1; // the key the worker's agents recorded (see threadKey)
      const releaseLive = options.releaseLive === true;
      threadWatched(thread);
      (worker as WatchableWorker).once('exit', () => {
        threadExited(thread);
        this.reapExited(thread, { releaseLive }, 0);
      });
      return this.canReap;
    }
    if (typeof w.terminate !== 'function') throw new TypeError(`watch takes a Worker, got ${describeValue(worker)}`);
    if (options.releaseLive === true) {
      throw new RangeError('watch: releaseLive needs a worker_threads Worker (a Web Worker does not say which agent it ran)');
    }
    if (!watched.has(worker)) {
      watched.add(worker);
      const terminate = w.terminate as () => void;
      (worker as BrowserWorker).terminate = () => {
        terminate.call(worker);
        if (!this.detached) this.watchByLocks();
      };
    }
    return this.watchByLocks();
  }

  /** Whether {@link watch} reaps anything on this backend. */
  protected abstract get canReap(): boolean;

  /** Runs {@link tick} on this agent's event loop with unref'd timers (they never keep a process alive). */
  startIdle(): void {
    if (this.detached) throw closedError();
    if (this.idleTimer !== null) return;
    const visit = () => {
      this.idleTimer = null;
      if (this.detached) return;
      // A visit that throws (a corruption it found, say) is reported and the tick goes on: nothing of it may end the
      // process from a timer, and the next visit comes after the longest delay.
      let delay = TICK_MAX_MS;
      try {
        delay = this.tick();
      } catch (err) {
        this.reportError(err, 'idle tick');
      }
      if (this.detached) return;
      this.idleTimer = setTimeout(visit, delay);
      (this.idleTimer as { unref?: () => void }).unref?.();
      // The backend may wake the next visit early (the arena: when frees arrive in its empty inbox).
      try {
        this.armIdleWake(delay, () => {
          if (this.idleTimer === null) return;
          clearTimeout(this.idleTimer);
          visit();
        });
      } catch (err) {
        this.reportError(err, 'idle tick');
      }
    };
    this.idleTimer = setTimeout(visit, TICK_MIN_MS);
    (this.idleTimer as { unref?: () => void }).unref?.();
  }

  /** Stops the idle timers. */
  stopIdle(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    this.disarmIdleWake();
  }

  /**
   * Between two idle visits `delay` ms apart: a backend may call `wake` to run the next visit early (at most
   * once; a later arming or {@link disarmIdleWake} cancels it). None does by default.
   */
  protected armIdleWake(_delay: number, _wake: () => void): void {}

  /** Cancels what {@link armIdleWake} armed. */
  protected disarmIdleWake(): void {}

  /** Whether {@link detach} has run (or the thread ended): every use but `close` then throws `DETACHED`. */
  get isDetached(): boolean {
    return this.detached;
  }

  /**
   * Allocates `count * size` bytes, zeroed.
   * @throws RangeError when either is not a non-negative integer or the product is above what the heap serves.
   */
  calloc(count: number, size: number): number {
    if (this.detached) throw closedError();
    const total = callocBytes(count, size, this.space.maxBytes);
    const p = this.malloc(total);
    this.space.covers(p + total);
    this.space.u8.fill(0, p, p + total);
    return p;
  }

  /**
   * Opens a scope: a bump allocator over chunks of this heap whose memory all goes back at once when it
   * closes (`using scope = heap.scope()`, or `scope.close()`); see scope.ts. A scope opened while another of
   * this heap object is open nests in it.
   * @throws HeapError DETACHED once closed.
   */
  scope(): Scope {
    if (this.detached) throw closedError();
    return new Scope(this as unknown as Heap);
  }

  /**
   * A description of the whole heap, versioned and structured-cloneable, taken from this agent without stopping
   * the others (see snapshot.ts: what other live agents own is marked as read while it changed).
   * @throws HeapError DETACHED once closed.
   */
  snapshot(): HeapSnapshot {
    if (this.detached) throw closedError();
    const started = now();
    const picture = this.heapPicture();
    const space = this.space;
    let classes: SnapshotClass[];
    let liveBytes: number;
    let racy: boolean;
    let pageReturn = space.pageReturn;
    if (picture === null) {
      // Backends without a unit map report their classes through stats(); the arena's picture has them already.
      const stats = this.stats();
      classes = stats.perClass.map((c) => ({ size: c.size, live: c.live, free: c.free, liveBytes: c.live * c.size }));
      liveBytes = stats.liveBytes;
      racy = space.agentsOpened > 1;
      pageReturn = stats.pageReturn;
    } else {
      classes = picture.arena.classes.map((c) => ({ size: c.size, live: c.live, free: c.free, liveBytes: c.liveBytes }));
      liveBytes = classes.reduce((n, c) => n + c.liveBytes, 0);
      for (const m of picture.mappings) if (m.state === 'live') liveBytes += m.payloadBytes;
      racy = picture.arena.agents.some((a) => a.state === 'live' && !a.self);
    }
    space.refresh();
    return {
      version: SNAPSHOT_VERSION,
      backend: this.backend,
      takenAt: Date.now(),
      takenBy: this.agentId,
      tookMs: now() - started,
      racy,
      maxBytes: space.maxBytes,
      bufferBytes: space.u8.length,
      reservedBytes: space.reservedBytes,
      committedBytes: space.committedBytes,
      residentBytes: rss(),
      pageReturn,
      liveBytes,
      classes,
      arena: picture === null ? null : picture.arena,
      mappings: picture === null ? [] : picture.mappings,
    };
  }

  /** The unit map and mappings a snapshot carries; null on a backend that has none. */
  protected heapPicture(): { arena: ArenaSnapshot; mappings: MappingPicture[] } | null {
    return null;
  }

  /**
   * Blocks on `Atomics.wait(array, index, value, timeoutMs)` the way a Paddock agent should: what other agents
   * wait for is sent home first (so no block waits on a sleeping agent), the wait is bounded at 500 ms, what
   * arrived meanwhile is taken in after waking, and a wait that times out runs the idle return (the arena: the
   * first since the last allocation). Where the process can run two threads at once, it watches the word for up
   * to 20 µs before it sleeps (wait-watch.ts): a sleep and its wake cost more than that.
   * Returns what `Atomics.wait` returned ('ok' also when the word changed during the watch).
   * @throws HeapError CANNOT_BLOCK on a thread that may not block (a browser window's main thread: use
   * {@link waitAsync}); TypeError when `array` is not an Int32Array over shared memory; RangeError for an index
   * outside it or a timeout that is not a number >= 0. Nothing is flushed when it throws.
   */
  wait(array: Int32Array, index: number, value: number, timeoutMs: number = TICK_MAX_MS): 'ok' | 'not-equal' | 'timed-out' {
    this.checkWait(array, index, timeoutMs);
    if (!agentCanBlock()) {
      throw new HeapError('CANNOT_BLOCK', 'this thread may not block (Atomics.wait is not allowed on a browser window\'s main thread): use heap.waitAsync');
    }
    this.beforeWait();
    const result = watchThenWait(array, index, value, Math.min(timeoutMs, TICK_MAX_MS));
    this.afterWait(result === 'timed-out');
    return result;
  }

  /**
   * {@link wait} without blocking the thread, for any agent and the only one a browser window's main thread
   * may use: the same flush first, the same 500 ms bound, and after waking (the promise settles on this agent's
   * event loop) the same drain and idle return, done before the promise resolves. Resolves to what
   * `Atomics.waitAsync` settles with; a value that does not match resolves at once (`not-equal`). If this heap
   * object is closed while it waits, it resolves without touching the heap.
   * @throws HeapError UNSUPPORTED where the host has no `Atomics.waitAsync`; the argument errors of {@link wait}.
   */
  waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number = TICK_MAX_MS): Promise<'ok' | 'not-equal' | 'timed-out'> {
    this.checkWait(array, index, timeoutMs);
    const waitAsync = (Atomics as { waitAsync?: typeof Atomics.waitAsync }).waitAsync;
    if (typeof waitAsync !== 'function') throw new HeapError('UNSUPPORTED', 'this host has no Atomics.waitAsync');
    this.beforeWait();
    const pending = waitAsync(array, index, value, Math.min(timeoutMs, TICK_MAX_MS));
    if (!pending.async) {
      this.afterWait(pending.value === 'timed-out');
      return Promise.resolve(pending.value);
    }
    return pending.value.then((result) => {
      if (!this.detached) this.afterWait(result === 'timed-out');
      return result;
    });
  }

  /** The checks both waits make before anything changes. */
  private checkWait(array: Int32Array, index: number, timeoutMs: number): void {
    if (this.detached) throw closedError();
    if (!(array instanceof Int32Array) || !isShared(array.buffer)) throw new TypeError('a wait needs an Int32Array over a SharedArrayBuffer or shared wasm memory');
    if ((index >>> 0) !== index || index >= array.length) throw new RangeError(`index must be an integer from 0 to ${array.length - 1}, got ${describeValue(index)}`);
    if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be a non-negative number, got ${describeValue(timeoutMs)}`);
  }

  /** Before a {@link wait}: sends home what other agents may be waiting for. */
  protected abstract beforeWait(): void;
  /** After a {@link wait}: takes in what arrived, and after one that timed out runs the idle return if due. */
  protected abstract afterWait(timedOut: boolean): void;

  /** This agent's id in the heap (what `reap` takes for an agent that died). */
  get agentId(): number {
    return this.space.agentId;
  }
  /** Bytes view of the heap, current (refreshed if another agent grew the buffer). */
  get u8(): Uint8Array {
    if (this.detached) throw closedError();
    this.space.refresh();
    return this.space.u8;
  }
  /** Int32 view of the heap, current. Index with `ptr >>> 2`. */
  get i32(): Int32Array {
    if (this.detached) throw closedError();
    this.space.refresh();
    return this.space.i32;
  }
  /** Uint32 view of the heap, current. */
  get u32(): Uint32Array {
    if (this.detached) throw closedError();
    this.space.refresh();
    return this.space.u32;
  }
  /** Float64 view of the heap, current. Index with `ptr >>> 3`. */
  get f64(): Float64Array {
    if (this.detached) throw closedError();
    this.space.refresh();
    return this.space.f64;
  }
  /** A DataView over the heap, current (the same object until the buffer grows). */
  get view(): DataView {
    if (this.detached) throw closedError();
    this.space.refresh();
    const bytes = this.space.viewBytes;
    if (this.dataView === null || this.dataView.byteLength !== bytes) this.dataView = new DataView(this.space.buffer, 0, bytes);
    return this.dataView;
  }
}
