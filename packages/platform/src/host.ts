/**
 * What the host gives us beyond the buffer: the native page-return addon (Node only), resident memory,
 * a monotonic clock. Node modules are reached through `process.getBuiltinModule`, so this file loads in a
 * browser too, where the addon and RSS are simply absent.
 */

/** The native addon's surface. */
export interface NativePageReturn {
  /** Returns the page-aligned part of [offset, offset + length) of `view` to the OS; gives the bytes returned. */
  discard(view: Uint8Array, offset: number, length: number): number;
  /** The OS page size. */
  pageSize: number;
}

interface NodeProcess {
  getBuiltinModule?: (name: string) => unknown;
  memoryUsage?: { rss?: () => number };
  env?: Record<string, string | undefined>;
  platform?: string;
}

const nodeProcess: NodeProcess | undefined = (globalThis as { process?: NodeProcess }).process;

let nativeLoaded = false;
let native: NativePageReturn | null = null;
let nativeLoadError: string | null = null;

/**
 * The page-return addon, or null when it is not built, cannot load, is turned off with
 * `PADDOCK_PAGE_RETURN=none`, or the host is not Node.
 */
export function loadNativePageReturn(): NativePageReturn | null {
  if (nativeLoaded) return native;
  nativeLoaded = true;
  if (!nodeProcess || typeof nodeProcess.getBuiltinModule !== 'function') {
    nativeLoadError = 'not running on Node';
    return null;
  }
  if (nodeProcess.env?.PADDOCK_PAGE_RETURN === 'none') {
    nativeLoadError = 'PADDOCK_PAGE_RETURN=none';
    return null;
  }
  try {
    const mod = nodeProcess.getBuiltinModule('node:module') as {
      createRequire(url: string): (id: string) => unknown;
    };
    const require = mod.createRequire(import.meta.url);
    const loaded = require('../build/Release/paddock_page_return.node') as NativePageReturn;
    if (typeof loaded.discard !== 'function') throw new Error('addon has no discard()');
    native = loaded;
  } catch (err) {
    nativeLoadError = err instanceof Error ? err.message : String(err);
    native = null;
  }
  return native;
}

/** Why the addon is not loaded (null when it is). */
export function nativePageReturnError(): string | null {
  loadNativePageReturn();
  return nativeLoadError;
}

/** Resident memory of this process in bytes, where the host tells (Node); otherwise null. */
export function rss(): number | null {
  const usage = nodeProcess?.memoryUsage;
  if (usage && typeof usage.rss === 'function') return usage.rss();
  return null;
}

/** Milliseconds from a monotonic clock. */
export function now(): number {
  return performance.now();
}
