/**
 * The floor of the multi-agent programs: the least an allocator shared by JavaScript agents can cost, so that a
 * program's rate on it is what the JavaScript program costs with an allocator that costs nearly nothing.
 *
 * Every agent keeps its own power-of-two free lists (32 B up to 1 GiB) in local arrays and frees any block onto
 * its own list, whoever allocated it: no header, no check, no message home. Blocks are carved from 64 KiB chunks
 * that an agent claims with one atomic add; a byte per chunk names the chunk's class, so `free` needs no size.
 * An agent that gathers more than 128 free blocks of a class hands 64 of them, as one chain, to a shared list of
 * that class (a spin lock per class), and an agent whose list is empty takes a chain there before it carves, so
 * blocks freed by a consumer come back to the producers. It never returns memory and never checks a pointer.
 *
 * Workers load this module by its URL, as they load Paddock's, and call `attachHeap(handle)`; the programs use
 * the same calls on it as on a Paddock heap (`malloc`, `free`, `wait`, `u8`, `i32` ...).
 */

/** Chunks of 64 KiB. */
const CHUNK_SHIFT = 16;
/** Classes 0..25: 32 B << class. */
const CLASS_COUNT = 26;
/** Blocks in a chain handed to the shared list; an agent keeps up to twice as many of a class. */
const BATCH = 64;
/** Control words: the next free chunk, then per class its lock word and the head of its list of chains. */
const C_NEXT_CHUNK = 0;
const C_LOCK = 16;
const C_CHAINS = C_LOCK + CLASS_COUNT;
const C_WORDS = C_CHAINS + CLASS_COUNT;
/** Paddock's bound on one blocking wait: a doorbell rung while an agent blocks is never missed for longer. */
const WAIT_MS = 500;

export interface FloorHandle {
  readonly memory: SharedArrayBuffer;
  readonly control: SharedArrayBuffer;
  /** One byte per chunk: its class. */
  readonly classes: SharedArrayBuffer;
}

function classOf(size: number): number {
  return size <= 32 ? 0 : 27 - Math.clz32(size - 1);
}

export class FloorHeap {
  readonly u8: Uint8Array;
  readonly i32: Int32Array;
  private readonly control: Int32Array;
  private readonly classes: Uint8Array;
  /** Pointers up to 4 GiB: unsigned heads, and the chunk's bounds as doubles (its end may be 4 GiB itself). */
  private readonly heads = new Uint32Array(CLASS_COUNT);
  private readonly counts = new Int32Array(CLASS_COUNT);
  private readonly bump = new Float64Array(CLASS_COUNT);
  private readonly end = new Float64Array(CLASS_COUNT);
  private readonly chunks: number;

  constructor(readonly handle: FloorHandle) {
    this.u8 = new Uint8Array(handle.memory);
    this.i32 = new Int32Array(handle.memory);
    this.control = new Int32Array(handle.control);
    this.classes = new Uint8Array(handle.classes);
    this.chunks = handle.memory.byteLength >>> CHUNK_SHIFT;
  }

  malloc(size: number): number {
    const c = classOf(size);
    const p = this.heads[c]!;
    if (p !== 0) {
      this.heads[c] = this.i32[p >>> 2]!;
      this.counts[c]!--;
      return p;
    }
    return this.refill(c);
  }

  free(ptr: number): void {
    if (ptr === 0) return;
    const c = this.classes[ptr >>> CHUNK_SHIFT]!;
    this.i32[ptr >>> 2] = this.heads[c]!;
    this.heads[c] = ptr;
    if (++this.counts[c]! > 2 * BATCH) this.spill(c);
  }

