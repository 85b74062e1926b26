// Stands for an agent that is slow between reserving a region and listing it: it raises the heap's count of
// regions being opened, holds it for `holdMs`, then releases one carved arena (room appears) and lowers the count.
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace } from '@paddock/platform';
import { Regions } from '@paddock/region';

const { handle, openingWord, arena, holdMs } = workerData;
const space = openAddressSpace(handle);
const regions = Regions.open(space);
Atomics.add(space.i32, openingWord, 1);
parentPort.postMessage('opening');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, holdMs);
regions.releaseArena(arena);
Atomics.sub(space.i32, openingWord, 1);
parentPort.postMessage('done');
