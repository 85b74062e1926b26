// What `heap.snapshot()` costs on a large heap, for the snapshot's design note: one agent fills a heap with
// GIB GiB of blocks of mixed sizes (32 B to 400 KB; about 110,000 blocks per GiB), plus one large object and one
// oversized mapping, then takes 15 snapshots and prints the median and the fastest, and what a structured clone
// of one costs:
//   node apps/bench/scripts/snapshot-cost.mjs [GiB (default 1)] [backend: pool-arena] [dist folder]
const [gib = '1', backend = 'pool-arena', dist = new URL('../../../packages/allocator/dist', import.meta.url).pathname] = process.argv.slice(2);
const { createHeap } = await import(`${dist}/${backend}.js`);
const target = Number(gib) * 2 ** 30;
const heap = createHeap({ maxBytes: Math.min(2 ** 32 - 65536, target * 2) });
const sizes = [32, 64, 100, 256, 1000, 4096, 16384, 50000];
let blocks = 0;
let bytes = 0;
for (let i = 0; bytes < target * 0.95; i++) {
  const size = sizes[i % sizes.length] * (i % 97 === 0 ? 8 : 1);
  heap.malloc(size);
  blocks++;
  bytes += size;
}
heap.malloc(1.5 * 2 ** 20);
heap.malloc(40 * 2 ** 20);
const times = [];
let snapshot;
for (let k = 0; k < 15; k++) {
  const t = performance.now();
  snapshot = heap.snapshot();
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
const t = performance.now();
structuredClone(snapshot);
const cloneMs = performance.now() - t;
const mib = (n) => (n / 2 ** 20).toFixed(0);
console.log(
  `${backend}: ${blocks} blocks, ${mib(bytes)} MiB live, ${snapshot.arena ? snapshot.arena.arenas.length : 0} arenas; ` +
    `snapshot median ${times[7].toFixed(2)} ms, fastest ${times[0].toFixed(2)} ms; structured clone ${cloneMs.toFixed(2)} ms`,
);
