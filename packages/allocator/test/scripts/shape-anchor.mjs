// Run with --allow-natives-syntax --expose-gc: optimizes a malloc/free loop on one heap, drops the heap,
// collects garbage and prints the loop's V8 optimization status before and after, next to a control (a plain
// class whose last instance is dropped the same way). Arguments: the built allocator file to load, and the case:
// `pair` (32-byte blocks on a 1 GiB heap, the agent's first) or `oversized` (16 MiB blocks on a 2 GiB heap made
// after a 128 MiB one, which is kept: a later heap that is larger than every heap before it).
const { createHeap } = await import(process.argv[2]);
const oversized = process.argv[3] === 'oversized';
const size = oversized ? 16 * 1024 * 1024 : 32;

function pair(h, n) {
  for (let i = 0; i < n; i++) h.free(h.malloc(size));
}
class Box {
  constructor(v) {
    this.a = v;
    this.b = v + 1;
  }
  get() {
    return this.a + this.b;
  }
}
function sum(x, n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += x.get();
  return s;
}

const first = oversized ? createHeap({ maxBytes: 128 * 1024 * 1024 }) : null;
let heap = createHeap({ maxBytes: oversized ? 2 ** 31 : 1 << 30 });
let box = new Box(1);
%PrepareFunctionForOptimization(pair);
%PrepareFunctionForOptimization(sum);
pair(heap, 100);
sum(box, 100);
pair(heap, 100);
sum(box, 100);
%OptimizeFunctionOnNextCall(pair);
%OptimizeFunctionOnNextCall(sum);
pair(heap, 100);
sum(box, 100);
const before = { pair: %GetOptimizationStatus(pair), control: %GetOptimizationStatus(sum) };
heap = null;
box = null;
for (let i = 0; i < 6; i++) gc();
const after = { pair: %GetOptimizationStatus(pair), control: %GetOptimizationStatus(sum) };
console.log(JSON.stringify({ before, after, kept: first !== null }));
