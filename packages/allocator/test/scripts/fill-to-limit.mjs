// Cells of the fill test (fill-to-limit.test.ts): one backend's build on one backing, every cell a fresh heap.
// Arguments: the built allocator file to load (one backend's build, so this process runs that backend), the
// backing, maxBytes, and the cells. Prints one line of JSON per cell: what the fill saw, and `problems`, every
// broken rule (empty when the cell passes).
//
// A cell: a heap of maxBytes; with `prefill`, first PREFILL_SIZE blocks, in ascending addresses, that stop
// below a top window of W bytes (the address space hands out ranges first fit from the bottom, so the top W
// bytes are never touched by them); W is the arena's region (what the arena reserves to serve class and large
// sizes, read from the heap's snapshot) plus 16 MiB, or 64 MiB for the pools. Then malloc(size) until the
// first refusal. With the prefill, the size fills only the top window and what the prefill left between its
// blocks, so it reaches the top of the space (where a bump pointer kept as uint32 wraps) at a fraction of the
// cost of filling 4 GiB with it; the test checks that it got there (`topEnd`). Then: three more mallocs and a
// calloc of the size must each be refused; mallocs of other sizes are either refused or served with a valid
// block (a heap full for one size may still hold a smaller one); every refusal must be HeapError
// OUT_OF_MEMORY; check() passes; every block frees; check() passes; the size is served again.
//
// Each block handed out is checked at once: non-zero, p + size inside the buffer, p + usableSize at most
// 2^32, and overlapping no other block (a bitmap of 32-byte granules, bit p >>> 5, marked over [p, p + size)).
const [file, backing, maxBytesArg, cellsArg] = process.argv.slice(2);
const { createHeap, HeapError } = await import(file);
const maxBytes = Number(maxBytesArg);
const MiB = 1 << 20;
const PREFILL_SIZE = 16 * MiB;
const MAX_PROBLEMS = 20;

// The cells, `size:prefill` or `size:empty`, comma-separated: one heap after another, each dropped and
// collected (run with --expose-gc) before the next is made, one line of JSON each.
for (const cell of cellsArg.split(',')) {
  const [sizeArg, start] = cell.split(':');
  let result;
  try {
    result = fillCell(Number(sizeArg), start);
  } catch (err) {
    result = { backing, maxBytes, size: Number(sizeArg), problems: [`the cell threw ${err?.constructor?.name} ${err?.code ?? ''}: ${err?.stack ?? err}`] };
  }
  console.log(JSON.stringify(result));
  globalThis.gc?.();
}

