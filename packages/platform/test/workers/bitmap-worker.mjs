// A worker for the bitmap race tests: runs one job on a bitmap shared with the other workers, started
// together with them, and posts what it did so the test can check that no bit was taken twice or lost.
import { parentPort, workerData } from 'node:worker_threads';
import {
  allBitsSet,
  claimBitRange,
  claimFirstClearBit,
  clearBitRangeAtomic,
  setBitRangeAtomic,
} from '@paddock/platform';
import { startTogether } from '../../../../tools/test-utils/start.mjs';

const { job, sync, count, index } = workerData;
const bits = new Int32Array(job.buffer);

/** Deterministic pseudo-random numbers in [0, n) (xorshift), seeded by the worker's index. */
let x = 0x9e3779b9 ^ (index + 1);
function random(n) {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return (x >>> 0) % n;
}

startTogether(sync, count);
switch (job.kind) {
  case 'set-clear': {
    // This worker owns every `count`-th run of `run` bits (runs of other workers share its words). Each round
    // it sets all its runs, checks them, and clears them: with no bit lost to another worker's write, every
    // set and every clear finds exactly the run's bits to change.
    const { runs, run, rounds } = job;
    let wrong = 0;
    for (let r = 0; r < rounds; r++) {
      for (let k = index; k < runs; k += count) if (setBitRangeAtomic(bits, 0, k * run, run) !== run) wrong++;
      for (let k = index; k < runs; k += count) if (!allBitsSet(bits, 0, k * run, run)) wrong++;
      for (let k = index; k < runs; k += count) if (clearBitRangeAtomic(bits, 0, k * run, run) !== run) wrong++;
    }
    // Leave every other run of this worker set, for the test to compare the whole bitmap with.
    for (let k = index; k < runs; k += 2 * count) setBitRangeAtomic(bits, 0, k * run, run);
    parentPort.postMessage({ wrong });
    break;
  }
  case 'claim-churn': {
    // Each round claims a random range and the first clear bit from a random place, marks every bit it got
    // in a shared owner table (a CAS from 0 to this worker's tag), then unmarks and clears them. A bit given
    // to two workers at once fails a mark; a bit lost or brought back by a bad clear fails a clear's count.
    const { nbits, rounds, longest } = job;
    const owners = new Int32Array(job.owners);
    const tag = index + 1;
    let collisions = 0;
    let won = 0;
    let lost = 0;
    let singles = 0;
    const mark = (s, n, from, to) => {
      for (let b = s; b < s + n; b++) if (Atomics.compareExchange(owners, b, from, to) !== from) collisions++;
    };
    for (let r = 0; r < rounds; r++) {
      const n = 1 + random(longest);
      const s = random(nbits - n + 1);
      const taken = claimBitRange(bits, 0, s, n);
      if (taken < 0) {
        won++;
        mark(s, n, 0, tag);
      } else {
        lost++;
        if (taken < s || taken >= s + n) collisions++;
      }
      const from = random(nbits);
      const single = claimFirstClearBit(bits, 0, from, nbits - from);
      if (single >= 0) {
        singles++;
        mark(single, 1, 0, tag);
        mark(single, 1, tag, 0);
        if (clearBitRangeAtomic(bits, 0, single, 1) !== 1) collisions++;
      }
      if (taken < 0) {
        mark(s, n, tag, 0);
        if (clearBitRangeAtomic(bits, 0, s, n) !== n) collisions++;
      }
    }
    parentPort.postMessage({ collisions, won, lost, singles });
    break;
  }
  default:
    throw new Error(`unknown job ${job.kind}`);
}
