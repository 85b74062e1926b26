// A wasm module and JS workers in one heap: 4 worker agents each run the block-exchange module (AssemblyScript,
// compiled here) over the heap's shared WebAssembly.Memory with Paddock's malloc/free as its imports. Each
// agent allocates 10,000 stamped blocks from one side and the next agent checks and frees them from the other
// (wasm allocates, JS frees; then JS allocates, wasm frees), for every backend: all 40,000 blocks of a round are
// live at once, distinct and inside the heap, every stamp holds, nothing is left live, check() passes and the
// module's static data below the heap is untouched.
import { Worker } from 'node:worker_threads';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClassicHeap } from '../src/classic-heap.js';
import { createGlobalHeap } from '../src/global-heap.js';
import { createArenaHeap } from '../src/heap.js';
import type { Heap, HeapOptions } from '../src/types.js';
import { compileBlockExchange, type BlockExchange } from './block-exchange-module.js';

const AGENTS = 4;
const BLOCKS = 10_000;
const MAX_BYTES = 256 << 20;

const backends: [string, (o: HeapOptions) => Heap][] = [
  ['pool_arena', (o) => createArenaHeap(o)],
  ['pool_classic', (o) => createClassicHeap(o)],
  ['pool_global', (o) => createGlobalHeap(o)],
];

type Reply = { kind: string; [k: string]: unknown };

function nextMessage<T extends Reply>(w: Worker, kind: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: T) => {
      if (m.kind !== kind) return;
      w.off('message', on);
      w.off('error', reject);
      resolve(m);
    };
    w.on('message', on);
    w.once('error', reject);
  });
}

/** Sends each worker its message and waits for every reply of `kind`. */
function roundTrip<T extends Reply>(workers: Worker[], kind: string, message: (i: number) => object): Promise<T[]> {
  const replies = workers.map((w) => nextMessage<T>(w, kind));
  workers.forEach((w, i) => w.postMessage(message(i)));
  return Promise.all(replies);
}

/** The blocks in the lists, checked: as many as asked, inside the heap, none overlapping another. */
function ledger(heap: Heap, lists: number[]): { blocks: number; problems: string[] } {
  const u32 = heap.u32;
  const lowest = heap.space.base + heap.space.headerBytes;
  const all: [number, number][] = [];
  for (const list of lists) for (let k = 0; k < BLOCKS; k++) all.push([u32[(list >>> 2) + 2 * k]!, u32[(list >>> 2) + 2 * k + 1]!]);
  all.sort((a, b) => a[0] - b[0]);
  const problems: string[] = [];
  for (let i = 0; i < all.length; i++) {
    const [p, size] = all[i]!;
    if (p < lowest) problems.push(`block ${p} lies below the heap's first usable byte ${lowest}`);
    if (i + 1 < all.length && p + size > all[i + 1]![0]) problems.push(`block ${p} (+${size}) overlaps block ${all[i + 1]![0]}`);
  }
  return { blocks: all.length, problems: problems.slice(0, 5) };
}

let module: WebAssembly.Module;
beforeAll(async () => {
  module = new WebAssembly.Module(await compileBlockExchange());
});

describe.each(backends)('a wasm module and JS workers share one heap: %s', (backend, create) => {
  it(`${AGENTS} agents x ${BLOCKS} blocks: wasm allocates and JS frees, then JS allocates and wasm frees`, async () => {
    // The memory's first page holds the module's static data; the heap starts after it.
    const memory = new WebAssembly.Memory({ initial: 1, maximum: MAX_BYTES / 65536, shared: true });
    const heap = create({ memory, maxBytes: MAX_BYTES });
    const own = new WebAssembly.Instance(module, { env: { memory, malloc: () => 0, free: () => undefined } }).exports as unknown as BlockExchange;
    const staticEnd = own.staticEnd();
    expect(staticEnd).toBeLessThanOrEqual(heap.space.base);
    const staticBytes = new Uint8Array(memory.buffer, 0, staticEnd).slice();
    const tableSum = own.tableSum();

    const workers = Array.from(
      { length: AGENTS },
      () =>
        new Worker(new URL('./workers/wasm-agent.mjs', import.meta.url), {
          workerData: { handle: heap.handle, module },
          execArgv: [`--conditions=paddock-${backend.replace('_', '-')}`],
        }),
    );
    try {
      const ready = await Promise.all(workers.map((w) => nextMessage<Reply & { backend: string; staticEnd: number }>(w, 'ready')));
      expect(ready.map((r) => r.backend)).toEqual(workers.map(() => backend));
      expect(ready.map((r) => r.staticEnd)).toEqual(workers.map(() => staticEnd));

      for (const [allocSide, freeSide] of [['wasm', 'js'], ['js', 'wasm']] as const) {
        const listed = await roundTrip<Reply & { list: number; got: number }>(workers, 'listed', (i) => ({ kind: 'alloc', side: allocSide, count: BLOCKS, tag: i }));
        expect(listed.map((r) => r.got)).toEqual(workers.map(() => BLOCKS));
        const { blocks, problems } = ledger(heap, listed.map((r) => r.list));
        expect(problems).toEqual([]);
        expect(blocks).toBe(AGENTS * BLOCKS);
        // Agent i's blocks are checked and freed by agent i + 1.
        const freed = await roundTrip<Reply & { bad: number }>(workers, 'freed', (i) => {
          const from = (i + AGENTS - 1) % AGENTS;
          return { kind: 'free', side: freeSide, list: listed[from]!.list, count: BLOCKS, tag: from };
        });
        expect(freed.map((r) => r.bad)).toEqual(workers.map(() => 0));
        await roundTrip(workers, 'drained', () => ({ kind: 'drain' }));
      }
      const stopped = await roundTrip<Reply & { tableSum: number }>(workers, 'stopped', () => ({ kind: 'stop' }));
      expect(stopped.map((r) => r.tableSum)).toEqual(workers.map(() => tableSum));
    } finally {
      await Promise.all(workers.map((w) => w.terminate()));
    }
    heap.drain();
    heap.check();
    expect(heap.stats().liveBytes).toBe(0);
    expect(memory.buffer.byteLength).toBeGreaterThan(heap.space.base + heap.space.headerBytes); // the heap grew the module's memory
    expect(new Uint8Array(memory.buffer, 0, staticEnd)).toEqual(staticBytes);
    expect(own.tableSum()).toBe(tableSum);
  }, 120_000);
});
