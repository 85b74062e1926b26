// What one handed-over block costs, on one thread (no scheduling, no cache traffic between cores): agent A
// mallocs a batch of blocks (32 unless given), agent B (a second agent on the same heap) frees them, A mallocs again
// (reusing them once they are home). For the cross-agent design note:
//   node apps/bench/scripts/handoff.mjs [pool-arena|pool-classic|pool-global] [size] [dist folder] [blocks in flight]
// (an empty dist folder, '', means this checkout's). Prints the median ns per block (A's malloc + B's free + A's
// reuse) of 9 rounds of about 640,000 blocks after 3 warm-up rounds; with 256 blocks in flight or more (a working
// set larger than the first-level caches), also each side's median: A's malloc and B's foreign free. Add
// `node --cpu-prof` to see which functions the time goes to.
const backend = process.argv[2] ?? 'pool-arena';
const size = Number(process.argv[3] ?? 4096);
const dist = process.argv[4] || new URL('../../../packages/allocator/dist', import.meta.url).pathname;
const batch = Number(process.argv[5] ?? 32);
if (!(Number.isInteger(batch) && batch >= 1)) throw new RangeError(`blocks in flight: a positive integer, got ${process.argv[5]}`);
const { createHeap, attachHeap } = await import(`${dist}/${backend}.js`);
const A = createHeap({ maxBytes: 1 << 30 });
const B = attachHeap(A.handle);
const ptrs = new Int32Array(batch);
const ROUNDS = Math.max(1, Math.round((20000 * 32) / batch));
const sides = batch >= 256; // a clock read per side and batch costs too much on smaller batches
let mallocMs = 0;
let freeMs = 0;

function round() {
  const t0 = sides ? performance.now() : 0;
  for (let i = 0; i < batch; i++) {
    const p = A.malloc(size);
    A.i32[p >>> 2] = i;
    ptrs[i] = p;
  }
  const t1 = sides ? performance.now() : 0;
  for (let i = 0; i < batch; i++) B.free(ptrs[i]);
  if (sides) {
    mallocMs += t1 - t0;
    freeMs += performance.now() - t1;
  }
}

const xs = [];
const ms = [];
const fs = [];
for (let r = 0; r < 12; r++) {
  mallocMs = 0;
  freeMs = 0;
  const t = process.hrtime.bigint();
  for (let k = 0; k < ROUNDS; k++) round();
  if (r >= 3) {
    xs.push(Number(process.hrtime.bigint() - t) / (ROUNDS * batch));
    ms.push((mallocMs * 1e6) / (ROUNDS * batch));
    fs.push((freeMs * 1e6) / (ROUNDS * batch));
  }
}
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const each = sides ? ` (malloc ${median(ms).toFixed(1)} ns, foreign free ${median(fs).toFixed(1)} ns)` : '';
console.log(`${backend} ${size} B, ${batch} in flight: ${median(xs).toFixed(1)} ns per handed-over block${each}`);
