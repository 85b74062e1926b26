// Why `heap.i32` costs more on Node 24 and 26 than on Node 20: the same loop (a write and a read through a view taken
// from a getter) over getters of different shapes, each in its own process, on the built pool_arena heap's views:
//   node apps/bench/scripts/getter-shapes.mjs            (runs every shape under this runtime)
//   <runtime> apps/bench/scripts/getter-shapes.mjs SHAPE (one shape, ns an access: the least of 7 passes of 1e7)
// Shapes: `heap` Paddock's getter; `field` a getter that returns a field (`this.space.i32`); `branch` one that checks a
// word first and returns null in the cold branch; `method` the same check with a method call (`refresh()`) in the
// cold branch, as Paddock's; `throw` the same check throwing in the cold branch.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SHAPES = ['heap', 'field', 'branch', 'method', 'throw'];
const shape = process.argv[2];
if (shape === undefined) {
  const self = fileURLToPath(import.meta.url);
  const row = SHAPES.map((s) => `${s} ${spawnSync(process.execPath, [self, s], { encoding: 'utf8' }).stdout.trim()} ns`);
  console.log(`${process.release?.name ?? 'runtime'} ${process.version}: ${row.join(', ')}`);
} else {
  const { createHeap } = await import(new URL('../../../packages/allocator/dist/pool-arena.js', import.meta.url).href);
  const heap = createHeap({ maxBytes: 1 << 30 });
  const p = heap.malloc(64);
  class Field { constructor(sp) { this.space = sp; } get i32() { return this.space.i32; } }
  class Branch { constructor(sp) { this.space = sp; } get i32() { const sp = this.space; return sp.viewBytes < 0 ? null : sp.i32; } }
  class Method { constructor(sp) { this.space = sp; } get i32() { const sp = this.space; if (sp.viewBytes < 0) sp.refresh(); return sp.i32; } }
  class Throw { constructor(sp) { this.space = sp; } get i32() { const sp = this.space; if (sp.viewBytes < 0) throw new Error('no'); return sp.i32; } }
  const target = { heap, field: new Field(heap.space), branch: new Branch(heap.space), method: new Method(heap.space), throw: new Throw(heap.space) }[shape];
  if (target === undefined) throw new Error(`shape must be one of ${SHAPES.join(', ')}`);
  const loop = (h, n) => {
    let s = 0;
    for (let i = 0; i < n; i++) {
      const v = h.i32;
      v[p >>> 2] = i;
      s += v[p >>> 2];
    }
    return s;
  };
  let best = Infinity;
  for (let r = 0; r < 9; r++) {
    const t = performance.now();
    loop(target, 1e7);
    if (r >= 2) best = Math.min(best, ((performance.now() - t) * 1e6) / 1e7);
  }
  console.log(best.toFixed(2));
}
