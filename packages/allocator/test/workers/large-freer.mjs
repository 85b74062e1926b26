// Frees every block the main thread sends, then flushes its chains so the block goes home at once.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const heap = attachHeap(workerData.handle);
parentPort.on('message', (p) => {
  if (p === 'stop') {
    parentPort.postMessage({ ledger: heap.stats().retention.ledgerBytes, slot: heap.stats().ownerSlot });
    parentPort.close();
    return;
  }
  heap.free(p);
  heap.flush();
  parentPort.postMessage('freed');
});
