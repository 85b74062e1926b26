// Workers for the old-views tests: an agent whose views another agent has outgrown runs a path that reaches words
// past them (its idle visit, its wake, its detach), or many agents attach at once to a heap whose parent idles.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const { handle, job } = workerData;
const heap = attachHeap(handle);

if (job === 'tick-when-told') {
  // Takes its views now (it allocates: a slot and an arena), then waits while the parent grows the heap past them.
  const p = heap.malloc(64);
  parentPort.postMessage({ kind: 'attached', agentId: heap.agentId, viewBytes: heap.engine.i32.byteLength });
  parentPort.once('message', () => {
    const steps = [];
    try {
      steps.push('tick');
      heap.tick();
      steps.push('arm');
      heap.armIdleWake(10, () => {});
      heap.disarmIdleWake();
      steps.push('check');
      heap.free(p);
      heap.check();
      const adopted = heap.stats().adoptedSlots;
      steps.push('detach');
      heap.detach();
      parentPort.postMessage({ kind: 'done', adopted });
    } catch (err) {
      parentPort.postMessage({ kind: 'failed', step: steps.at(-1), error: `${err?.name}: ${err?.message}` });
    }
  });
} else if (job === 'hold') {
  // Allocates (its area and arena lie past the parent's views), then waits to be terminated.
  const p = heap.malloc(64 << 20); // an oversized mapping: the buffer grows well past where it was
  heap.u8[p] = 1;
  parentPort.postMessage({ kind: 'holding', agentId: heap.agentId });
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
} else if (job === 'hand-over') {
  // Allocates `count` blocks, stamps each, hands them to the parent (which checks and frees them) and ends.
  const { count } = workerData;
  const blocks = [];
  for (let i = 0; i < count; i++) {
    const size = 32 << (i % 8);
    const p = heap.malloc(size);
    heap.u32[p >>> 2] = heap.agentId;
    heap.u32[(p >>> 2) + 1] = i;
    blocks.push(p, size);
  }
  parentPort.postMessage({ kind: 'blocks', agentId: heap.agentId, blocks });
}
