// A wasm module and JS workers in one heap, in Node (block-exchange-run.ts says what runs): 4 worker_threads
// agents each run the block-exchange module (AssemblyScript, compiled here) over the heap's shared
// WebAssembly.Memory with Paddock's malloc/free as its imports; 10,000 blocks each are allocated from wasm and
// freed from JS in another agent, then the other way round, for every backend.
import { Worker } from 'node:worker_threads';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClassicHeap } from '../src/classic-heap.js';
import { createGlobalHeap } from '../src/global-heap.js';
import { createArenaHeap } from '../src/heap.js';
import type { Heap, HeapOptions } from '../src/types.js';
import { compileBlockExchange } from './block-exchange-module.js';
import { expectExchangeHeld } from './block-exchange-expect.js';
import { AGENTS, BLOCKS, exchangeHeap, runExchange, type ExchangeAgent } from './block-exchange-run.js';

const backends: [string, (o: HeapOptions) => Heap][] = [
  ['pool_arena', (o) => createArenaHeap(o)],
  ['pool_classic', (o) => createClassicHeap(o)],
  ['pool_global', (o) => createGlobalHeap(o)],
];

function nodeAgent(w: Worker): ExchangeAgent {
  return {
    send: (m) => w.postMessage(m),
    next: <T extends { kind: string }>(kind: string) =>
      new Promise<T>((resolve, reject) => {
        const on = (m: T) => {
          if (m.kind !== kind) return;
          w.off('message', on);
          w.off('error', reject);
          resolve(m);
        };
        w.on('message', on);
        w.once('error', reject);
      }),
  };
}

let module: WebAssembly.Module;
beforeAll(async () => {
  module = new WebAssembly.Module(await compileBlockExchange());
});

describe.each(backends)('a wasm module and JS workers share one heap: %s', (backend, create) => {
  it(`${AGENTS} agents x ${BLOCKS} blocks: wasm allocates and JS frees, then JS allocates and wasm frees`, async () => {
    const { heap, memory } = exchangeHeap(create);
    const workers = Array.from(
      { length: AGENTS },
      () =>
        new Worker(new URL('./workers/wasm-agent.mjs', import.meta.url), {
          workerData: { handle: heap.handle, module },
          execArgv: [`--conditions=paddock-${backend.replace('_', '-')}`],
        }),
    );
    try {
      expectExchangeHeld(await runExchange(heap, memory, module, workers.map(nodeAgent)), backend);
    } finally {
      await Promise.all(workers.map((w) => w.terminate()));
    }
  }, 120_000);
});
