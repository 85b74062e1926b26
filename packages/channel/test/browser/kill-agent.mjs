// A Web Worker of the channel's browser kill test: opens the channel and either holds it ('hold': the page then
// writes its record and a slot as a send killed after its claim leaves them, and terminates it) or sends `count`
// blocks with the blocking sendBatch ('send'), each carrying [producer, seq].
import { attachHeap } from '@paddock/allocator';
import { openChannel } from '../../dist/index.js';

self.onmessage = async (e) => {
  const { heap: handle, channel, role, producer, count } = e.data;
  const heap = attachHeap(handle);
  const ch = openChannel(heap, channel);
  if (role === 'hold') {
    void ch;
    // Back to the event loop, so that the record's Web Lock is granted, then the page is told.
    await new Promise((r) => setTimeout(r, 100));
    self.postMessage('holding');
    return;
  }
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
