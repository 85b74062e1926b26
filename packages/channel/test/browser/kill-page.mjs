// The page of the channel's browser kill test: a Web Worker opens the channel and is terminated in the middle of a
// send, after its claim (the page writes its record and the slot at the tail as that step leaves them, as the
// recovery tests do in Node, then terminates it); another worker sends 100 blocks into a ring of 16. The page
// receives with `for await`: it must find the dead worker's Web Lock gone, deliver its block in its place and go on.
import { createHeap } from '@paddock/allocator';
import { createChannel } from '../../dist/index.js';
import { H_TAIL, HEADER_WORDS, R_OWNER, R_POS, R_PTR, R_STATE, RECORD_WORDS, S_SEND_CLAIMED, SLOT_WORDS, STAMP_BITS, STAMP_MASK } from '../../src/layout.ts';

const step = (s) => {
  window.__step = s;
};
const message = (w) => new Promise((resolve) => (w.onmessage = (e) => resolve(e.data)));

async function main() {
  step('create');
  const heap = createHeap({ maxBytes: 256 << 20 });
  const ch = createChannel(heap, { capacity: 16 });
  const { ptr, agents, capacity } = ch.handle;
  const base = ptr >>> 2;
  const i32 = heap.i32;
  const own = [];
  for (let k = 0; k < agents; k++) if (Atomics.load(i32, base + HEADER_WORDS + k * RECORD_WORDS + R_OWNER) > 0) own.push(k);

  step('victim');
  const victim = new Worker('/kill-agent.js', { type: 'module' });
  victim.postMessage({ heap: heap.handle, channel: ch.handle, role: 'hold' });
  await message(victim);
  let index = -1;
  for (let k = 0; k < agents; k++) {
    if (!own.includes(k) && Atomics.load(i32, base + HEADER_WORDS + k * RECORD_WORDS + R_OWNER) > 0) index = k;
  }
  if (index < 0) throw new Error('the victim holds no record');
  // Its send, killed after the claim: the record names the block and the position, the slot carries its claim.
  const block = heap.malloc(64);
  i32[block >>> 2] = 2;
  i32[(block >>> 2) + 1] = 0;
  const rec = base + HEADER_WORDS + index * RECORD_WORDS;
  const pos = Atomics.load(i32, base + H_TAIL);
  const slot = base + HEADER_WORDS + agents * RECORD_WORDS + (pos & (capacity - 1)) * SLOT_WORDS;
  Atomics.store(i32, rec + R_PTR, block);
  Atomics.store(i32, rec + R_POS, pos);
  Atomics.store(i32, rec + R_STATE, S_SEND_CLAIMED);
  Atomics.store(i32, slot, (((index + 1) << STAMP_BITS) | (pos & STAMP_MASK)) | 0);
  victim.terminate();

  step('sender');
  const sender = new Worker('/kill-agent.js', { type: 'module' });
  sender.onerror = (e) => {
    window.__done = { error: `worker: ${e.message}` };
  };
  sender.postMessage({ heap: heap.handle, channel: ch.handle, role: 'send', producer: 0, count: 100 });
  void message(sender).then(() => ch.close());

  step('receive');
  const last = [-1, -1, -1];
  let received = 0;
  let outOfOrder = 0;
  let firstFromVictim = false;
  for await (const q of ch) {
    const producer = heap.i32[q >>> 2];
    const seq = heap.i32[(q >>> 2) + 1];
    if (received === 0) firstFromVictim = producer === 2 && q === block;
    if (seq <= last[producer]) outOfOrder++;
    last[producer] = seq;
    heap.free(q);
    received++;
  }
  sender.terminate();
  const s = ch.stats();
  window.__done = { received, outOfOrder, firstFromVictim, recoveredSends: s.recoveredSends, recordsCleaned: s.recordsCleaned, done: ch.done };
}

main().catch((err) => {
  window.__done = { error: String(err && err.stack ? err.stack : err) };
});
