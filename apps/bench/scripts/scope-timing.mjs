// A one-shot timing of a scope's bump against the heap's own malloc/free, for the allocator's design note:
//   node apps/bench/scripts/scope-timing.mjs [path to a built allocator bundle]
// Prints the median ns per 64-byte allocation of: 1000 scope.malloc calls in a scope (its open and close
// included), and 1000 heap.malloc+free pairs. Median of 7 rounds of 1000 scopes after 3 warm-up rounds. The
// machine is shared and noisy: run it several times (the scopes bench group is the side-by-side figure).
const file = process.argv[2] ?? new URL('../../../packages/allocator/dist/pool-arena.js', import.meta.url).href;
const { createHeap } = await import(file.startsWith('file:') ? file : new URL(file, `file://${process.cwd()}/`).href);
const PER_SCOPE = 1000;
const SCOPES = 1000;

function scoped(h) {
  for (let s = 0; s < SCOPES; s++) {
    const scope = h.scope();
    for (let i = 0; i < PER_SCOPE; i++) scope.malloc(64);
    scope.close();
  }
}
function pairs(h) {
  for (let s = 0; s < SCOPES; s++) for (let i = 0; i < PER_SCOPE; i++) h.free(h.malloc(64));
}
function median(run) {
  const xs = [];
  for (let r = 0; r < 10; r++) {
    const t = process.hrtime.bigint();
    run();
    if (r >= 3) xs.push(Number(process.hrtime.bigint() - t) / (SCOPES * PER_SCOPE));
  }
  xs.sort((a, b) => a - b);
  return xs[xs.length >> 1].toFixed(1);
}

// A scope per call, the shape of the bench's scratch lane: open, 4 KiB and three small strings, close; against
// the same four blocks as malloc+free pairs. ns per call.
const CALLS = SCOPES * 100;
function callScoped(h) {
  for (let c = 0; c < CALLS; c++) {
    const scope = h.scope();
    scope.malloc(4096);
    scope.malloc(24);
    scope.malloc(40);
    scope.malloc(64);
    scope.close();
  }
}
function callPairs(h) {
  for (let c = 0; c < CALLS; c++) {
    const b = h.malloc(4096);
    const x = h.malloc(24);
    const y = h.malloc(40);
    const z = h.malloc(64);
    h.free(z);
    h.free(y);
    h.free(x);
    h.free(b);
  }
}
function perCall(run) {
  return ((Number(median(run)) * SCOPES * PER_SCOPE) / CALLS).toFixed(1);
}

const heap = createHeap({ maxBytes: 1 << 30 });
console.log(`${heap.backend}: scope.malloc(64) ${median(() => scoped(heap))} ns; heap.malloc(64)+free ${median(() => pairs(heap))} ns`);
console.log(`${heap.backend}: a scope per call (open, 4 KiB + 24 + 40 + 64 B, close) ${perCall(() => callScoped(heap))} ns; the same as malloc+free pairs ${perCall(() => callPairs(heap))} ns`);