  /** An empty list: a chain from the shared list, else a block carved from the class's chunk (a new chunk when it is used up). */
  private refill(c: number): number {
    if (Atomics.load(this.control, C_CHAINS + c) !== 0) {
      this.lock(c);
      const chain = this.control[C_CHAINS + c]! >>> 0;
      if (chain !== 0) this.control[C_CHAINS + c] = this.i32[(chain >>> 2) + 1]!;
      Atomics.store(this.control, C_LOCK + c, 0);
      if (chain !== 0) {
        this.heads[c] = this.i32[chain >>> 2]!;
        this.counts[c] = BATCH - 1;
        return chain;
      }
    }
    const bytes = 32 * 2 ** c;
    if (this.bump[c]! + bytes > this.end[c]! || this.end[c] === 0) {
      const n = Math.max(1, bytes / 2 ** CHUNK_SHIFT);
      const first = Atomics.add(this.control, C_NEXT_CHUNK, n) + 1; // chunk 0 holds the null pointer
      if (first + n > this.chunks) return 0;
      this.classes.fill(c, first, first + n);
      this.bump[c] = first * 2 ** CHUNK_SHIFT;
      this.end[c] = (first + n) * 2 ** CHUNK_SHIFT;
    }
    const p = this.bump[c]!;
    this.bump[c] = p + bytes;
    return p;
  }

  /** Hands the first BATCH blocks of class `c`'s list to the shared list as one chain. */
  private spill(c: number): void {
    const chain = this.heads[c]!;
    let last = chain;
    for (let k = 1; k < BATCH; k++) last = this.i32[last >>> 2]!;
    this.heads[c] = this.i32[last >>> 2]!;
    this.i32[last >>> 2] = 0;
    this.counts[c]! -= BATCH;
    this.lock(c);
    this.i32[(chain >>> 2) + 1] = this.control[C_CHAINS + c]!;
    this.control[C_CHAINS + c] = chain;
    Atomics.store(this.control, C_LOCK + c, 0);
  }

  private lock(c: number): void {
    while (Atomics.compareExchange(this.control, C_LOCK + c, 0, 1) !== 0);
  }

  /** `Atomics.wait`, bounded as Paddock's `heap.wait` is. */
  wait(array: Int32Array, index: number, value: number, timeoutMs = WAIT_MS): string {
    return Atomics.wait(array, index, value, Math.min(timeoutMs, WAIT_MS));
  }

  /** Nothing is pending: a free never goes home. */
  flush(): number {
    return 0;
  }

  drain(): number {
    return 0;
  }

  startIdle(): void {}

  stopIdle(): void {}

  detach(): void {}

  /** Carved chunks, in bytes (the floor never returns any). */
  stats(): { committedBytes: number } {
    return { committedBytes: Atomics.load(this.control, C_NEXT_CHUNK) * 2 ** CHUNK_SHIFT };
  }
}

export function createHeap(options: { maxBytes: number }): FloorHeap {
  const bytes = Math.ceil(options.maxBytes / 2 ** CHUNK_SHIFT) * 2 ** CHUNK_SHIFT;
  return new FloorHeap({
    memory: new SharedArrayBuffer(bytes),
    control: new SharedArrayBuffer(C_WORDS * 4),
    classes: new SharedArrayBuffer(bytes >>> CHUNK_SHIFT),
  });
}

/** The memory of the last heap {@link createReusedHeap} made. */
let last: FloorHandle | null = null;

/**
 * A heap over the memory of the previous one when it has the same size, its lists and chunks reset: the bench's
 * runs make one heap after another, and each worker keeps the memory of the heaps it attached to until its own
 * garbage collector runs (an idle worker's may never run), so a fresh buffer each run would add up to the sum of
 * every run's touched pages (the floor never gives any back). For one heap at a time only.
 */
export function createReusedHeap(options: { maxBytes: number }): FloorHeap {
  const bytes = Math.ceil(options.maxBytes / 2 ** CHUNK_SHIFT) * 2 ** CHUNK_SHIFT;
  if (last === null || last.memory.byteLength !== bytes) return new FloorHeap((last = createHeap(options).handle));
  new Int32Array(last.control).fill(0);
  new Uint8Array(last.classes).fill(0);
  return new FloorHeap(last);
}

export function attachHeap(handle: FloorHandle): FloorHeap {
  return new FloorHeap(handle);
}
