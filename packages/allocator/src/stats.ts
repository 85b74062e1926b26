/**
 * What `heap.stats()` reports: a core every backend fills the same way, and a part of the backend's own,
 * told apart by `backend`. A reader of the core needs nothing more; a reader of a backend's figures checks
 * `stats.backend` first (`if (s.backend === 'pool_arena') s.adoptedSlots ...`), and a backend that does not
 * have a figure does not report it (no field filled with zeros).
 */
import type { LargeStats } from '@paddock/large';
import type { PageReturnAddon, PageReturnMode } from '@paddock/platform';

/** What every backend reports. */
export interface HeapStatsCore {
  /** The backend, which says which part below comes with the core. */
  backend: string;
  /** Whether decommitted pages go back to the OS (`'native'`) or decommit is bookkeeping only (`'none'`). */
  pageReturn: PageReturnMode;
  /**
   * Which binary returns them when `pageReturn` is `'native'`: the prebuilt addon `@paddock/platform` ships for
   * this platform (`'prebuilt'`), or the one built from source at install (`'built'`); null when pages do not go back.
   */
  pageReturnAddon: PageReturnAddon;
  profile: number;
  /** Bytes committed in the whole heap, all agents. */
  committedBytes: number;
  /** Resident memory of this process as the OS reports it (null where the host does not tell). */
  residentBytes: number | null;
  /**
   * Bytes in live blocks: of this agent's arenas on `pool_arena` (objects other agents freed but this one has
   * not drained yet count as live), of the whole heap on `pool_classic` and `pool_global`.
   */
  liveBytes: number;
  /** Per size class: its block size, blocks live and blocks free. */
  perClass: ClassStats[];
  /** The delay the idle tick asks for next, in ms. */
  nextTickMs: number;
}

/** One size class in {@link HeapStatsCore.perClass}. */
export interface ClassStats {
  size: number;
  live: number;
  free: number;
}

/** What the arena backend (`pool_arena`) reports. */
export interface ArenaHeapStats extends HeapStatsCore {
  backend: 'pool_arena';
  /** This agent's owner slot (0: it has allocated nothing). */
  ownerSlot: number;
  arenas: number;
  pendingChainObjects: number;
  /** Per size class, with the slabs it has in this agent's arenas. */
  perClass: (ClassStats & { slabs: number })[];
  /** Bytes of freed small blocks held in this agent's thread cache (they still count in `liveBytes` of their owner). */
  cacheBytes: number;
  /** Blocks held per class in this agent's thread cache. */
  cacheBlocks: number[];
  /**
   * Bytes of freed small blocks waiting in the heap's exchange, handed over by full thread caches for any agent
   * short of their class (the whole heap's, not this agent's; they still count in `liveBytes` of their owners).
   */
  exchangeBytes: number;
  /** Large objects live in this agent's arenas, and their bytes (included in `liveBytes`). */
  largeObjects: number;
  largeBytes: number;
  /** This agent's retention ledger: retained large units and stashed oversized mappings. */
  retention: LargeStats;
  /** Bytes of slabs quarantined by reaps this agent ran (left half-updated by an agent that died). */
  quarantinedBytes: number;
  /**
   * Slabs this agent's frees (and drains) emptied, kept laid out for their class's next refill, and their bytes
   * (committed, nothing live); those above the sweep threshold go back after the sweep delay, all on the idle return.
   */
  keptSlabs: number;
  keptBytes: number;
  /** Owner slots of detached or reaped agents this agent adopted. */
  adoptedSlots: number[];
}

/** What the classic pool (`pool_classic`) reports. */
export interface ClassicHeapStats extends HeapStatsCore {
  backend: 'pool_classic';
  /**
   * Bytes of free large blocks (and unused parts of reserved chunks) on this agent's list and the global list:
   * the pool keeps them committed for reuse (it has no retention budget and no thread cache).
   */
  largeFreeBytes: number;
}

/** What the global pool (`pool_global`) reports: its counts of the whole heap, taken by walking it. */
export interface GlobalHeapStats extends HeapStatsCore {
  backend: 'pool_global';
  /** Per size class, with the 1 MiB slabs it carves from (a slab whose blocks are all free goes back on the idle return). */
  perClass: (ClassStats & { slabs: number })[];
  /** Live large blocks (above 1 MiB, each its own mapping) and their usable bytes (included in `liveBytes`). */
  largeBlocks: number;
  largeBytes: number;
}

/** What `heap.stats()` reports: the core and the part of the heap's backend. */
export type HeapStats = ArenaHeapStats | ClassicHeapStats | GlobalHeapStats;
