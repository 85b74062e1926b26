// The pair under one runtime on each kind of shared memory, for the backing chosen under Bun (docs/design/platform.md):
//   <runtime> apps/bench/scripts/backing-pair.mjs floor fixed|growable       (a bare free list, fixed-length views)
//   <runtime> apps/bench/scripts/backing-pair.mjs paddock fixed|growable|wasm (Paddock's pool_arena, after `pnpm build`)
// floor: the least of 10 passes of 1e6 pairs, ns a pair. paddock: the medians of 9 passes (after 3 warm-up passes) of
// 256 mallocs of 32 B then their 256 frees, 4,000 times, and of as many malloc + free pairs: ns a malloc, a free, a pair.
const [what = 'paddock', backing = 'growable'] = process.argv.slice(2);

function floorPairs() {
  const sab = backing === 'growable' ? new SharedArrayBuffer(1 << 24, { maxByteLength: 1 << 28 }) : new SharedArrayBuffer(1 << 24);
  const u32 = new Uint32Array(sab, 0, (1 << 24) / 4);
  class Floor {
    constructor() {
      this.u32 = u32;
      this.head = 0;
      this.bump = 64;
    }
    malloc() {
      const h = this.head;
      if (h !== 0) {
        this.head = this.u32[h >>> 2];
        return h;
      }
      const p = this.bump;
      this.bump += 32;
      return p;
    }
    free(p) {
      const u = this.u32;
      if ((p >>> 2) + 2 <= u.length && u[(p >>> 2) + 1] !== (0x46524545 ^ p)) {
        u[p >>> 2] = this.head;
        u[(p >>> 2) + 1] = 0x46524545 ^ p;
        this.head = p;
      }
    }
  }
  const f = new Floor();
  const run = (n) => {
    for (let i = 0; i < n; i++) {
      const p = f.malloc();
      f.u32[(p >>> 2) + 1] = 0;
      f.free(p);
    }
  };
  let least = Infinity;
  for (let k = 0; k < 10; k++) {
    const t = performance.now();
    run(1e6);
    least = Math.min(least, performance.now() - t);
  }
  console.log(`floor, ${backing} SharedArrayBuffer: ${least.toFixed(2)} ns a pair`);
}

// Module-level functions over module-level bindings: JavaScriptCore ran the same loops as closures over block-scoped
// constants at nearly twice the time, which would measure the harness, not the heap.
let h = null;
const K = 256;
const ptrs = new Int32Array(K);
function mallocs() {
  for (let i = 0; i < K; i++) ptrs[i] = h.malloc(32);
}
function frees() {
  for (let i = 0; i < K; i++) h.free(ptrs[i]);
}
function pairs() {
  for (let i = 0; i < K; i++) h.free(h.malloc(32));
}

async function paddockPairs() {
  const { createHeap } = await import(new URL('../../../packages/allocator/dist/pool-arena.js', import.meta.url).href);
  h = createHeap({ maxBytes: 1 << 28, backing });
  const R = 4000;
  const m = [];
  const f = [];
  const p = [];
  for (let pass = 0; pass < 12; pass++) {
    let tm = 0;
    let tf = 0;
    for (let r = 0; r < R; r++) {
      const a = performance.now();
      mallocs();
      const b = performance.now();
      frees();
      tf += performance.now() - b;
      tm += b - a;
    }
    const c = performance.now();
    for (let r = 0; r < R; r++) pairs();
    const tp = performance.now() - c;
    if (pass >= 3) {
      m.push((tm * 1e6) / (R * K));
      f.push((tf * 1e6) / (R * K));
      p.push((tp * 1e6) / (R * K));
    }
  }
  const med = (xs) => xs.sort((x, y) => x - y)[xs.length >> 1].toFixed(2);
  console.log(`paddock, ${backing} backing: malloc ${med(m)} ns, free ${med(f)} ns, pair ${med(p)} ns`);
}

if (what === 'floor') floorPairs();
else await paddockPairs();
