// A worker of the example page (a module Web Worker): it attaches to the page's heap and opens the page's
// channel from the handles it is sent. A producer allocates messages and sends them through the channel (the
// block changes hands: nothing is copied, no offset is posted; `send` waits while the channel is full); the
// consumer receives them (`for await`, so its event loop keeps running), checks and holds them and, when the
// page says so, frees them all (blocks another agent allocated). Then each goes idle, and on 'close' leaves
// the heap and ends.
import { attachHeap, type Heap } from '@paddock/allocator';
import { openChannel, type Channel } from '@paddock/channel';
import { checkMessage, messageSize, nextSeed, writeMessage, type Job, type Order, type Report } from './exchange.js';

const report = (r: Report) => self.postMessage(r);
let heap: Heap | null = null;
const held: number[] = [];

function produce(h: Heap, channel: Channel, job: Extract<Job, { role: 'producer' }>): void {
  let seed = 0x9e3779b9 ^ job.id;
  let made = 0;
  let messages = 0;
  while (made < job.bytes) {
    seed = nextSeed(seed);
    const size = messageSize(seed);
    const p = h.malloc(size);
    writeMessage(h, p, job.id * 1_000_000 + messages, size);
    channel.send(p);
    made += size;
    messages++;
  }
  report({ kind: 'produced', messages, bytes: made });
}

/** Every block until the page closes the channel (once every producer is done) and it is empty. */
async function consume(h: Heap, channel: Channel): Promise<void> {
  let bytes = 0;
  let intact = true;
  for await (const p of channel) {
    const size = checkMessage(h, p);
    if (size < 0) intact = false;
    else bytes += size;
    held.push(p);
  }
  report({ kind: 'holding', messages: held.length, bytes, intact, viaChannel: channel.stats().received });
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
  const channel = openChannel(heap, job.channel);
  report({ kind: 'attached', backend: heap.backend, agentId: heap.agentId });
  if (job.role === 'producer') produce(heap, channel, job);
  else void consume(heap, channel);
};
