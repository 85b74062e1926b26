// What the global pool's tagged list heads cost, for its design note:
//   node apps/bench/scripts/global-lists.mjs pairs|tagged|untagged
// pairs: GlobalPool malloc(64)+free; tagged: a push and a pop on one of its tagged list heads (64-bit head, tag
// bumped on pop); untagged: the same push and pop over a plain Int32 head (no ABA protection, the floor).
// Prints ns per pair for 5 rounds of 4 million after one warm-up round (take the median). Add --trace-gc to the
// node command to count the young-generation collections the BigInt64 head costs.
const dist = (pkg) => new URL(`../../../packages/${pkg}/dist/index.js`, import.meta.url).href;
const { createAddressSpace } = await import(dist('platform'));
const { GlobalPool, FreeLists, HEAD_BYTES, POOL_ROOT, CLASS_COUNT } = await import(dist('pool-global'));

const space = createAddressSpace({ maxBytes: 1 << 30 });
const pool = GlobalPool.create(space);
const N = 4e6;
const lists = new FreeLists(space.buffer, space.root(POOL_ROOT) + HEAD_BYTES, CLASS_COUNT);
const block = pool.malloc(64);
const u32 = space.u32;
const plain = new Int32Array(new SharedArrayBuffer(64));

function pairs() {
  for (let i = 0; i < N; i++) pool.free(pool.malloc(64));
}
function tagged() {
  for (let i = 0; i < N; i++) {
    lists.push(u32, 1, block, block);
    for (;;) {
      const head = lists.load(1);
      if (lists.casPop(1, head, u32[lists.first(head) >>> 2])) break;
    }
  }
}
function untagged() {
  for (let i = 0; i < N; i++) {
    for (;;) {
      const head = Atomics.load(plain, 1);
      u32[block >>> 2] = head;
      if (Atomics.compareExchange(plain, 1, head, block) === head) break;
    }
    for (;;) {
      const head = Atomics.load(plain, 1);
      if (Atomics.compareExchange(plain, 1, head, u32[head >>> 2] | 0) === head) break;
    }
  }
}

const which = process.argv[2];
const run = { pairs, tagged, untagged }[which];
if (run === undefined) {
  console.error('usage: node apps/bench/scripts/global-lists.mjs pairs|tagged|untagged');
  process.exit(2);
}
for (let r = 0; r < 6; r++) {
  const t = performance.now();
  run();
  if (r >= 1) console.log(`${which}: ${(((performance.now() - t) * 1e6) / N).toFixed(1)} ns per pair`);
}
