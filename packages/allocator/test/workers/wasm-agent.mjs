// A block-exchange agent in a Node worker (see ../block-exchange-agent.mjs): attaches the heap under the
// export condition it was started with and answers the exchange's requests.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap, BACKEND } from '@paddock/allocator';
import { exchangeAgent } from '../block-exchange-agent.mjs';

const agent = exchangeAgent(attachHeap(workerData.handle), workerData.module, BACKEND);
parentPort.on('message', (m) => {
  parentPort.postMessage(agent.handle(m));
  if (m.kind === 'stop') parentPort.close();
});
parentPort.postMessage(agent.ready);
