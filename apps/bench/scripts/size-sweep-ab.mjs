// The size sweep's loop (size-sweep.mjs) for two builds in one process, alternating rounds, so that both meet the
// same load on a shared machine: each build gets its own heap of 2 GiB and its own copy of the loop.
//   node apps/bench/scripts/size-sweep-ab.mjs <size in MiB> <dist folder A> <dist folder B>
// Prints the median and the minimum ns per step (free + malloc) of 20 rounds of 100,000 steps each, after 4 warm-up rounds.
const mib = Number(process.argv[2] ?? 8);
const builds = { old: process.argv[3], new: process.argv[4] };
if (!builds.old || !builds.new) throw new Error('usage: size-sweep-ab.mjs <MiB> <dist A> <dist B>');
const size = mib * 1024 * 1024;
const live = Math.max(4, Math.min(4096, Math.floor((64 * 1024 * 1024) / size)));
const STEPS = 100_000;
const setups = {};
for (const [k, dist] of Object.entries(builds)) {
  const { createHeap } = await import(`${dist}/pool-arena.js`);
  const heap = createHeap({ maxBytes: 2 ** 31 });
  const ptr = new Int32Array(live);
  for (let i = 0; i < live; i++) { ptr[i] = heap.malloc(size); const u8 = heap.u8; for (let q = ptr[i]; q < ptr[i] + size; q += 4096) u8[q] = 1; }
  setups[k] = { heap, ptr };
}
let seed = 0x5eeb ^ mib;
const victims = new Int32Array(STEPS);
for (let i = 0; i < STEPS; i++) { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; victims[i] = seed % live; }
const mk = () => new Function('victims', 'STEPS', 'size', 'return function round(heap, ptr) { for (let i = 0; i < STEPS; i++) { const k = victims[i]; heap.free(ptr[k]); ptr[k] = heap.malloc(size); } }')(victims, STEPS, size);
const rounds = { old: mk(), new: mk() };
const xs = { old: [], new: [] };
for (let r = 0; r < 24; r++) {
  for (const k of r % 2 ? ['old', 'new'] : ['new', 'old']) {
    const t = process.hrtime.bigint();
    rounds[k](setups[k].heap, setups[k].ptr);
    if (r >= 4) xs[k].push(Number(process.hrtime.bigint() - t) / STEPS);
  }
}
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
console.log(`${mib} MiB: A median ${med(xs.old).toFixed(1)} min ${Math.min(...xs.old).toFixed(1)} | B median ${med(xs.new).toFixed(1)} min ${Math.min(...xs.new).toFixed(1)} ns/step`);
