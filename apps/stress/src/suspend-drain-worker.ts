/**
 * The suspend-drain program's worker: one agent of the heap. It attaches, then does what the main thread
 * asks, one command at a time: allocate and touch blocks (and send the pointers back), free a batch of
 * pointers (most of them other agents' blocks), go idle on its event loop, report its stats, or free what
 * it still holds and detach.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap, type HeapHandle, type HeapStats } from '@paddock/allocator';
import type { AgentReport, ToMain, ToWorker } from './suspend-drain-protocol.js';

const PAGE = 4096;
const port = parentPort!;
const { handle, index } = workerData as { handle: HeapHandle; index: number };
const heap = attachHeap(handle);
/** The blocks of this worker's latest `alloc`. */
let mine: number[] = [];

function send(m: ToMain): void {
  port.postMessage(m);
}

function report(s: HeapStats): AgentReport {
  // The classic pool has no owner slot, arenas, chains, thread cache or retention ledger: 0 for those, and its
  // free large blocks as the retained bytes.
  const arena = s.backend === 'pool_arena' ? s : null;
  const noLedger = { budgetBytes: 0, ledgerBytes: 0, retainedBytes: s.backend === 'pool_classic' ? s.largeFreeBytes : 0, parkedBlocks: 0, stashEntries: 0, stashBytes: 0, uncutBytes: 0, mappingsAllocated: 0 };
  return {
    index,
    agentId: heap.agentId,
    ownerSlot: arena?.ownerSlot ?? 0,
    committedBytes: s.committedBytes,
    liveBytes: s.liveBytes,
    cacheBytes: arena?.cacheBytes ?? 0,
    pendingChainObjects: arena?.pendingChainObjects ?? 0,
    arenas: arena?.arenas ?? 0,
    retention: arena?.retention ?? noLedger,
    adoptedSlots: arena?.adoptedSlots ?? [],
    nextTickMs: s.nextTickMs,
  };
}

/** Allocates `count` blocks of `size` bytes and writes one byte in every page of each. */
function allocAndTouch(count: number, size: number): number[] {
  const ps: number[] = [];
  for (let i = 0; i < count; i++) {
    const p = heap.malloc(size);
    const u8 = heap.u8; // current view: another agent may have grown the buffer
    for (let o = 0; o < size; o += PAGE) u8[p + o] = 1;
    ps.push(p);
  }
  return ps;
}

port.on('message', (m: ToWorker) => {
  switch (m.cmd) {
    case 'alloc':
      mine = allocAndTouch(m.count, m.size);
      send({ kind: 'allocated', index, ptrs: mine });
      break;
    case 'free': {
      for (const p of m.ptrs) heap.free(p);
      heap.startIdle();
      send({ kind: 'freed', index, count: m.ptrs.length, stats: report(heap.stats()) });
      break;
    }
    case 'idle':
      heap.startIdle();
      send({ kind: 'idling', index });
      break;
    case 'stats':
      send({ kind: 'stats', index, stats: report(heap.stats()) });
      break;
    case 'finish':
      // `freeOwn` is false when our latest blocks were already handed to a freeing agent.
      if (m.freeOwn) for (const p of mine) heap.free(p);
      mine = [];
      heap.detach();
      send({ kind: 'detached', index });
      port.close();
      break;
  }
});

send({ kind: 'ready', index, agentId: heap.agentId, pageReturn: heap.stats().pageReturn });
