// One of `count` workers that take an owner slot at the same moment (crossing a segment boundary), then
// push `batches` two-node batches to every other worker's inbox while draining their own. Node layout in
// the scratch area: word 0 = next (inside a batch) or link (the tail), word 1 = payload.
// Payload = (sender << 20) | (round << 1) | part. Reports its slot and every payload it received.
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace } from '@paddock/platform';
import { Registry } from '@paddock/registry';
import { barrier, startTogether } from '../../../../tools/test-utils/start.mjs';

const { handle, sync, count, index, batches, scratch, mailbox } = workerData;
const space = openAddressSpace(handle);
const registry = Registry.open(space);
const slots = new Int32Array(mailbox);
startTogether(sync, count);
const slot = registry.takeOwnerSlot();
Atomics.store(slots, index, slot);
barrier(sync, 3, count); // every slot published

const received = [];
function drain() {
  let p = registry.takeInbox(slot);
  space.covers(scratch.end);
  while (p !== 0) {
    received.push(space.i32[(p >>> 2) + 1]);
    p = space.i32[p >>> 2] >>> 0;
  }
}

space.covers(scratch.end);
for (let round = 0; round < batches; round++) {
  for (let t = 0; t < count; t++) {
    if (t === index) continue;
    const a = scratch.base + ((index * count + t) * batches + round) * 16;
    const b = a + 8;
    const i32 = space.i32;
    i32[a >>> 2] = b;
    i32[(a >>> 2) + 1] = (index << 20) | (round << 1);
    i32[(b >>> 2) + 1] = (index << 20) | (round << 1) | 1;
    registry.pushInbox(Atomics.load(slots, t), a, b);
  }
  if (round % 4 === 0) drain();
}
barrier(sync, 4, count); // every push done
drain();
parentPort.postMessage({ slot, received });
