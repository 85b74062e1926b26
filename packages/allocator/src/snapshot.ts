/**
 * `heap.snapshot()`: a compact, versioned description of the whole heap that any agent can take while the others
 * run, and post anywhere (plain data and typed arrays: structured-cloneable). On `pool_arena` it carries the
 * arena layer's picture (every unit of every arena, the owner slots, every agent area) and the oversized
 * mappings; the other backends have no unit map and report their heap figures and classes. What other live
 * agents own is read without stopping them and is marked so (`racy`, and `exact` per arena): see
 * docs/design/allocator.md, "Snapshots".
 */
import type { ArenaSnapshot } from '@paddock/arena';
import type { MappingPicture } from '@paddock/large';
import type { PageReturnMode } from '@paddock/platform';

/** The snapshot format's version: a reader checks it before it reads anything else. */
export const SNAPSHOT_VERSION = 2;

/** One size class over the whole heap. */
export interface SnapshotClass {
  /** Object bytes (0 for the arena's large objects, whose sizes vary). */
  size: number;
  live: number;
  free: number;
  liveBytes: number;
}

/** What `heap.snapshot()` returns. */
export interface HeapSnapshot {
  version: typeof SNAPSHOT_VERSION;
  backend: string;
  /** When it was taken (`Date.now()`), by which agent, and how long the taking took (ms). */
  takenAt: number;
  takenBy: number;
  tookMs: number;
  /**
   * Whether other agents were attached while it was taken: their arenas, caches and chains were read as they
   * changed, so their figures may be a moment old (each arena says whether it is exact).
   */
  racy: boolean;
  maxBytes: number;
  /** Bytes of the shared buffer now, bytes reserved in it, bytes committed (all agents). */
  bufferBytes: number;
  reservedBytes: number;
  committedBytes: number;
  /** Resident memory of this process as the OS reports it (null where the host does not tell, as in a browser). */
  residentBytes: number | null;
  pageReturn: PageReturnMode;
  /** Bytes in live blocks of the whole heap, oversized mappings included. */
  liveBytes: number;
  classes: SnapshotClass[];
  /** The arena layer's picture (`pool_arena`), else null. */
  arena: ArenaSnapshot | null;
  /** Oversized mappings, live and stashed (`pool_arena`; empty elsewhere). */
  mappings: MappingPicture[];
}
