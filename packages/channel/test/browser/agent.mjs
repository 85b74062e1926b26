// A Web Worker of the channel's browser test: opens the channel and sends its blocks in batches of 8 with the
// blocking sendBatch (a worker may block), each block carrying [producer, seq].
import { attachHeap } from '@paddock/allocator';
import { openChannel } from '../../dist/index.js';

self.onmessage = (e) => {
  const { heap: handle, channel, producer, count } = e.data;
  const heap = attachHeap(handle);
  const ch = openChannel(heap, channel);
  const batch = [];
  for (let seq = 0; seq < count; seq++) {
    const p = heap.malloc(64);
    heap.i32[p >>> 2] = producer;
    heap.i32[(p >>> 2) + 1] = seq;
    batch.push(p);
    if (batch.length === 8 || seq === count - 1) {
      ch.sendBatch(batch);
      batch.length = 0;
    }
  }
  heap.flush();
  self.postMessage('sent');
};
