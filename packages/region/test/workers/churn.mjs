// Carves and releases arenas in rounds. Each carved arena is claimed in a shared owner table (one CAS
// from 0 to this worker's tag) and stamped in its first word; a second holder of the same arena would
// fail the claim or find another stamp. Reports how many such collisions it saw.
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace } from '@paddock/platform';
import { Regions } from '@paddock/region';
import { startTogether } from '../../../../tools/test-utils/start.mjs';

const { handle, sync, count, index, rounds, hold, owners } = workerData;
const space = openAddressSpace(handle);
const regions = Regions.open(space);
const table = new Int32Array(owners);
const shift = Math.log2(regions.geometry.arenaBytes);
const tag = index + 1;
startTogether(sync, count);
let collisions = 0;
let carved = 0;
const held = [];
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < hold; i++) {
    const a = regions.carveArena();
    carved++;
    if (Atomics.compareExchange(table, a >>> shift, 0, tag) !== 0) collisions++;
    space.commit(a, 4096);
    Atomics.store(space.i32, a >>> 2, tag);
    held.push(a);
  }
  while (held.length > 0) {
    const a = held.pop();
    if (Atomics.load(space.i32, a >>> 2) !== tag) collisions++;
    if (Atomics.compareExchange(table, a >>> shift, tag, 0) !== tag) collisions++;
    regions.releaseArena(a);
  }
}
parentPort.postMessage({ collisions, carved });
