// Each program's split between the JavaScript program and the allocator: the floor heap the multi-agent programs
// run on (built dist/floor-heap.js, from four real workers: blocks freed by another agent come back through the
// shared lists, none handed out twice), the sorting of a profile's samples, and the rows and words of the split.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { type CpuProfile, splitProfile } from '../src/workloads/cpu-split.js';
import { gapText, type SplitProgram, splitRows } from '../src/workloads/split-report.js';

const floorUrl = new URL('../dist/floor-heap.js', import.meta.url).href;

/** One agent: mallocs N stamped blocks, frees its right-hand neighbour's after checking their stamps, mallocs N more. */
const AGENT = `
import { workerData, parentPort } from 'node:worker_threads';
const { attachHeap } = await import(workerData.url);
const h = attachHeap(workerData.handle);
const { id, agents, n } = workerData;
const ptrs = new Int32Array(workerData.ptrs);
const sizes = new Int32Array(workerData.sizes);
const sync = new Int32Array(workerData.sync);
let seed = 0x9e3779b9 ^ id;
const draw = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % 4064) + 32;
function barrier(k) {
  if (Atomics.add(sync, 0, 1) + 1 === agents * k) Atomics.notify(sync, 0);
  while (Atomics.load(sync, 0) < agents * k) Atomics.wait(sync, 0, Atomics.load(sync, 0), 50);
}
function fill(round) {
  for (let i = 0; i < n; i++) {
    const size = draw();
    const p = h.malloc(size);
    const slot = (round * agents + id) * n + i;
    ptrs[slot] = p;
    sizes[slot] = size;
    h.i32[p >>> 2] = slot + 1;
    h.i32[(p + size - 4) >>> 2] = -(slot + 1);
  }
}
fill(0);
barrier(1);
const right = (id + 1) % agents;
let bad = 0;
for (let i = 0; i < n; i++) {
  const slot = right * n + i;
  const p = ptrs[slot];
  if (h.i32[p >>> 2] !== slot + 1 || h.i32[(p + sizes[slot] - 4) >>> 2] !== -(slot + 1)) bad++;
  h.free(p);
}
barrier(2);
fill(1);
parentPort.postMessage(bad);
`;

describe('the floor heap of the multi-agent programs', () => {
  it('four workers: blocks freed by a neighbour come back through the shared lists, none handed out twice', async () => {
    const { createHeap } = (await import(floorUrl)) as typeof import('../src/peers/floor-heap.js');
    const heap = createHeap({ maxBytes: 64 << 20 });
    const agents = 4;
    const n = 3000;
    const ptrs = new SharedArrayBuffer(2 * agents * n * 4);
    const sizes = new SharedArrayBuffer(2 * agents * n * 4);
    const sync = new SharedArrayBuffer(4);
    const bads = await Promise.all(
      Array.from({ length: agents }, (_, id) => {
        const w = new Worker(new URL(`data:text/javascript,${encodeURIComponent(AGENT)}`), {
          workerData: { url: floorUrl, handle: heap.handle, id, agents, n, ptrs, sizes, sync },
        });
        return new Promise<number>((resolve, reject) => {
          w.once('message', resolve);
          w.once('error', reject);
        }).finally(() => void w.terminate());
      }),
    );
    expect(bads).toEqual([0, 0, 0, 0]);
    // The second round's blocks, with nothing freed since: distinct, apart, their stamps intact.
    const p = new Int32Array(ptrs).subarray(agents * n);
    const s = new Int32Array(sizes).subarray(agents * n);
    const order = Array.from(p.keys()).sort((x, y) => p[x]! - p[y]!);
    for (let k = 1; k < order.length; k++) expect(p[order[k - 1]!]! + s[order[k - 1]!]!).toBeLessThanOrEqual(p[order[k]!]!);
    for (let k = 0; k < p.length; k++) expect(heap.i32[p[k]! >>> 2]).toBe(agents * n + k + 1);
    // The neighbours' frees were reused: the heap carved fewer chunks than two rounds of fresh blocks would need.
    expect(heap.stats().committedBytes).toBeLessThan(2 * agents * n * 4096);
  }, 60_000);

  it('a heap made over the last one\'s memory starts empty', async () => {
    const { createReusedHeap } = (await import(floorUrl)) as typeof import('../src/peers/floor-heap.js');
    const a = createReusedHeap({ maxBytes: 4 << 20 });
    const first = a.malloc(100);
    for (let i = 0; i < 1000; i++) a.malloc(100);
    const b = createReusedHeap({ maxBytes: 4 << 20 });
    expect(b.handle.memory).toBe(a.handle.memory);
    expect(b.stats().committedBytes).toBe(0);
    expect(b.malloc(100)).toBe(first);
    expect(createReusedHeap({ maxBytes: 8 << 20 }).handle.memory).not.toBe(a.handle.memory);
  });

  it('says out of memory with 0 (the programs\' mustMalloc turns it into an error)', async () => {
    const { createHeap } = (await import(floorUrl)) as typeof import('../src/peers/floor-heap.js');
    const heap = createHeap({ maxBytes: 1 << 20 });
    let got = 0;
    while (heap.malloc(60_000) !== 0) got++;
    expect(got).toBe(15); // 16 chunks of 64 KiB, the first holds the null pointer
    expect(heap.malloc(60_000)).toBe(0);
  });
});