/** One cell: a fresh heap filled with blocks of `size` bytes (after a prefill when `start` is 'prefill'). */
function fillCell(size, start) {
  const started = performance.now();
  const problems = [];
  const problem = (text) => {
    if (problems.length < MAX_PROBLEMS) problems.push(text);
  };
  const heap = createHeap({ maxBytes, backing });
  const arenaSnapshot = heap.snapshot().arena;
  const regionBytes = arenaSnapshot?.regionBytes ?? 0;
  const arenaBytes = arenaSnapshot?.arenaBytes ?? 0;
  const topWindow = start !== 'prefill' ? 0 : regionBytes > 0 ? regionBytes + 16 * MiB : 64 * MiB;

  // Granules of 32 bytes handed out and not freed.
  const granules = new Int32Array(Math.ceil(maxBytes / 1024));
  /** Marks granules [first, end), returns whether any was marked already. */
  function markRange(first, end, set) {
    let overlap = false;
    for (let g = first; g < end; ) {
      const bit = g & 31;
      const n = Math.min(32 - bit, end - g);
      const mask = n === 32 ? -1 : (((1 << n) - 1) << bit) | 0;
      const w = granules[g >>> 5];
      if (set) {
        if ((w & mask) !== 0) overlap = true;
        granules[g >>> 5] = w | mask;
      } else {
        if ((w & mask) !== mask) overlap = true;
        granules[g >>> 5] = w & ~mask;
      }
      g += n;
    }
    return overlap;
  }

  // Live blocks: the fill's pointers (all of `size` bytes), and every other block with its size.
  let fillPtrs = new Uint32Array(1 << 16);
  let fillCount = 0;
  const others = [];
  let topEnd = 0;
  const counts = { prefill: 0, fill: 0, extra: 0, other: 0 };
  let bufferBytes = heap.u8.length;

  /** Records the block `p` of `bytes` bytes just handed out; false (and a problem) when it breaks a rule. */
  function record(p, bytes, what) {
    if (typeof p !== 'number' || !Number.isInteger(p) || p <= 0) {
      problem(`${what}: malloc(${bytes}) returned ${p} after ${fillCount + others.length} blocks`);
      return false;
    }
    let usable;
    try {
      usable = heap.usableSize(p);
    } catch (err) {
      problem(`${what}: block ${p} of ${bytes} bytes, just handed out: usableSize threw ${err?.code ?? ''} ${err?.message}`);
      return false;
    }
    const end = p + Math.max(bytes, 1);
    if (end > bufferBytes) bufferBytes = heap.u8.length;
    if (usable < bytes) problem(`${what}: block ${p} of ${bytes} bytes has usableSize ${usable}`);
    if (end > bufferBytes) problem(`${what}: block ${p} of ${bytes} bytes ends past the buffer (${bufferBytes} bytes)`);
    if (p + usable > 2 ** 32) problem(`${what}: block ${p} with usableSize ${usable} ends past 2^32`);
    if (markRange(p >>> 5, Math.ceil(end / 32), true)) {
      problem(`${what}: block ${p} of ${bytes} bytes overlaps a block handed out before (after ${fillCount + others.length} blocks)`);
      return false;
    }
    counts[what]++;
    if (what !== 'fill') {
      others.push([p, bytes]);
      return true;
    }
    if (fillCount === fillPtrs.length) {
      const grown = new Uint32Array(fillCount * 2);
      grown.set(fillPtrs);
      fillPtrs = grown;
    }
    fillPtrs[fillCount++] = p;
    if (p + usable > topEnd) topEnd = p + usable;
    return true;
  }

  /** What `f` threw, as a short description; null when it threw a HeapError OUT_OF_MEMORY. */
  function notOutOfMemory(err) {
    if (err instanceof HeapError && err.code === 'OUT_OF_MEMORY') return null;
    return `${err?.constructor?.name ?? typeof err} ${err?.code ?? ''}: ${String(err?.message ?? err).slice(0, 200)}`;
  }

  // The prefill: big blocks in ascending addresses, stopping below the top window.
  if (topWindow > 0) {
    for (;;) {
      let p;
      try {
        p = heap.malloc(PREFILL_SIZE);
      } catch (err) {
        problem(`prefill: malloc(${PREFILL_SIZE}) threw before reaching the top window: ${notOutOfMemory(err) ?? 'OUT_OF_MEMORY'}`);
        break;
      }
      if (!record(p, PREFILL_SIZE, 'prefill')) break;
      // The next block would start past this one's reservation (at most twice its size): stop before the window.
      if (p + 4 * PREFILL_SIZE > maxBytes - topWindow) break;
    }
  }

  // The fill, to the first refusal.
  let refusal = null;
  const fillLimit = Math.floor(maxBytes / Math.max(size, 32)) + 1;
  const fillStarted = performance.now();
  for (let i = 0; problems.length === 0; i++) {
    if (i > fillLimit) {
      problem(`fill: ${i} mallocs of ${size} served, more than the heap can hold`);
      break;
    }
    let p;
    try {
      p = heap.malloc(size);
    } catch (err) {
      refusal = err;
      break;
    }
    if (!record(p, size, 'fill')) break;
  }
  const fillMs = performance.now() - fillStarted;
  const refusedWith = refusal === null ? null : notOutOfMemory(refusal);
  if (refusal !== null && refusedWith !== null) problem(`fill: the refusal is not HeapError OUT_OF_MEMORY but ${refusedWith}`);

  // Keep asking: the size again (malloc and calloc), other sizes, the size once more.
  const afterwards = [];
  if (problems.length === 0) {
    const mustRefuse = (what, f) => {
      try {
        const p = f();
        problem(`${what} after the refusal was served (${p})`);
        record(p, size, 'extra');
      } catch (err) {
        const other = notOutOfMemory(err);
        if (other !== null) problem(`${what} after the refusal threw ${other}`);
      }
    };
    for (let k = 0; k < 3; k++) mustRefuse(`malloc(${size})`, () => heap.malloc(size));
    mustRefuse(`calloc(1, ${size})`, () => heap.calloc(1, size));
    for (const other of [32, 4096, 65536, MiB, 2 * MiB, 4 * MiB, 16 * MiB, 64 * MiB]) {
      if (other === size) continue;
      try {
        const p = heap.malloc(other);
        afterwards.push(`${other}:served`);
        record(p, other, 'other');
      } catch (err) {
        const what = notOutOfMemory(err);
        afterwards.push(`${other}:${what === null ? 'refused' : 'WRONG'}`);
        if (what !== null) problem(`malloc(${other}) after the refusal threw ${what}`);
      }
    }
    mustRefuse(`malloc(${size}) after the other sizes`, () => heap.malloc(size));
  }

  // check(), free everything, check(), and the size is served again.
  const checkStarted = performance.now();
  try {
    heap.check();
  } catch (err) {
    problem(`check() before the frees: ${notOutOfMemory(err) ?? err.message}`);
  }
  const checkMs = performance.now() - checkStarted;
  let freeFailures = 0;
  const freeOne = (p, bytes) => {
    try {
      heap.free(p);
      markRange(p >>> 5, Math.ceil((p + Math.max(bytes, 1)) / 32), false);
    } catch (err) {
      if (freeFailures++ === 0) problem(`free(${p}) of a block of ${bytes} bytes threw ${err?.constructor?.name} ${err?.code ?? ''}: ${err?.message}`);
    }
  };
  for (let i = 0; i < fillCount; i++) freeOne(fillPtrs[i], size);
  for (const [p, bytes] of others) freeOne(p, bytes);
  if (freeFailures > 1) problem(`${freeFailures} frees threw in all`);
  try {
    heap.check();
  } catch (err) {
    problem(`check() after the frees: ${err?.code ?? ''} ${err?.message}`);
  }
  try {
    const p = heap.malloc(size);
    heap.free(p);
  } catch (err) {
    problem(`malloc(${size}) after every block was freed threw ${err?.constructor?.name} ${err?.code ?? ''}: ${err?.message}`);
  }

  try {
    heap.close();
  } catch (err) {
    problem(`close() threw ${err?.code ?? ''} ${err?.message}`);
  }
  return {
    backend: heap.backend,
    backing,
    maxBytes,
    size,
    topWindow,
    arenaBytes,
    counts,
    share: (counts.fill * size) / maxBytes,
    topEnd,
    refusal: refusal === null ? null : `${refusal.code ?? refusal.constructor.name}: ${String(refusal.message).slice(0, 160)}`,
    afterwards,
    fillMs: Math.round(fillMs),
    checkMs: Math.round(checkMs),
    totalMs: Math.round(performance.now() - started),
    problems,
  };
}
