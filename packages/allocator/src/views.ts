/**
 * What every backend's heap offers the same way: views of the heap that are always current (refreshed on
 * access when another agent grew the buffer), this agent's id, the idle tick run on the event loop, and the
 * agent's life: it leaves the heap by itself when its thread ends, `close()` (or `using`) leaves it at
 * once, and `watch(worker)` recovers a worker that was stopped from outside.
 */
import { HeapError, describeValue, onThreadExit, type AddressSpace, type ThreadEnd } from '@paddock/platform';
import { TICK_MIN_MS, type BrowserWorker, type HeapHandle, type WatchableWorker, type WatchOptions } from './types.js';

/** The heap handle format every backend writes. */
export const HANDLE_VERSION = 1;

/**
 * Checks that `handle` is a Paddock heap handle of this format made by `backend`.
 * @throws HeapError BAD_HANDLE naming what is wrong.
 */
export function checkHandle(handle: HeapHandle, backend: string): void {
  if (handle === null || typeof handle !== 'object' || handle.kind !== 'paddock-heap') {
    throw new HeapError('BAD_HANDLE', `not a Paddock heap handle: ${describeValue(handle)}`);
  }
  if (handle.version !== HANDLE_VERSION) {
    throw new HeapError('BAD_HANDLE', `heap handle version ${describeValue(handle.version)}, this build reads ${HANDLE_VERSION}`);
  }
  if (handle.backend !== backend) {
    throw new HeapError('BAD_HANDLE', `the heap uses backend ${describeValue(handle.backend)}; this heap API is ${backend}`);
  }
}

/** The error every use of a heap object gets once its agent has left the heap. */
export function closedError(): HeapError {
  return new HeapError('DETACHED', 'this heap object is closed (its agent left the heap); attach again to use the heap');
}

/**
 * Per heap object: the thread-exit hook to drop when it closes, and the workers it watches. Kept outside the
 * objects: the heap's hot paths read fields of the heap object, and V8 reads fewer fields faster.
 */
const exitHooks = new WeakMap<object, () => void>();
const watchedWorkers = new WeakMap<object, WeakSet<object>>();

export abstract class HeapViews {
  /** The address space underneath (views, reserve, commit). */
  abstract readonly space: AddressSpace;
  /** One idle visit; returns the milliseconds until the next. */
  abstract tick(): number;
  /** Whether the agent has left the heap (its idle timers then stop). */
  abstract readonly isDetached: boolean;
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
      if (this.isDetached) return;
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

  /** Forgets the thread-exit hook (the agent left some other way). */
  protected forgetThreadExit(): void {
    exitHooks.get(this)?.();
    exitHooks.delete(this);
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
   * Ties a worker to the agents it runs, so that nothing it held stays stranded when it goes.
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
    if (this.isDetached) throw closedError();
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
      (worker as WatchableWorker).once('exit', () => {
        if (!this.isDetached) this.reapThread(thread, { releaseLive });
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
        if (!this.isDetached) this.watchByLocks();
      };
    }
    return this.watchByLocks();
  }

  /** Whether {@link watch} reaps anything on this backend. */
  protected abstract get canReap(): boolean;

  /** Runs {@link tick} on this agent's event loop with unref'd timers (they never keep a process alive). */
  startIdle(): void {
    if (this.isDetached) throw closedError();
    if (this.idleTimer !== null) return;
    const visit = () => {
      this.idleTimer = null;
      if (this.isDetached) return;
      this.idleTimer = setTimeout(visit, this.tick());
      (this.idleTimer as { unref?: () => void }).unref?.();
    };
    this.idleTimer = setTimeout(visit, TICK_MIN_MS);
    (this.idleTimer as { unref?: () => void }).unref?.();
  }

  /** Stops the idle timers. */
  stopIdle(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** This agent's id in the heap (what `reap` takes for an agent that died). */
  get agentId(): number {
    return this.space.agentId;
  }
  /** Bytes view of the heap, current (refreshed if another agent grew the buffer). */
  get u8(): Uint8Array {
    if (this.isDetached) throw closedError();
    this.space.refresh();
    return this.space.u8;
  }
  /** Int32 view of the heap, current. Index with `ptr >>> 2`. */
  get i32(): Int32Array {
    if (this.isDetached) throw closedError();
    this.space.refresh();
    return this.space.i32;
  }
  /** Uint32 view of the heap, current. */
  get u32(): Uint32Array {
    if (this.isDetached) throw closedError();
    this.space.refresh();
    return this.space.u32;
  }
  /** Float64 view of the heap, current. Index with `ptr >>> 3`. */
  get f64(): Float64Array {
    if (this.isDetached) throw closedError();
    this.space.refresh();
    return this.space.f64;
  }
  /** A DataView over the heap, current (the same object until the buffer grows). */
  get view(): DataView {
    if (this.isDetached) throw closedError();
    this.space.refresh();
    const bytes = this.space.viewBytes;
    if (this.dataView === null || this.dataView.byteLength !== bytes) this.dataView = new DataView(this.space.buffer, 0, bytes);
    return this.dataView;
  }
}
