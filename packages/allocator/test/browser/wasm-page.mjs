// The page of the browser block exchange (../block-exchange-run.ts): the heap of the backend named in the
// query (?backend=pool_classic) in a shared WebAssembly.Memory, 4 module Web Workers running the block-exchange
// module over it (./wasm-agent.mjs), the module compiled by the test and served as /block-exchange.wasm.
import { createHeap as createArena } from '../../dist/pool-arena.js';
import { createHeap as createClassic } from '../../dist/pool-classic.js';
import { createHeap as createGlobal } from '../../dist/pool-global.js';
import { AGENTS, exchangeHeap, runExchange } from '../block-exchange-run.ts';

const CREATE = { pool_arena: createArena, pool_classic: createClassic, pool_global: createGlobal };

/** A Web Worker as the exchange drives it: the replies queue until asked for by kind. */
function webAgent(w) {
  const waiting = [];
  const early = [];
  let failure = null;
  w.onmessage = (e) => {
    const i = waiting.findIndex((x) => x.kind === e.data.kind);
    if (i >= 0) waiting.splice(i, 1)[0].resolve(e.data);
    else early.push(e.data);
  };
  w.onerror = (e) => {
    failure = new Error(`wasm agent: ${e.message}`);
    for (const x of waiting.splice(0)) x.reject(failure);
  };
  return {
    send: (m) => w.postMessage(m),
    next: (kind) =>
      new Promise((resolve, reject) => {
        if (failure) return reject(failure);
        const i = early.findIndex((m) => m.kind === kind);
        if (i >= 0) resolve(early.splice(i, 1)[0]);
        else waiting.push({ kind, resolve, reject });
      }),
  };
}

async function main() {
  const backend = new URLSearchParams(location.search).get('backend');
  window.__step = `compile (${backend})`;
  const module = await WebAssembly.compile(await (await fetch('/block-exchange.wasm')).arrayBuffer());
  const { heap, memory } = exchangeHeap(CREATE[backend]);
  const workers = Array.from({ length: AGENTS }, () => new Worker('/wasm-agent.js', { type: 'module' }));
  const agents = workers.map(webAgent);
  for (const w of workers) w.postMessage({ handle: heap.handle, module, backend });
  window.__step = 'exchange';
  const report = await runExchange(heap, memory, module, agents);
  for (const w of workers) w.terminate();
  window.__done = report;
}

main().catch((err) => {
  window.__done = { error: String(err && err.stack ? err.stack : err) };
});
