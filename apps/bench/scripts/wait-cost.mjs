// What a heap's wait costs beside the OS wait itself, for the cross-agent design note: `heap.wait` on a word whose
// value differs returns 'not-equal' at once but still runs the backend's flush before and drain after; a bare
// `Atomics.wait` on the same word is the floor. One thread, two agents, 64 blocks sent from one to the other first.
//   node apps/bench/scripts/wait-cost.mjs [pool-arena|pool-classic|pool-global] [dist folder]
// Prints the median ns per call of 9 rounds of 100,000 calls, each way.
const backend = process.argv[2] ?? 'pool-arena';
const dist = process.argv[3] ?? new URL('../../../packages/allocator/dist', import.meta.url).pathname;
const { createHeap, attachHeap } = await import(`${dist}/${backend}.js`);
const heap = createHeap({ maxBytes: 1 << 28 });
const other = attachHeap(heap.handle);
for (const p of Array.from({ length: 64 }, () => heap.malloc(4096))) other.free(p);
const word = new Int32Array(new SharedArrayBuffer(8));

function median(call) {
  const xs = [];
  for (let r = 0; r < 9; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < 100_000; i++) call();
    xs.push(Number(process.hrtime.bigint() - t) / 100_000);
  }
  return xs.sort((a, b) => a - b)[4].toFixed(0);
}

const hooked = median(() => heap.wait(word, 0, 1, 0));
const bare = median(() => Atomics.wait(word, 0, 1, 0));
console.log(`${backend}: heap.wait ${hooked} ns per call, Atomics.wait ${bare} ns (both return 'not-equal' at once)`);
