// Workers for the agent-lifecycle tests: each attaches, does its job, and then leaves the way the job says
// (by itself, by throwing, by waiting to be terminated). None of them calls detach or close.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const { handle, job } = workerData;
const heap = attachHeap(handle);

/** Mixed class blocks (32 B .. 64 KiB) adding up to about `bytes`, each touched. */
function allocateMixed(bytes) {
  const blocks = [];
  let total = 0;
  for (let i = 0; total < bytes; i++) {
    const size = 32 << (i % 12);
    const p = heap.malloc(size);
    heap.u32[p >>> 2] = i;
    heap.u8[p + size - 1] = 1;
    blocks.push(p);
    total += size;
  }
  return blocks;
}

function blockUntilTerminated() {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

if (job === 'free-all-then-end') {
  // Allocates, frees everything, and ends: `how` is 'natural' (the event loop runs dry), 'exit'
  // (process.exit) or 'close' (the port closes while a listener would keep the thread alive).
  const blocks = allocateMixed(workerData.bytes);
  for (const p of blocks) heap.free(p);
  parentPort.postMessage({ kind: 'freed', agentId: heap.agentId, slot: heap.stats().ownerSlot, committed: heap.stats().committedBytes });
  if (workerData.how === 'exit') process.exit(0);
  if (workerData.how === 'close') {
    parentPort.on('message', () => {});
    setTimeout(() => parentPort.close(), 5);
  }
} else if (job === 'hand-over-then-end' || job === 'hand-over-then-throw') {
  // Allocates `count` blocks of `size`, hands them to the parent with all of them live, and ends by itself,
  // or (then-throw) by an exception nobody catches, which leaves it to be reaped.
  const blocks = [];
  for (let i = 0; i < workerData.count; i++) {
    const p = heap.malloc(workerData.size);
    heap.u32[p >>> 2] = workerData.tag + i;
    blocks.push(p);
  }
  parentPort.postMessage({ kind: 'handed', agentId: heap.agentId, slot: heap.stats().ownerSlot, blocks });
  if (job === 'hand-over-then-throw') {
    setTimeout(() => {
      throw new Error('a task failed with blocks handed out');
    }, 5);
  }
} else if (job === 'free-at-gate') {
  // One of several freers: frees its share of a departed agent's blocks at the same moment as the others,
  // sends what is left home, waits for all, drains, and reports.
  const g = new Int32Array(workerData.gate);
  Atomics.add(g, 1, 1);
  while (Atomics.load(g, 0) === 0) Atomics.wait(g, 0, 0, 5);
  for (const p of workerData.blocks) heap.free(p);
  heap.flushCache();
  heap.flush();
  Atomics.add(g, 2, 1);
  while (Atomics.load(g, 2) < workerData.freers) Atomics.wait(g, 2, Atomics.load(g, 2), 5);
  heap.drain();
  heap.check();
  const s = heap.stats();
  parentPort.postMessage({ kind: 'freed', adoptedSlots: s.adoptedSlots, liveBytes: s.liveBytes, arenas: s.arenas });
  // Stays until told to go: leaving by itself would hand what it took over to a slower freer.
  parentPort.once('message', () => {
    heap.close();
    parentPort.close();
  });
} else if (job === 'free-then-wait') {
  // Frees the blocks it is given (into an owner that left: it takes that owner over), sends them home, says
  // so, and blocks until terminated.
  for (const p of workerData.blocks) heap.free(p);
  heap.flushCache();
  heap.flush();
  parentPort.postMessage({ kind: 'freed', agentId: heap.agentId, adoptedSlots: heap.stats().adoptedSlots });
  blockUntilTerminated();
} else if (job === 'drain-when-told') {
  // Allocates `count` blocks of `size` and hands them over; once the parent has freed them all (they wait in
  // this agent's inbox), it is told to drain, says so through the shared word, and drains: the parent
  // terminates it in the middle.
  const blocks = [];
  for (let i = 0; i < workerData.count; i++) blocks.push(heap.malloc(workerData.size));
  parentPort.postMessage({ kind: 'handed', agentId: heap.agentId, blocks });
  const flag = new Int32Array(workerData.flag);
  parentPort.once('message', () => {
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    heap.drain();
    Atomics.store(flag, 0, 2);
    blockUntilTerminated();
  });
} else if (job === 'hold-then-throw') {
  // Holds `bytes` of blocks, says so, then throws an exception nobody catches.
  const blocks = allocateMixed(workerData.bytes);
  parentPort.postMessage({ kind: 'holding', agentId: heap.agentId, blocks: blocks.length, committed: heap.stats().committedBytes });
  setTimeout(() => {
    throw new Error('a task failed after attaching');
  }, 5);
} else if (job === 'hold-then-wait') {
  // Holds `bytes` of blocks (their addresses sent along), says so, and blocks until terminated.
  const blocks = allocateMixed(workerData.bytes);
  parentPort.postMessage({ kind: 'holding', agentId: heap.agentId, blocks, committed: heap.stats().committedBytes });
  blockUntilTerminated();
}
