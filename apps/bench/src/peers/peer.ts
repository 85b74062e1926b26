/**
 * A peer as the bench knows it: a descriptor that says its name, which workloads it offers, what it
 * compiles at set-up and how it is loaded (or why it is skipped), and what loading it gives the workloads.
 * The peers are listed in `index.ts`, in the order of the tables' columns: a new peer is a file in this
 * folder plus its line there.
 */
import type { Adapter } from '../adapter.js';
import type { MemPeer } from '../mem-peer.js';
import type { Peer } from '../runner.js';
import type { Built, Toolchain } from '../toolchain.js';
import type { CreateHeap } from './paddock-heap.js';

/**
 * The workloads a peer can take part in:
 * - `pair-churn`: the pair and the random-size churn (the main table; every peer of that table offers it);
 * - `sweep`: the size sweep (the churn's loop at one size, up to 16 MiB blocks);
 * - `memory`: hold-then-free and the realloc chain (time and memory held);
 * - `cross`: cross-32 (blocks malloc'ed in one worker, freed in another);
 * - `one-agent`: the single-agent programs (the main thread);
 * - `agents`: the multi-agent programs (one worker per agent).
 */
export type Offer = 'pair-churn' | 'sweep' | 'memory' | 'cross' | 'one-agent' | 'agents';

/** What loading a peer gives the workloads; each workload it offers reads its part. */
export interface Ready {
  /** pair-churn, sweep: the timed loops' peer (an in-process allocator with its own loops, or a native process). */
  readonly timed?: Peer;
  /** sweep: the capacity there, where it differs from the churn's. */
  readonly sweepMaxBytes?: number;
  /** one-agent: a fresh instance of its in-process allocator. */
  readonly adapter?: () => Adapter;
  /** memory: its peers of hold-then-free and the realloc chain (one per profile rung, where it has rungs). */
  readonly memory?: (rungs: readonly number[]) => MemPeer[];
  /** cross, agents: Paddock: the workers attach to heaps made with `createHeap`, loading the module at `url`. */
  readonly heap?: { readonly createHeap: CreateHeap; readonly url: string };
  /** one-agent, agents: a native binary that runs each program as a process of its own. */
  readonly bin?: string;
  /** cross, one-agent, agents: plain JavaScript, no allocator (the garbage collector frees). */
  readonly plainJs?: boolean;
}

/** Why a peer does not run (a toolchain or a build is missing, a module does not load). */
export interface Skip {
  readonly skip: string;
}

export interface PeerDescriptor {
  /** As the tables, `--only` and the JSON name it. */
  readonly name: string;
  readonly offers: readonly Offer[];
  /** What it compiles at set-up, on this machine, before any timing (absent: nothing). */
  readonly build?: { readonly toolchain: Toolchain; build(): Built };
  /** Loads it, given the path its build made (null: it builds nothing). */
  load(name: string, built: string | null): Ready | Skip | Promise<Ready | Skip>;
  /** The programs it offers but cannot run, with the reason (absent: none). */
  readonly declines?: (program: string) => string | null;
}

/**
 * The floor's and thi.ng's buffer: 64k live blocks of up to 4 KiB need ~180 MiB (floor, rounded to powers of
 * two) and ~135 MiB plus fragmentation (thi.ng). The wasm peers are handed it too, and grow their own memory.
 */
export const ARRAY_BYTES = 256 * 1024 * 1024;
