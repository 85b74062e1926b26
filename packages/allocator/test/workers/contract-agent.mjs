// The contract suite's agent in a worker_threads Worker: loads @paddock/allocator under whatever export
// condition its worker was started with (so it exercises dist/pool-arena.js, dist/pool-classic.js or
// dist/pool-global.js); what it does is agents/contract-agent.mjs.
import { parentPort, workerData } from 'node:worker_threads';
import * as lib from '@paddock/allocator';
import { serveContractAgent } from '../agents/contract-agent.mjs';

serveContractAgent(lib, {
  data: workerData,
  post: (m) => parentPort.postMessage(m),
  onMessage: (fn) => parentPort.on('message', fn),
  close: () => parentPort.close(),
});