describe('a profile sorted by where its time went', () => {
  const alloc = 'file:///x/pool-arena.js';
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '' }, children: [2, 5, 6, 7] },
      { id: 2, callFrame: { functionName: 'loop', url: 'file:///x/program.js' }, children: [3, 8] },
      { id: 3, callFrame: { functionName: 'malloc', url: alloc }, children: [4] },
      { id: 4, callFrame: { functionName: 'helper', url: 'file:///x/other.js' } },
      { id: 5, callFrame: { functionName: '(garbage collector)', url: '' } },
      { id: 6, callFrame: { functionName: '(idle)', url: '' } },
      { id: 7, callFrame: { functionName: 'wait', url: alloc } },
      { id: 8, callFrame: { functionName: 'waitUntil', url: 'file:///x/program.js' } },
    ],
    startTime: 0,
    endTime: 8000,
    // a sample every 1 ms: program, allocator, allocator (below it), gc, idle, heap wait, harness wait, program
    samples: [2, 3, 4, 5, 6, 7, 8, 2],
    timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };

  it('sorts every sample, each weighing the time to the next', () => {
    expect(splitProfile(profile, alloc)).toEqual({ allocatorMs: 2, programMs: 2, gcMs: 1, waitingMs: 3, samples: 8 });
  });

  it('takes only the samples within the run', () => {
    expect(splitProfile(profile, alloc, 1000, 3000)).toEqual({ allocatorMs: 2, programMs: 0, gcMs: 1, waitingMs: 0, samples: 3 });
  });
});

describe('the split of a program gap to native', () => {
  const program = (rates: Record<string, number>): SplitProgram => ({
    name: 'p',
    metric: 'rate',
    agents: 2,
    cells: Object.entries(rates).map(([peer, v]) => ({ peer, error: null, samples: [{ value: v }, { value: v * 2 }, { value: v }] })),
  });

  it('gives the allocator 1 - paddock / floor of the time, and the JavaScript program the floor against native', () => {
    const [r] = splitRows([program({ paddock: 3, floor: 4, mimalloc: 8 })]);
    expect(r!.rate).toBe(3);
    expect(r!.allocator).toBeCloseTo(0.25);
    expect(gapText(r!)).toBe('the JavaScript program to -50%, the allocator from there');
  });

  it('says which side holds the gap at the edges', () => {
    const text = (rates: Record<string, number>) => gapText(splitRows([program(rates)])[0]!);
    expect(text({ paddock: 9, floor: 10, mimalloc: 8 })).toBe('none: at or above native');
    expect(text({ paddock: 4, floor: 10, mimalloc: 8 })).toBe('the allocator: on the floor the program passes native');
    expect(text({ paddock: 4, floor: 4, mimalloc: 8 })).toBe('the JavaScript program to -50%, the allocator from there');
    expect(text({ paddock: 4, floor: 2, mimalloc: 8 })).toBe('no split: the floor is slower here (-50%), read the samples');
    expect(splitRows([program({ paddock: 4, floor: 2, mimalloc: 8 })])[0]!.allocator).toBeNull();
    expect(text({ paddock: 4, mimalloc: 8 })).toBe('no floor for this program');
  });
});
