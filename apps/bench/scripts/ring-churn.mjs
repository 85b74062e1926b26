// The mixed-churn program's steps on one thread, for the cross-agent design note: two agents of one heap take
// turns; each frees the burst the other sent it, allocates its scratch blocks, sends a burst of new ones, and frees
// its scratch (4 KiB blocks, two bursts in flight). No scheduling and no waits: the allocator's instructions alone.
//   node apps/bench/scripts/ring-churn.mjs [pool-arena|pool-classic|pool-global] [burst] [scratch] [dist folder]
// Prints the median ns per block sent on of 9 rounds of 20,000 turns after 3 warm-up rounds.
const backend = process.argv[2] ?? 'pool-arena';
const burst = Number(process.argv[3] ?? 16);
const scratch = Number(process.argv[4] ?? 8);
const dist = process.argv[5] ?? new URL('../../../packages/allocator/dist', import.meta.url).pathname;
const { createHeap, attachHeap } = await import(`${dist}/${backend}.js`);
const A = createHeap({ maxBytes: 1 << 30 });
const agents = [A, attachHeap(A.handle)];
const inbound = [[], []]; // inbound[k]: the blocks on their way to agent k, oldest first
for (let k = 0; k < 2; k++) {
  for (let b = 0; b < 2 * burst; b++) {
    const p = agents[k].malloc(4096);
    agents[k].i32[p >>> 2] = k;
    inbound[1 - k].push(p);
  }
}
const kept = new Array(scratch).fill(0);

function turn(k) {
  const h = agents[k];
  const q = inbound[k];
  for (let i = 0; i < burst; i++) h.free(q.shift());
  for (let s = 0; s < scratch; s++) {
    const p = h.malloc(4096);
    h.i32[p >>> 2] = s;
    kept[s] = p;
  }
  for (let i = 0; i < burst; i++) {
    const p = h.malloc(4096);
    h.i32[p >>> 2] = k;
    inbound[1 - k].push(p);
  }
  for (let s = 0; s < scratch; s++) h.free(kept[s]);
}

const TURNS = 20_000;
const xs = [];
for (let r = 0; r < 12; r++) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < TURNS; i++) turn(i & 1);
  if (r >= 3) xs.push(Number(process.hrtime.bigint() - t) / (TURNS * burst));
}
xs.sort((a, b) => a - b);
console.log(`${backend} ${burst}/${scratch}: ${xs[xs.length >> 1].toFixed(1)} ns per block sent on`);
