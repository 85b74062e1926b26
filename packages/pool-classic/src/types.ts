/**
 * The shapes the classic pool's public API takes and returns: the options a pool is created with and
 * the figures its `stats()` reports.
 */
import type { PageReturnMode } from '@paddock/platform';
import type { ClassicPool } from './pool.js';

/** Options for {@link ClassicPool.create}. */
export interface ClassicPoolOptions {
  /** Keep freed large blocks' pages (Pony's `pool_retain` build flag): nothing at all goes back to the OS. */
  retain?: boolean;
}

/** One size class in {@link ClassicPoolStats}. */
export interface ClassicClassStats {
  /** Object size of the class in bytes. */
  size: number;
  /** Objects of this class live in the whole heap (allocated and not yet freed, by any agent). */
  live: number;
  /** Free objects of this class that this agent can see: its own list plus the global stack. */
  free: number;
}

/** What {@link ClassicPool.stats} reports. */
export interface ClassicPoolStats {
  backend: 'pool_classic';
  /** How freed large blocks' pages reach the OS: `'none'` without the native addon, or with `retain`. */
  pageReturn: PageReturnMode;
  /** Bytes committed in the whole address space (the pool's memory and headers). */
  committedBytes: number;
  /** Bytes in live blocks, whole heap, at their usable sizes. */
  liveBytes: number;
  /** Per size class, 32 B to 1 MiB. */
  perClass: ClassicClassStats[];
  /** Bytes of free large blocks (and unused parts of reserved chunks) on this agent's list and the global list. */
  largeFreeBytes: number;
}
