// A demo worker: opens the shared space and runs the job it is given.
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace, type AddressSpaceHandle } from '@paddock/platform';

interface Job {
  handle: AddressSpaceHandle;
  kind: 'touch' | 'decommit';
  addr: number;
  size: number;
  value: number;
}

const job = workerData as Job;
const space = openAddressSpace(job.handle);
space.covers(job.addr + job.size);
if (job.kind === 'touch') {
  space.u8.fill(job.value, job.addr, job.addr + job.size);
  parentPort!.postMessage({ agentId: space.agentId, done: job.size });
} else {
  const returned = space.decommit(job.addr, job.size);
  parentPort!.postMessage({ agentId: space.agentId, returned, pageReturn: space.pageReturn });
}
