// A block-exchange agent in a module Web Worker (see ../block-exchange-agent.mjs): its first message names the
// heap, the module and the backend; it attaches and answers the exchange's requests.
import { attachHeap as attachArena } from '../../dist/pool-arena.js';
import { attachHeap as attachClassic } from '../../dist/pool-classic.js';
import { attachHeap as attachGlobal } from '../../dist/pool-global.js';
import { exchangeAgent } from '../block-exchange-agent.mjs';

const ATTACH = { pool_arena: attachArena, pool_classic: attachClassic, pool_global: attachGlobal };

self.onmessage = (first) => {
  const { handle, module, backend } = first.data;
  const agent = exchangeAgent(ATTACH[backend](handle), module, backend);
  self.onmessage = (e) => {
    self.postMessage(agent.handle(e.data));
    if (e.data.kind === 'stop') self.close();
  };
  self.postMessage(agent.ready);
};
