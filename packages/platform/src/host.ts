/**
 * What the host gives us beyond the buffer: the native page-return addon (Node only), resident memory,
 * a monotonic clock. Node modules are reached through `process.getBuiltinModule`, so this file loads in a
 * browser too, where the addon and RSS are simply absent.
 */
import { HeapError, describeValue } from './errors.js';

/** The native addon's surface. */
export interface NativePageReturn {
  /** Returns the page-aligned part of [offset, offset + length) of `view` to the OS; gives the bytes returned. */
  discard(view: Uint8Array, offset: number, length: number): number;
  /** The OS page size. */
  pageSize: number;
}

interface NodeProcess {
  getBuiltinModule?: (name: string) => unknown;
  on?: (event: string, listener: (...args: unknown[]) => void) => unknown;
  memoryUsage?: { rss?: () => number };
  env?: Record<string, string | undefined>;
  platform?: string;
  arch?: string;
}

const nodeProcess: NodeProcess | undefined = (globalThis as { process?: NodeProcess }).process;

let nativeLoaded = false;
let native: NativePageReturn | null = null;
let nativeLoadError: string | null = null;

/**
 * Where the page-return addon came from: `'prebuilt'`, the binary the package ships for this platform
 * (`prebuilds/<platform>-<arch>/node.napi.node`, no compiler needed); `'built'`, the one compiled from source at
 * install (`build/Release`); null when neither loads (decommit is bookkeeping only).
 */
export type PageReturnAddon = 'prebuilt' | 'built' | null;
let nativeFrom: PageReturnAddon = null;

/**
 * The page-return addon, or null when it is not built, cannot load, is turned off with
 * `PADDOCK_PAGE_RETURN=none`, or the host is not Node. The prebuilt binary is tried first, then the one built
 * from source; `PADDOCK_PAGE_RETURN=prebuilt` or `=built` tries only that one.
 */
