// What one handed-over block costs, on one thread (no scheduling, no cache traffic between cores): agent A
// mallocs 32 blocks, agent B (a second agent on the same heap) frees them, A mallocs again (reusing them once
// they are home). For the cross-agent design note:
//   node apps/bench/scripts/handoff.mjs [pool-arena|pool-classic|pool-global] [size] [dist folder]
// Prints the median ns per block (A's malloc + B's free + A's reuse) of 9 rounds of 20,000 batches after 3
// warm-up rounds. Add `node --cpu-prof` to see which functions the time goes to.
const backend = process.argv[2] ?? 'pool-arena';
const size = Number(process.argv[3] ?? 4096);
const dist = process.argv[4] ?? new URL('../../../packages/allocator/dist', import.meta.url).pathname;
const { createHeap, attachHeap } = await import(`${dist}/${backend}.js`);
const A = createHeap({ maxBytes: 1 << 30 });
const B = attachHeap(A.handle);
const ptrs = new Int32Array(32);
const ROUNDS = 20000;

function round() {
  for (let i = 0; i < 32; i++) {
    const p = A.malloc(size);
    A.i32[p >>> 2] = i;
    ptrs[i] = p;
  }
  for (let i = 0; i < 32; i++) B.free(ptrs[i]);
}

const xs = [];
for (let r = 0; r < 12; r++) {
  const t = process.hrtime.bigint();
  for (let k = 0; k < ROUNDS; k++) round();
  if (r >= 3) xs.push(Number(process.hrtime.bigint() - t) / (ROUNDS * 32));
}
xs.sort((a, b) => a - b);
console.log(`${backend} ${size} B: ${xs[xs.length >> 1].toFixed(1)} ns per handed-over block`);
