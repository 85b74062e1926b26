// Micro-measurements of Paddock's hot paths outside the bench harness, for the design notes:
//   node apps/bench/scripts/hot-paths.mjs [path to a built allocator bundle]
// Prints the median ns of: a malloc(32)/free pair on one heap; the same pair on a fresh heap every round
// (the bench's shape); and one access to heap.i32 (the view getter) with a read and a write through it.
// Each figure is the median of 7 rounds of 1e6 operations after 3 warm-up rounds. The machine is shared and
// noisy: run it several times, and compare builds in alternating processes.
const file = process.argv[2] ?? new URL('../../../packages/allocator/dist/pool-arena.js', import.meta.url).href;
const { createHeap } = await import(file.startsWith('file:') ? file : new URL(file, `file://${process.cwd()}/`).href);
const N = 1e6;

function pairs(h, n) {
  for (let i = 0; i < n; i++) h.free(h.malloc(32));
}
function getter(h, p, n) {
  let s = 0;
  for (let i = 0; i < n; i++) {
    const v = h.i32;
    v[p >>> 2] = i;
    s += v[p >>> 2];
  }
  return s;
}
function median(run) {
  const xs = [];
  for (let r = 0; r < 10; r++) {
    const t = process.hrtime.bigint();
    run();
    if (r >= 3) xs.push(Number(process.hrtime.bigint() - t) / N);
  }
  xs.sort((a, b) => a - b);
  return xs[xs.length >> 1].toFixed(1);
}

const one = createHeap({ maxBytes: 1 << 30 });
console.log(`pair, one heap:          ${median(() => pairs(one, N))} ns`);
console.log(`pair, a fresh heap each: ${median(() => pairs(createHeap({ maxBytes: 1 << 30 }), N))} ns`);
const p = one.malloc(64);
console.log(`heap.i32 access:         ${median(() => getter(one, p, N))} ns`);
