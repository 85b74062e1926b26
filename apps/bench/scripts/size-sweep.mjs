// The size sweep's loop alone, for the large tier's design note: `live` blocks of one size (every page written
// once), then each step frees a random live block and mallocs the same size into its slot. One thread.
//   node apps/bench/scripts/size-sweep.mjs [size in MiB, default 2] [dist folder]
// Prints the median ns per step (free + malloc) of 7 rounds of 100,000 steps after 2 warm-up rounds, and the
// minor page faults per step over the measured rounds. Add `node --cpu-prof` to see where the time goes.
const mib = Number(process.argv[2] ?? 2);
const dist = process.argv[3] ?? new URL('../../../packages/allocator/dist', import.meta.url).pathname;
const { createHeap } = await import(`${dist}/pool-arena.js`);
const size = mib * 1024 * 1024;
const live = Math.max(4, Math.min(4096, Math.floor((64 * 1024 * 1024) / size)));
const STEPS = 100_000;
const heap = createHeap({ maxBytes: 2 ** 31 });
const ptr = new Int32Array(live);
for (let i = 0; i < live; i++) {
  ptr[i] = heap.malloc(size);
  const u8 = heap.u8;
  for (let q = ptr[i]; q < ptr[i] + size; q += 4096) u8[q] = 1;
}
let seed = 0x5eeb ^ mib;
const victims = new Int32Array(STEPS);
for (let i = 0; i < STEPS; i++) {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  victims[i] = seed % live;
}
function round() {
  for (let i = 0; i < STEPS; i++) {
    const k = victims[i];
    heap.free(ptr[k]);
    ptr[k] = heap.malloc(size);
  }
}
const xs = [];
let faults = 0;
for (let r = 0; r < 9; r++) {
  const f0 = process.resourceUsage().minorPageFault;
  const t = process.hrtime.bigint();
  round();
  if (r >= 2) {
    xs.push(Number(process.hrtime.bigint() - t) / STEPS);
    faults += process.resourceUsage().minorPageFault - f0;
  }
}
xs.sort((a, b) => a - b);
console.log(`${mib} MiB: ${xs[3].toFixed(1)} ns per free + malloc; ${(faults / (7 * STEPS)).toFixed(3)} minor faults per step`);
