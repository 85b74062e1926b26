/**
 * The departures program's worker: one agent that attaches, allocates mixed class blocks (32 B .. 64 KiB,
 * the same bytes in each of the twelve classes, interleaved) and touches every page of them, reads the
 * process's resident memory while it holds them, and then leaves the way its job says: 'free-all-then-end'
 * frees everything, goes idle and has nothing more to do, so its thread ends by itself; 'hold-then-block'
 * blocks while holding everything, until its parent terminates it. It never calls detach or close.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap, type HeapHandle } from '@paddock/allocator';
import { rss } from '@paddock/platform';
import type { DepartureJob, DepartureMessage } from './departures-protocol.js';

const PAGE = 4096;
const CLASSES = 12; // 32 << 0 .. 32 << 11 (64 KiB)
const ROUND_SLOTS = 1 << (CLASSES - 1); // class i gets every (1 << i)-th slot of a round: 64 KiB per class
const ROUND_BYTES = CLASSES * 64 * 1024;
const ROUND_BLOCKS = 2 * ROUND_SLOTS - 1;

const port = parentPort!;
const job = workerData as DepartureJob;
const heap = attachHeap(job.handle as HeapHandle);

function send(m: DepartureMessage): void {
  port.postMessage(m);
}

/** Allocates rounds of mixed blocks until `bytes` are held, touching every page; returns the pointers. */
function allocateMixed(bytes: number): { ptrs: Uint32Array; count: number; total: number } {
  const rounds = Math.max(1, Math.round(bytes / ROUND_BYTES));
  const ptrs = new Uint32Array(rounds * ROUND_BLOCKS);
  let count = 0;
  let total = 0;
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < ROUND_SLOTS; j++) {
      for (let c = 0; c < CLASSES && j % (1 << c) === 0; c++) {
        const size = 32 << c;
        const p = heap.malloc(size);
        const u8 = heap.u8; // the current view: the buffer may have grown
        for (let o = 0; o < size; o += PAGE) u8[p + o] = 1;
        u8[p + size - 1] = 1;
        ptrs[count++] = p;
        total += size;
      }
    }
  }
  return { ptrs, count, total };
}

const held = allocateMixed(job.bytes);
send({ kind: 'holding', rss: rss() ?? 0, committed: heap.stats().committedBytes, blocks: held.count, bytes: held.total, agentId: heap.agentId });

if (job.job === 'free-all-then-end') {
  for (let i = 0; i < held.count; i++) heap.free(held.ptrs[i]!);
  heap.startIdle();
  const s = heap.stats();
  send({ kind: 'freed', rss: rss() ?? 0, committed: s.committedBytes, liveBytes: s.liveBytes, cacheBytes: s.backend === 'pool_arena' ? s.cacheBytes : 0 });
  // Nothing more to do: the idle tick's timers do not keep the thread alive, so it ends here by itself.
} else {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}
