// A demo agent: a producer allocates messages in the shared heap and sends them through the channel to the
// consumer (the block itself changes hands: nothing is copied, no offset is posted); the consumer receives
// each message, checks it, holds them all, then frees them (blocks another agent allocated). Told 'hold', a
// producer allocates more messages and keeps them unsent (the demo then terminates it).
import { parentPort, workerData } from 'node:worker_threads';
import { openChannel, type ChannelHandle } from '@paddock/channel';
import { attachDemoHeap, type DemoHandle } from './backends.js';

interface Job {
  handle: DemoHandle;
  role: 'producer' | 'consumer';
  id: number;
  /** Producer: bytes of messages to send. */
  bytes: number;
  /** Producer: bytes of messages to allocate and keep when told 'hold'. */
  hold?: number;
  /** The channel every producer sends into and the consumer receives from. */
  channel: ChannelHandle;
}

const job = workerData as Job;
const heap = await attachDemoHeap(job.handle);
const channel = openChannel(heap.heap, job.channel);
parentPort!.postMessage({ kind: 'ready' });
const parent = parentPort!;

/** A message: word 0 its id, word 1 its size, then bytes derived from the id. */
function write(p: number, id: number, size: number): void {
  const u8 = heap.bytes();
  const view = new DataView(u8.buffer, u8.byteOffset);
  view.setUint32(p, id, true);
  view.setUint32(p + 4, size, true);
  for (let o = 8; o < size; o += 512) u8[p + o] = (id + o) & 255;
}

function intact(p: number): boolean {
  const u8 = heap.bytes();
  const view = new DataView(u8.buffer, u8.byteOffset);
  const id = view.getUint32(p, true);
  const size = view.getUint32(p + 4, true);
  for (let o = 8; o < size; o += 512) if (u8[p + o] !== ((id + o) & 255)) return false;
  return true;
}

/**
 * Allocates and writes messages of 4-64 KiB (sizes from `seed`, ids from `firstId`) until `bytes` are
 * allocated, handing each to `each`.
 */
function allocateMessages(bytes: number, seed: number, firstId: number, each: (p: number) => void): { count: number; bytes: number } {
  let made = 0;
  let count = 0;
  while (made < bytes) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const size = 4096 + (seed % (60 * 1024));
    const p = heap.malloc(size);
    write(p, firstId + count, size);
    each(p);
    made += size;
    count++;
  }
  return { count, bytes: made };
}

/** Messages this producer allocated on 'hold' and never sent. */
const unsent: number[] = [];

parent.on('message', (cmd: string) => {
  if (cmd === 'idle') heap.startIdle();
  else if (cmd === 'hold' && job.role === 'producer') {
    const made = allocateMessages(job.hold ?? 0, 0x85ebca6b ^ job.id, job.id * 1_000_000 + 500_000, (p) => unsent.push(p));
    parent.postMessage({ kind: 'holding-unsent', ...made });
  } else if (cmd === 'stop') {
    heap.stopIdle();
    heap.detach();
    parent.postMessage({ kind: 'stopped' });
    parent.close();
  }
});

if (job.role === 'producer') {
  parent.once('message', () => {
    // send() waits while the channel is full: the consumer frees room as it receives.
    const { count, bytes } = allocateMessages(job.bytes, 0x9e3779b9 ^ job.id, job.id * 1_000_000, (p) => channel.send(p));
    heap.flush();
    parent.postMessage({ kind: 'produced', count, bytes });
  });
} else {
  const held: number[] = [];
  parent.on('message', (cmd: string) => {
    if (cmd === 'receive') {
      // Every block until the main thread closes the channel (after every producer is done) and it is empty.
      let bad = 0;
      for (let p = channel.recv(); p !== 0; p = channel.recv()) {
        if (!intact(p)) bad++;
        held.push(p);
      }
      parent.postMessage({ kind: 'holding', count: held.length, bad });
    } else if (cmd === 'free') {
      for (const p of held) heap.free(p);
      heap.flush();
      parent.postMessage({ kind: 'freed', count: held.length });
      held.length = 0;
    }
  });
}
