// Opens the heap, waits for the others, then carves `carves` arenas; every worker's i-th carve starts
// together (a spinning round barrier before each), so the carves really collide on the same bitmap.
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace } from '@paddock/platform';
import { Regions } from '@paddock/region';
import { round, startTogether } from '../../../../tools/test-utils/start.mjs';

const { handle, sync, count, carves } = workerData;
const regions = Regions.open(openAddressSpace(handle));
startTogether(sync, count);
const arenas = [];
for (let i = 0; i < carves; i++) {
  round(sync, 5, count, i);
  arenas.push(regions.carveArena());
}
parentPort.postMessage({ arenas });
