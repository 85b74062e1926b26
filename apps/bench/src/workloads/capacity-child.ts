/**
 * The `capacity` workload's child process: one Paddock backend, its own build loaded from the URL it is given,
 * measured on fresh heaps of each heap size (see capacity.ts for what is measured and why in a child). Every
 * heap is dropped and collected (the child runs with --expose-gc) before the next is made, so at most one
 * heap's touched memory is held at a time. It prints one line of JSON per figure on stdout, and a line per
 * cell on stderr as progress.
 *
 * argv: the allocator build's URL, the heap sizes and the block sizes (comma-separated bytes), the realloc
 * chain's first size and factor.
 */
import type { Heap, HeapOptions } from '@paddock/allocator';

export interface CapacityFigure {
  readonly kind: 'fill' | 'malloc-max' | 'realloc-max';
  readonly maxBytes: number;
  /** fill: the block size. */
  readonly size?: number;
  /** fill: live blocks at the first refusal. */
  readonly blocks?: number;
  /** malloc-max, realloc-max: the largest size served (0: none). */
  readonly largest?: number;
  /** Mallocs (fill, the search's tries) or reallocs (the chain) made. */
  readonly calls: number;
  readonly ms: number;
  /** What ended it when that was not HeapError OUT_OF_MEMORY (a failure of the backend); null otherwise. */
  readonly error: string | null;
}

type CreateHeap = (options: Pick<HeapOptions, 'maxBytes'>) => Pick<Heap, 'malloc' | 'realloc' | 'free' | 'detach'>;

const PAGE = 4096;

function isOutOfMemory(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'OUT_OF_MEMORY';
}

function describe(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string } | null;
  return `${e?.name ?? typeof err} ${e?.code ?? ''}: ${String(e?.message ?? err).slice(0, 200)}`;
}

function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** A heap of `maxBytes` for `run`, detached and dropped after it. */
function onFreshHeap<T>(createHeap: CreateHeap, maxBytes: number, run: (heap: ReturnType<CreateHeap>) => T): T {
  const heap = createHeap({ maxBytes });
  try {
    return run(heap);
  } finally {
    heap.detach();
    collect();
  }
}

/** Live blocks of `size` bytes a fresh heap holds at its first refusal. */
function fill(createHeap: CreateHeap, maxBytes: number, size: number): CapacityFigure {
  const started = performance.now();
  return onFreshHeap(createHeap, maxBytes, (heap) => {
    let blocks = 0;
    let error: string | null = null;
    const limit = Math.floor(maxBytes / size) + 1;
    for (;;) {
      let p: number;
      try {
        p = heap.malloc(size);
      } catch (err) {
        if (!isOutOfMemory(err)) error = describe(err);
        break;
      }
      if (p === 0 || ++blocks > limit) {
        error = p === 0 ? `malloc(${size}) returned 0 after ${blocks} blocks` : `more than ${limit} blocks of ${size} bytes served`;
        break;
      }
    }
    return { kind: 'fill', maxBytes, size, blocks, calls: blocks + 1, ms: performance.now() - started, error };
  });
}

/** Whether a fresh heap serves malloc(size); throws for anything but a block or OUT_OF_MEMORY. */
function serves(createHeap: CreateHeap, maxBytes: number, size: number): boolean {
  return onFreshHeap(createHeap, maxBytes, (heap) => {
    try {
      const p = heap.malloc(size);
      if (p === 0) throw new Error(`malloc(${size}) returned 0`);
      return true;
    } catch (err) {
      if (isOutOfMemory(err)) return false;
      throw err;
    }
  });
}

/**
 * The largest single block a fresh heap serves by malloc: a binary search over sizes in whole 4 KiB pages
 * (a fresh heap each try), between a size served and one refused.
 */
function mallocMax(createHeap: CreateHeap, maxBytes: number): CapacityFigure {
  const started = performance.now();
  let calls = 0;
  try {
    let lo = 0; // pages served (0: none yet)
    let hi = maxBytes / PAGE + 1; // pages refused (maxBytes + 1 page is always refused)
    if (calls++, serves(createHeap, maxBytes, maxBytes)) lo = maxBytes / PAGE;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      calls++;
      if (serves(createHeap, maxBytes, mid * PAGE)) lo = mid;
      else hi = mid;
    }
    return { kind: 'malloc-max', maxBytes, largest: lo * PAGE, calls, ms: performance.now() - started, error: null };
  } catch (err) {
    return { kind: 'malloc-max', maxBytes, largest: 0, calls, ms: performance.now() - started, error: describe(err) };
  }
}

/** The largest size one block reaches by realloc, from `start`, `factor` a step, nothing else live. */
function reallocMax(createHeap: CreateHeap, maxBytes: number, start: number, factor: number): CapacityFigure {
  const started = performance.now();
  return onFreshHeap(createHeap, maxBytes, (heap) => {
    let calls = 0;
    let error: string | null = null;
    let size = start;
    let largest = 0;
    try {
      let p = heap.malloc(size);
      largest = size;
      while (size < maxBytes) {
        const next = Math.min(maxBytes, Math.ceil(size * factor));
        calls++;
        const q = heap.realloc(p, next);
        if (q === 0) throw new Error(`realloc to ${next} returned 0`);
        p = q;
        size = largest = next;
      }
    } catch (err) {
      if (!isOutOfMemory(err)) error = describe(err);
    }
    return { kind: 'realloc-max', maxBytes, largest, calls, ms: performance.now() - started, error };
  });
}

function main(): void {
  const [url, heapsArg, sizesArg, startArg, factorArg] = process.argv.slice(2);
  if (!url || !heapsArg || !sizesArg || !startArg || !factorArg) throw new Error('usage: capacity-child URL HEAPS SIZES START FACTOR');
  const heaps = heapsArg.split(',').map(Number);
  const sizes = sizesArg.split(',').map(Number);
  const out = (f: CapacityFigure) => process.stdout.write(`${JSON.stringify(f)}\n`);
  import(url).then((mod: { createHeap: CreateHeap }) => {
    for (const maxBytes of heaps) {
      for (const size of sizes) {
        const f = fill(mod.createHeap, maxBytes, size);
        process.stderr.write(`fill ${maxBytes} ${size}: ${f.blocks} blocks, ${f.ms.toFixed(0)} ms\n`);
        out(f);
      }
      const m = mallocMax(mod.createHeap, maxBytes);
      process.stderr.write(`malloc-max ${maxBytes}: ${m.largest}, ${m.ms.toFixed(0)} ms\n`);
      out(m);
      const r = reallocMax(mod.createHeap, maxBytes, Number(startArg), Number(factorArg));
      process.stderr.write(`realloc-max ${maxBytes}: ${r.largest}, ${r.ms.toFixed(0)} ms\n`);
      out(r);
    }
  });
}

main();
