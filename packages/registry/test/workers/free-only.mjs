// An agent that only frees: opens the registry and pushes `batches` one-node batches to slot `target`,
// never taking a slot of its own. Node: word 0 = link, word 1 = payload (index << 20 | round).
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace } from '@paddock/platform';
import { Registry } from '@paddock/registry';
import { startTogether } from '../../../../tools/test-utils/start.mjs';

const { handle, sync, count, index, batches, scratch, target } = workerData;
const space = openAddressSpace(handle);
const registry = Registry.open(space);
startTogether(sync, count);
space.covers(scratch.end);
for (let round = 0; round < batches; round++) {
  const node = scratch.base + (index * batches + round) * 8;
  space.i32[(node >>> 2) + 1] = (index << 20) | round;
  registry.pushInbox(target, node, node);
}
parentPort.postMessage({ ownerCountSeen: registry.ownerCount() });
