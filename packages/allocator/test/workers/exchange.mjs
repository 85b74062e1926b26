// One agent of the exchange tests: a producer allocates blocks (sizes in turn from `sizes`, all in the exchange's
// classes), stamps them and hands them through its ring to a consumer, which checks and frees them. Consumers
// only free, so their caches fill and hand the blocks on through the heap's exchange; producers only allocate, so
// a block of another agent's arena can reach a producer only through the exchange. Every block is claimed in a
// shared table (one byte per 32-byte granule) when it is allocated and released just before it is freed: a block
// handed out twice is seen at once.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const { handle, role, ring: ringBuffer, table: tableBuffer, count, sizes, tell } = workerData;
const heap = attachHeap(handle);
const ring = new Int32Array(ringBuffer); // [0] head, [1] tail, [2] producer done, then the slots
const slots = ring.length - 3;
const table = new Uint8Array(tableBuffer);

if (role === 'producer') {
  let duplicates = 0;
  let foreign = 0;
  let head = 0;
  for (let i = 0; i < count; i++) {
    const size = sizes[i % sizes.length];
    const p = heap.malloc(size);
    if (Atomics.compareExchange(table, p >>> 5, 0, 1) !== 0) duplicates++;
    // The arena's owner slot is in its header's first word: a block of another owner came through the exchange.
    if (heap.engine.arenaOwnerOf(p) !== heap.stats().ownerSlot) foreign++;
    heap.i32[p >>> 2] = i;
    heap.i32[(p >>> 2) + 2] = size;
    while (head - Atomics.load(ring, 1) >= slots) Atomics.wait(ring, 1, Atomics.load(ring, 1), 1);
    ring[3 + (head % slots)] = p;
    Atomics.store(ring, 0, ++head);
    Atomics.notify(ring, 0);
  }
  Atomics.store(ring, 2, 1);
  Atomics.notify(ring, 0);
  parentPort.postMessage({ kind: 'produced', duplicates, foreign, slot: heap.stats().ownerSlot });
} else {
  let bad = 0;
  let tail = 0;
  for (;;) {
    const head = Atomics.load(ring, 0);
    if (head === tail) {
      if (Atomics.load(ring, 2) === 1 && Atomics.load(ring, 0) === tail) break;
      Atomics.wait(ring, 0, head, 1);
      continue;
    }
    for (; tail !== head; tail++) {
      const p = ring[3 + (tail % slots)] >>> 0;
      if (heap.i32[p >>> 2] !== tail || heap.i32[(p >>> 2) + 2] !== sizes[tail % sizes.length]) bad++;
      Atomics.store(table, p >>> 5, 0);
      heap.free(p);
      // The kill test is told how far the consumer got, so that it stops it while the cache is handing blocks on.
      if (tell !== undefined) Atomics.store(new Int32Array(tell), 0, tail + 1);
      Atomics.store(ring, 1, tail + 1);
    }
    Atomics.notify(ring, 1);
  }
  parentPort.postMessage({ kind: 'consumed', bad, exchangeBytes: heap.stats().exchangeBytes });
}
