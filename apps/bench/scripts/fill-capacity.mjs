// How much of a fresh heap blocks of one size fill: for each heap size and block size, a fresh pool_arena heap
// takes malloc(size) until HeapError OUT_OF_MEMORY, then reports count x size / maxBytes and whether check()
// passes after.
//   node apps/bench/scripts/fill-capacity.mjs [bundle] [maxBytes,...] [size,...]
// Defaults: the built bundle, 1 GiB and 4 GiB, 32 B / 4 KiB / 64 KiB / 256 KiB / 512 KiB / 1 MiB.
const KiB = 1024;
const MiB = KiB * KiB;
const GiB = MiB * KiB;
const file = process.argv[2] ?? new URL('../../../packages/allocator/dist/pool-arena.js', import.meta.url).href;
const { createHeap } = await import(file.startsWith('file:') ? file : new URL(file, `file://${process.cwd()}/`).href);
const maxes = (process.argv[3] ?? `${GiB},${4 * GiB}`).split(',').map(Number);
const sizes = (process.argv[4] ?? `32,${4 * KiB},${64 * KiB},${256 * KiB},${512 * KiB},${MiB}`).split(',').map(Number);
for (const maxBytes of maxes) {
  for (const size of sizes) {
    const heap = createHeap({ maxBytes });
    let n = 0;
    try {
      for (;;) {
        heap.malloc(size);
        n++;
      }
    } catch (err) {
      if (err?.code !== 'OUT_OF_MEMORY') throw err;
    }
    let check = 'check() clean';
    try {
      heap.check();
    } catch (err) {
      check = `check(): ${err.message}`;
    }
    console.log(`maxBytes ${(maxBytes / GiB).toFixed(2)} GiB, ${size} B blocks: ${n}, ${((100 * n * size) / maxBytes).toFixed(1)}% of maxBytes, ${check}`);
  }
}
