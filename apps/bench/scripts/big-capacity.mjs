// Capacity for big blocks on fresh heaps of the default backend, for the large tier's design note:
//   node apps/bench/scripts/big-capacity.mjs [maxBytes in MiB, default 1024] [dist folder] [fill|single|realloc|all] [sizes in bytes, comma-separated]
// fill: for each size, a fresh heap filled with live blocks of that size until OUT_OF_MEMORY; prints the share
// of maxBytes live (count x size / maxBytes). single: the largest one malloc a fresh heap serves (binary search
// to 64 KiB, a fresh heap per try). realloc: one block grown x1.5 a step from 64 KiB (nothing else live) until
// realloc throws; prints the last size reached as a share of maxBytes and how many steps kept the pointer.
const maxMiB = Number(process.argv[2] ?? 1024);
const dist = process.argv[3] || new URL('../../../packages/allocator/dist', import.meta.url).pathname;
const what = process.argv[4] ?? 'all';
const { createHeap, HeapError } = await import(`${dist}/index.js`);
const MiB = 1024 * 1024;
const maxBytes = maxMiB * MiB;
const oom = (e) => e instanceof HeapError && e.code === 'OUT_OF_MEMORY';
const pct = (x) => `${(100 * x).toFixed(1)}%`;

if (what === 'fill' || what === 'all') {
  const sizes = process.argv[5] ? process.argv[5].split(',').map(Number) : [1 * MiB + 1, 1.25 * MiB, 1.5 * MiB, 2 * MiB, 2.5 * MiB + 4096, 3 * MiB, 4 * MiB, 5 * MiB + 12345, 6 * MiB, 8 * MiB, 12 * MiB, 13 * MiB + 777, 16 * MiB];
  const out = [];
  for (const size of sizes) {
    const heap = createHeap({ maxBytes });
    let n = 0;
    try {
      for (;;) {
        heap.malloc(size);
        n++;
      }
    } catch (e) {
      if (!oom(e)) throw e;
    }
    out.push(`${(size / MiB).toFixed(2)} MiB ${pct((n * size) / maxBytes)}`);
    heap.detach();
  }
  console.log(`fill ${maxMiB} MiB: ${out.join(', ')}`);
}

if (what === 'single' || what === 'all') {
  const fits = (size) => {
    const heap = createHeap({ maxBytes });
    try {
      heap.malloc(size);
      return true;
    } catch (e) {
      if (!oom(e)) throw e;
      return false;
    } finally {
      heap.detach();
    }
  };
  let lo = 0;
  let hi = maxBytes / (64 * 1024);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid * 64 * 1024)) lo = mid;
    else hi = mid - 1;
  }
  console.log(`single ${maxMiB} MiB: ${pct((lo * 64 * 1024) / maxBytes)} (${(lo / 16).toFixed(2)} MiB)`);
}

if (what === 'realloc' || what === 'all') {
  const heap = createHeap({ maxBytes });
  let size = 64 * 1024;
  let p = heap.malloc(size);
  let steps = 0;
  let inPlace = 0;
  for (;;) {
    const next = Math.floor(size * 1.5);
    if (next > maxBytes) break;
    let q;
    try {
      q = heap.realloc(p, next);
    } catch (e) {
      if (!oom(e)) throw e;
      break;
    }
    steps++;
    if (q === p) inPlace++;
    p = q;
    size = next;
  }
  console.log(`realloc ${maxMiB} MiB: ${pct(size / maxBytes)} (${(size / MiB).toFixed(1)} MiB after ${steps} steps, ${inPlace} in place)`);
  heap.detach();
}
