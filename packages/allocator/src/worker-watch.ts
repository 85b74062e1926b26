/**
 * Watching the workers a thread creates without being asked. Node, Bun and Deno emit `process.on('worker', w)` on
 * a thread for every Worker that thread creates (a pool's included), and then the Worker's `exit` event when it has
 * stopped, however it stopped (`terminate()` included). A thread with at least one heap object that watches keeps
 * one `worker` listener (not one per heap object; a listener on `process` keeps nothing alive), and on each such
 * Worker one `exit` listener, which hands the exited thread's key to every heap object of the thread still
 * watching: each reaps the agents that thread left in its heap (none, for a worker that never attached). From the
 * `worker` event to the `exit` event the thread counts as alive, so `reap` refuses its agents. A worker created by
 * a worker is its parent thread's to watch (the event fires on the thread that created it). Browsers emit nothing
 * of the kind: there `heap.watch(worker)` waits on the agents' Web Locks, as before.
 */

/** What the watcher asks of a heap object (HeapBase). */
export interface WorkerWatcher {
  readonly isDetached: boolean;
  /** A worker this thread created has exited: reap what its thread (key `thread`) left in this heap. */
  workerExited(thread: number, worker: object): void;
}

interface ProcessEvents {
  on(event: 'worker', listener: (worker: unknown) => void): unknown;
  off?(event: 'worker', listener: (worker: unknown) => void): unknown;
  removeListener?(event: 'worker', listener: (worker: unknown) => void): unknown;
}

interface ExitingWorker {
  readonly threadId: number;
  once(event: 'exit', listener: () => void): unknown;
}

/** This thread's `process`, where it emits `worker` events (Node, Bun, Deno), else null (a browser). */
function processEvents(): ProcessEvents | null {
  const p = (globalThis as { process?: ProcessEvents & { versions?: { node?: unknown } } }).process;
  return p !== undefined && typeof p.on === 'function' && typeof p.versions?.node === 'string' ? p : null;
}

/**
 * The heap objects of this thread that watch, held weakly: a heap object nobody refers to any more is not kept
 * alive by watching (it is dropped at the next worker event).
 */
const watchers = new Set<WeakRef<WorkerWatcher>>();
const refs = new WeakMap<WorkerWatcher, WeakRef<WorkerWatcher>>();
let listening: ProcessEvents | null = null;

/**
 * Thread keys (see the platform's `threadKey`) of workers this thread created or a heap object of it watches, and
 * whose exit has not come: their agents are alive, whatever else says (see `reap`). Counted: an explicit watch and
 * the thread's watch may both hold one key.
 */
const liveThreads = new Map<number, number>();

/** Counts thread `thread` as alive until {@link threadExited}. */
export function threadWatched(thread: number): void {
  liveThreads.set(thread, (liveThreads.get(thread) ?? 0) + 1);
}

/** Undoes one {@link threadWatched}. */
export function threadExited(thread: number): void {
  const n = (liveThreads.get(thread) ?? 0) - 1;
  if (n > 0) liveThreads.set(thread, n);
  else liveThreads.delete(thread);
}

/** Whether `thread` is the key of a worker watched from this thread that has not exited. */
export function watchedThreadAlive(thread: number): boolean {
  return liveThreads.has(thread);
}

/** The heap objects still watching, dropping those closed or collected. */
function liveWatchers(): WorkerWatcher[] {
  const live: WorkerWatcher[] = [];
  for (const ref of watchers) {
    const w = ref.deref();
    if (w === undefined || w.isDetached) watchers.delete(ref);
    else live.push(w);
  }
  return live;
}

/** The `worker` listener: ties one exit listener to the new Worker, if anything here still watches. */
function onWorker(worker: unknown): void {
  if (liveWatchers().length === 0) {
    stopListening();
    return;
  }
  const w = worker as Partial<ExitingWorker> | null;
  if (w === null || typeof w !== 'object' || typeof w.threadId !== 'number' || typeof w.once !== 'function') return;
  if (w.threadId < 0) return; // it has exited already (Node reads -1 then): its exit event came and went
  const thread = w.threadId + 1; // the key its agents record (threadKey): read now, before it exits
  threadWatched(thread);
  w.once('exit', () => {
    threadExited(thread);
    for (const heap of liveWatchers()) heap.workerExited(thread, w);
    if (watchers.size === 0) stopListening();
  });
}

function stopListening(): void {
  if (listening === null) return;
  const p = listening;
  listening = null;
  if (typeof p.off === 'function') p.off('worker', onWorker);
  else p.removeListener?.('worker', onWorker);
}

/** Starts watching, for `heap`, the workers this thread creates from now on. Returns false where the host emits no `worker` event. */
export function watchThreadWorkers(heap: WorkerWatcher): boolean {
  const p = processEvents();
  if (p === null) return false;
  if (!refs.has(heap)) {
    const ref = new WeakRef(heap);
    refs.set(heap, ref);
    watchers.add(ref);
  }
  if (listening === null) {
    listening = p;
    p.on('worker', onWorker);
  }
  return true;
}

/** Stops watching for `heap` (it closed); the `worker` listener goes with the last heap object that watched. */
export function unwatchThreadWorkers(heap: WorkerWatcher): void {
  const ref = refs.get(heap);
  if (ref === undefined) return;
  refs.delete(heap);
  watchers.delete(ref);
  liveWatchers();
  if (watchers.size === 0) stopListening();
}

/** @internal for tests: how many heap objects of this thread watch, and whether the `worker` listener is on. */
export function threadWatchState(): { watchers: number; listening: boolean } {
  return { watchers: liveWatchers().length, listening: listening !== null };
}
