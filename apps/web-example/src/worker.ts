// A worker of the example page (a module Web Worker): it attaches to the page's heap from the handle it is
// sent. A producer allocates messages and posts their pointers to the consumer; the consumer checks and holds
// them and, when the page says so, frees them all (blocks another agent allocated). Then each goes idle, and
// on 'close' leaves the heap and ends.
import { attachHeap, type Heap } from '@paddock/allocator';
import { checkMessage, messageSize, nextSeed, writeMessage, type Batch, type Job, type Order, type Report } from './exchange.js';

const BATCH = 64;
const report = (r: Report) => self.postMessage(r);
let heap: Heap | null = null;
const held: number[] = [];

function produce(h: Heap, job: Extract<Job, { role: 'producer' }>): void {
  let seed = 0x9e3779b9 ^ job.id;
  let made = 0;
  let messages = 0;
  let batch: number[] = [];
  while (made < job.bytes) {
    seed = nextSeed(seed);
    const size = messageSize(seed);
    const p = h.malloc(size);
    writeMessage(h, p, job.id * 1_000_000 + messages, size);
    batch.push(p);
    made += size;
    messages++;
    if (batch.length === BATCH) {
      job.port.postMessage(batch satisfies Batch);
      batch = [];
    }
  }
  job.port.postMessage(batch satisfies Batch);
  job.port.postMessage(null satisfies Batch);
  report({ kind: 'produced', messages, bytes: made });
}

function consume(h: Heap, job: Extract<Job, { role: 'consumer' }>): void {
  let open = job.ports.length;
  let bytes = 0;
  let intact = true;
  for (const port of job.ports) {
    port.onmessage = (e: MessageEvent<Batch>) => {
      if (e.data === null) {
        port.close();
        if (--open === 0) report({ kind: 'holding', messages: held.length, bytes, intact });
        return;
      }
      for (const p of e.data) {
        const size = checkMessage(h, p);
        if (size < 0) intact = false;
        else bytes += size;
        held.push(p);
      }
    };
  }
}

function obey(order: Order): void {
  const h = heap!;
  if (order === 'free') {
    for (const p of held) h.free(p);
    const messages = held.length;
    held.length = 0;
    h.flush(); // send the frees home now rather than at the next tick
    report({ kind: 'freed', messages });
  } else if (order === 'idle') {
    h.startIdle();
  } else if (order === 'close') {
    h.stopIdle();
    h.close();
    heap = null;
    report({ kind: 'closed' });
    self.close();
  }
}

self.onmessage = (e: MessageEvent<Job | Order>) => {
  if (typeof e.data === 'string') return obey(e.data);
  const job = e.data;
  heap = attachHeap(job.handle);
  report({ kind: 'attached', backend: heap.backend, agentId: heap.agentId });
  if (job.role === 'producer') produce(heap, job);
  else consume(heap, job);
};
