// A worker that opens an address space from its handle and runs one job for the platform tests.
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace } from '@paddock/platform';

const { handle, job, start } = workerData;
const space = openAddressSpace(handle);
const gate = start ? new Int32Array(start) : null;

function waitForGate() {
  if (!gate) return;
  Atomics.add(gate, 1, 1);
  while (Atomics.load(gate, 0) === 0) Atomics.wait(gate, 0, 0, 5);
}

switch (job.kind) {
  case 'reserve': {
    waitForGate();
    const got = [];
    for (let i = 0; i < job.count; i++) got.push(space.reserve(job.size, job.align));
    parentPort.postMessage({ agentId: space.agentId, got });
    break;
  }
  case 'count-nonzero-pages': {
    // Reads one byte in every 4 KiB page and a full sweep of the first and last page.
    space.covers(job.addr + job.size);
    const u8 = space.u8;
    let nonzero = 0;
    for (let p = job.addr; p < job.addr + job.size; p += 4096) if (u8[p] !== 0 || u8[p + 4095] !== 0) nonzero++;
    parentPort.postMessage({ nonzero, pageReturn: space.pageReturn });
    break;
  }
  case 'grow-and-write': {
    // Commits a range far beyond the creator's views and writes a marker there.
    const before = space.viewBytes;
    space.commit(job.addr, job.size);
    space.i32[(job.addr + job.size - 4) >>> 2] = job.marker;
    parentPort.postMessage({ before, after: space.viewBytes });
    break;
  }
  default:
    throw new Error(`unknown job ${job.kind}`);
}