export function loadNativePageReturn(): NativePageReturn | null {
  if (nativeLoaded) return native;
  nativeLoaded = true;
  if (!nodeProcess || typeof nodeProcess.getBuiltinModule !== 'function') {
    nativeLoadError = 'not running on Node';
    return null;
  }
  const only = nodeProcess.env?.PADDOCK_PAGE_RETURN;
  if (only === 'none') {
    nativeLoadError = 'PADDOCK_PAGE_RETURN=none';
    return null;
  }
  const mod = nodeProcess.getBuiltinModule('node:module') as { createRequire(url: string): (id: string) => unknown };
  const require = mod.createRequire(import.meta.url);
  const candidates: [Exclude<PageReturnAddon, null>, string][] = [
    ['prebuilt', `../prebuilds/${nodeProcess.platform}-${nodeProcess.arch}/node.napi.node`],
    ['built', '../build/Release/paddock_page_return.node'],
  ];
  const failures: string[] = [];
  for (const [from, path] of candidates) {
    if (only !== undefined && only !== '' && only !== from) continue;
    try {
      const loaded = require(path) as NativePageReturn;
      if (typeof loaded.discard !== 'function') throw new Error('addon has no discard()');
      native = loaded;
      nativeFrom = from;
      nativeLoadError = null;
      return native;
    } catch (err) {
      failures.push(`${from}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  nativeLoadError = failures.length > 0 ? failures.join('; ') : `PADDOCK_PAGE_RETURN=${String(only)} names no addon (prebuilt, built or none)`;
  return null;
}

/** Which addon returns pages in this process (see {@link PageReturnAddon}). */
export function pageReturnAddon(): PageReturnAddon {
  loadNativePageReturn();
  return nativeFrom;
}

/** Why the addon is not loaded (null when it is). */
export function nativePageReturnError(): string | null {
  loadNativePageReturn();
  return nativeLoadError;
}

/** How decommit and discard reach the OS: `'native'` returns pages, `'none'` is bookkeeping only. */
export type PageReturnMode = 'native' | 'none';

/**
 * The addon an address space returns pages with, by its `pageReturn` option: `'auto'` (or none given) the
 * addon when it loads, `'native'` the addon or a HeapError `NATIVE_UNAVAILABLE`, `'none'` null.
 * @throws RangeError for any other value.
 */
export function choosePageReturn(mode: 'auto' | PageReturnMode | undefined): NativePageReturn | null {
  if (mode === undefined || mode === 'auto') return loadNativePageReturn();
  if (mode === 'none') return null;
  if (mode === 'native') {
    const n = loadNativePageReturn();
    if (!n) throw new HeapError('NATIVE_UNAVAILABLE', `native page return is not available: ${nativePageReturnError()}`);
    return n;
  }
  throw new RangeError(`pageReturn must be 'auto', 'native' or 'none', got ${describeValue(mode)}`);
}

/** Resident memory of this process in bytes, where the host tells (Node); otherwise null. */
export function rss(): number | null {
  const usage = nodeProcess?.memoryUsage;
  if (usage && typeof usage.rss === 'function') return usage.rss();
  return null;
}

let cores = 0;

/**
 * How many threads this process (or page) can run at once: Node's `os.availableParallelism()` (which follows the
 * CPU affinity it was started with, as `taskset` sets it), a browser's `navigator.hardwareConcurrency`, or 1 where
 * the host does not tell. Read once.
 */
export function availableCores(): number {
  if (cores > 0) return cores;
  let n = 0;
  if (nodeProcess && typeof nodeProcess.getBuiltinModule === 'function') {
    const os = nodeProcess.getBuiltinModule('node:os') as { availableParallelism?: () => number } | undefined;
    if (os && typeof os.availableParallelism === 'function') n = os.availableParallelism();
  } else {
    n = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 0;
  }
  cores = Number.isInteger(n) && n > 0 ? n : 1;
  return cores;
}

/**
 * The backing Paddock makes when the caller names none: a shared `WebAssembly.Memory` under Bun, a growable
 * `SharedArrayBuffer` everywhere else. JavaScriptCore reads and writes a fixed-length typed array over a growable
 * SharedArrayBuffer at about 3x the cost over a fixed one, and over a shared wasm memory, which grows too, at the
 * fixed one's cost; V8 costs the same on all three (docs/design/platform.md has the figures).
 */
export function defaultBacking(): 'growable' | 'wasm' {
  return typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined' ? 'wasm' : 'growable';
}

/** Milliseconds from a monotonic clock. */
export function now(): number {
  return performance.now();
}

/**
 * This thread's key among the agents of one process: Node's `threadId` plus one (1 for the main thread, the
 * same number a `Worker` object shows as `threadId` plus one on the parent's side), or 0 where the host has no
 * such id (a browser). An agent records it so that its parent can find it from the `Worker` object alone.
 */
export function threadKey(): number {
  const threads = nodeWorkerThreads();
  return threads === null ? 0 : threads.threadId + 1;
}

/**
 * Whether this agent runs on its process's (or page's) main thread: Node's main thread, or a browser window, not
 * a worker of either. A main thread is never terminated by another agent: it ends only with the whole process.
 */
export function onMainThread(): boolean {
  const threads = nodeWorkerThreads();
  if (threads !== null) return threads.isMainThread;
  return typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope === 'undefined';
}

let blockingAllowed: boolean | undefined;

/**
 * Whether this thread may block in `Atomics.wait`: everywhere in Node and in workers, not on a browser window's
 * main thread (there `Atomics.wait` throws a TypeError before it looks at the value). Found once by a wait that
 * cannot block (the value never matches, the timeout is 0).
 */
export function agentCanBlock(): boolean {
  if (blockingAllowed === undefined) {
    try {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
      blockingAllowed = true;
    } catch {
      blockingAllowed = false;
    }
  }
  return blockingAllowed;
}

/** Whether this agent runs in a Node worker thread (not the main thread, not a browser). */
export function inNodeWorker(): boolean {
  const threads = nodeWorkerThreads();
  return threads !== null && !threads.isMainThread;
}

interface WorkerThreads {
  threadId: number;
  isMainThread: boolean;
}

function nodeWorkerThreads(): WorkerThreads | null {
  if (!nodeProcess || typeof nodeProcess.getBuiltinModule !== 'function') return null;
  try {
    return nodeProcess.getBuiltinModule('node:worker_threads') as WorkerThreads;
  } catch {
    return null;
  }
}

interface LockManagerLike {
  request(name: string, options: { ifAvailable?: boolean }, callback: (lock: unknown) => unknown): Promise<unknown>;
}

/** The host's Web Locks (`navigator.locks`) outside Node, or null. */
function webLocks(): LockManagerLike | null {
  if (nodeProcess && typeof nodeProcess.getBuiltinModule === 'function') return null; // Node: exit events instead
  const locks = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
  return locks && typeof locks.request === 'function' ? locks : null;
}

/** Whether this host can tell when another agent is gone through a lock it holds (browsers: Web Locks). */
export function hasAgentLocks(): boolean {
  return webLocks() !== null;
}

/**
 * Takes the exclusive Web Lock `name` and holds it until the returned function is called; the browser also
 * lets it go when this agent's global is destroyed (a worker terminated, or one that called `close()`), which
 * is how other agents learn that it is gone. `onHeld` runs once the lock is held. Returns null where the host
 * has no Web Locks (Node).
 */
export function holdAgentLock(name: string, onHeld: () => void): (() => void) | null {
  const locks = webLocks();
  if (locks === null) return null;
  let release: () => void = () => {};
  let released = false;
  void locks.request(name, {}, () => {
    if (released) return undefined;
    onHeld();
    return new Promise<void>((resolve) => {
      release = resolve;
    });
  });
  return () => {
    released = true;
    release();
  };
}

/**
 * Calls `onFree` once the Web Lock `name` can be taken (its holder let it go or is gone), holding it while
 * `onFree` runs. Returns false where the host has no Web Locks.
 */
export function whenAgentLockFree(name: string, onFree: () => void): boolean {
  const locks = webLocks();
  if (locks === null) return false;
  void locks.request(name, {}, () => {
    onFree();
    return undefined;
  });
  return true;
}

/** How a thread ended, as {@link onThreadExit} tells its listeners. */
export type ThreadEnd = 'normal' | 'crashed';

const exitListeners = new Set<(end: ThreadEnd) => void>();
let exitHooked = false;
let crashed = false;

/**
 * Calls `listener` once, synchronously, when this Node worker thread ends by itself: its event loop runs dry,
 * it calls `process.exit()`, it closes its port, or an exception nobody caught ends it (`'crashed'`: the
 * thread may have stopped in the middle of anything). A thread stopped from outside (`worker.terminate()`)
 * runs no code at all, so nothing is called then. Returns a function that removes the listener; on the
 * main thread and in browsers nothing is registered (returns a no-op).
 */
export function onThreadExit(listener: (end: ThreadEnd) => void): () => void {
  if (!inNodeWorker() || typeof nodeProcess?.on !== 'function') return () => {};
  if (!exitHooked) {
    exitHooked = true;
    // The monitor event sees an uncaught exception without handling it. With no 'uncaughtException' handler
    // the exception ends the thread; with one, the program goes on and the thread is not ending here.
    nodeProcess.on('uncaughtExceptionMonitor', () => {
      if ((nodeProcess as { listenerCount?: (e: string) => number }).listenerCount?.('uncaughtException') === 0) crashed = true;
    });
    nodeProcess.on('exit', () => {
      const end: ThreadEnd = crashed ? 'crashed' : 'normal';
      for (const l of [...exitListeners]) {
        exitListeners.delete(l);
        l(end);
      }
    });
  }
  exitListeners.add(listener);
  return () => {
    exitListeners.delete(listener);
  };
}
