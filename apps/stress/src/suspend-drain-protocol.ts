/**
 * The messages between the suspend-drain program's main thread and its workers (types only), and the
 * slice of `heap.stats()` a worker reports.
 */
import type { ArenaHeapStats } from '@paddock/allocator';

/** What a worker reports of its `heap.stats()`. */
export interface AgentReport {
  index: number;
  agentId: number;
  ownerSlot: number;
  /** Heap-wide committed bytes, as this agent read them. */
  committedBytes: number;
  liveBytes: number;
  cacheBytes: number;
  pendingChainObjects: number;
  arenas: number;
  retention: ArenaHeapStats['retention'];
  adoptedSlots: number[];
  nextTickMs: number;
}

/** Main thread to worker. */
export type ToWorker =
  | { cmd: 'alloc'; count: number; size: number }
  | { cmd: 'free'; ptrs: number[] }
  | { cmd: 'idle' }
  | { cmd: 'stats' }
  | { cmd: 'finish'; freeOwn: boolean };

/** Worker to main thread. */
export type ToMain =
  | { kind: 'ready'; index: number; agentId: number; pageReturn: string }
  | { kind: 'allocated'; index: number; ptrs: number[] }
  | { kind: 'freed'; index: number; count: number; stats: AgentReport }
  | { kind: 'idling'; index: number }
  | { kind: 'stats'; index: number; stats: AgentReport }
  | { kind: 'detached'; index: number };
