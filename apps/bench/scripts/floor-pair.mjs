// The pair malloc(32) + free on a bare free list over an Int32Array (the bench's `floor` shape) and on Paddock's
// pool_arena heap, under the runtime that runs it: tells a runtime's cost for this kind of code from Paddock's own.
//   <runtime> apps/bench/scripts/floor-pair.mjs floor|paddock      (after `pnpm build`; one allocator a process)
// Prints ns an op: the least of 7 passes of 1e6 after 3 warm-up passes.
class Floor {
  constructor() {
    this.i32 = new Int32Array(new SharedArrayBuffer(1 << 24));
    this.head = 0;
    this.bump = 64;
  }
  malloc(size) {
    const h = this.head;
    if (h !== 0) {
      this.head = this.i32[h >>> 2];
      return h;
    }
    const p = this.bump;
    this.bump += (size + 15) & ~15;
    return p;
  }
  free(p) {
    this.i32[p >>> 2] = this.head;
    this.head = p;
  }
}
const { createHeap } = await import(new URL('../../../packages/allocator/dist/pool-arena.js', import.meta.url).href);
function pairs(h, n) {
  for (let i = 0; i < n; i++) h.free(h.malloc(32));
}
function least(h) {
  let best = Infinity;
  for (let r = 0; r < 10; r++) {
    const t = performance.now();
    pairs(h, 1e6);
    if (r >= 3) best = Math.min(best, ((performance.now() - t) * 1e6) / 1e6);
  }
  return best.toFixed(2);
}
const which = process.argv[2];
if (which !== 'floor' && which !== 'paddock') throw new Error('usage: floor-pair.mjs floor|paddock');
console.log(`${which} pair ${least(which === 'floor' ? new Floor() : createHeap({ maxBytes: 1 << 30 }))} ns`);
