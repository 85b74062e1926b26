/**
 * Scoped arenas: `heap.scope()` opens a `Scope`, a bump allocator over chunks it takes from the heap with
 * `heap.malloc`; `scope.close()` (or the end of a `using` block) gives every chunk back at once. A scope suits
 * memory whose lifetime is one call: a scratch buffer, a few strings decoded from a payload. Its allocations
 * are never freed one by one and survive nothing beyond the scope: once it closes, every pointer it handed
 * out is dangling (the checked build poisons that memory and refuses those pointers with `SCOPE_RELEASED`).
 *
 * Layout. Every chunk starts with a header of {@link SCOPE_HEADER} bytes: its first word links to the chunk
 * taken before it (0 ends the chain), its second holds the chunk's usable bytes. Allocations start after the
 * header, so no pointer a scope hands out is ever the start of a heap block: `heap.free(scopePointer)` is
 * refused by the backend's own pointer check instead of freeing the chunk under the scope. Every allocation
 * is rounded up to {@link SCOPE_ALIGN} (16) bytes, so each pointer is 16-byte aligned (chunks are at least
 * 32-byte aligned); `malloc(0)` takes 16 bytes, so every pointer is distinct.
 *
 * Chunks. The first is {@link SCOPE_FIRST_CHUNK} (64 KiB); each later one doubles, up to
 * {@link SCOPE_MAX_CHUNK} (1 MiB). A request that does not fit in the next chunk gets a chunk of its own,
 * exactly its size, linked into the chain behind the current chunk, which stays current (its room is not lost).
 * A closing scope keeps its first chunk as the heap object's spare, and the next scope opened starts in it:
 * a scope per call then costs no heap call at all. The spare goes back to the heap on the idle return
 * (`returnIdle`, and the idle tick or a wait that runs it) and when the heap object leaves; the checked build
 * keeps no spare (its closed chunks go to the quarantine).
 *
 * Nesting. A scope opened while another scope of the same heap object is open is nested in the innermost one.
 * Closing a scope closes its open nested scopes first (innermost first); closing a nested scope leaves its
 * parent open. An outer scope may still allocate while a nested one is open: each has its own chunks.
 *
 * A closed scope refuses every use with `HeapError` `DETACHED`; closing it again does nothing. A scope is
 * this agent's: another agent may read and write its memory while it is open, but never frees it.
 */
import { HeapError, describeValue, formatAddress, formatBytes } from '@paddock/platform';
import { callocBytes } from './heap-base.js';
import type { Heap } from './types.js';

/** Every scope allocation is rounded up to this many bytes; every scope pointer is aligned to it. */
export const SCOPE_ALIGN = 16;
/** Bytes at each chunk's start: the link to the previous chunk and the chunk's size (two words), padded. */
export const SCOPE_HEADER = 32;
/** The first chunk a scope takes from the heap, in bytes (header included). */
export const SCOPE_FIRST_CHUNK = 64 * 1024;
/** The largest chunk a scope takes for small requests; each new chunk doubles up to it. */
export const SCOPE_MAX_CHUNK = 1024 * 1024;
/** Above this, a size skips the bump fast path (its rounding would not stay a small integer). */
const FAST_MAX = 1 << 30;

/** What happens to a closed scope's chunks: given back to the heap, or (the checked build) kept poisoned a while. */
export type ChunkRelease = (heap: Heap, chunk: number, bytes: number) => void;

/** Gives a chunk straight back to the heap. */
const freeChunk: ChunkRelease = (heap, chunk) => heap.free(chunk);

/** A heap object's scopes: the innermost open one, and the spare first chunk (0: none), header written. */
interface ScopeHome {
  innermost: Scope | null;
  spare: number;
}

/** Each heap object's scopes, by its address space (kept outside the heap objects: their fields are for malloc and free). */
const homes = new WeakMap<object, ScopeHome>();

function homeOf(heap: Heap): ScopeHome {
  let home = homes.get(heap.space);
  if (home === undefined) {
    home = { innermost: null, spare: 0 };
    homes.set(heap.space, home);
  }
  return home;
}

/** Gives the spare chunk of `heap`'s scopes back to the heap (the idle return, and leaving the heap call this). */
export function releaseSpareChunk(heap: Heap): void {
  const home = homes.get(heap.space);
  if (home === undefined || home.spare === 0) return;
  const chunk = home.spare;
  home.spare = 0;
  heap.free(chunk);
}

/** The error every use of a closed scope gets. */
function scopeClosedError(): HeapError {
  return new HeapError('DETACHED', 'this scope is closed: everything it allocated went back to the heap; open another with heap.scope()');
}

/** A bump allocator over chunks of one heap, released all at once by {@link Scope.close}. */
export class Scope {
  /** The next free byte of the current chunk (0 once closed). */
  private top: number;
  /** The end of the current chunk's room (0 once closed, so every bump misses and the slow path refuses). */
  private end: number;
  /** The current chunk (its header's address); its header links the rest of the chain. 0 once closed. */
  private chunk: number;
  /** The size of the next chunk taken for small requests. */
  private nextChunk: number;
  private readonly heap: Heap;
  private readonly release: ChunkRelease;
  private readonly home: ScopeHome;
  /** The chunk the scope opened with (the next scope's spare once this one closes). */
  private firstChunk: number;
  /** The scope this one is nested in, and the open scope nested in this one. */
  private readonly parent: Scope | null;
  private child: Scope | null;
  private closed: boolean;

  /** @internal use `heap.scope()`. */
  constructor(heap: Heap, release: ChunkRelease = freeChunk) {
    // The fields the bump reads are assigned first (V8 lays fields out in the order of first assignment).
    this.top = 0;
    this.end = 0;
    this.chunk = 0;
    this.nextChunk = SCOPE_FIRST_CHUNK;
    this.heap = heap;
    this.release = release;
    const home = homeOf(heap);
    this.home = home;
    this.parent = home.innermost;
    this.child = null;
    this.closed = false;
    if (home.spare !== 0 && release === freeChunk) {
      this.chunk = home.spare;
      home.spare = 0;
    } else {
      this.chunk = this.takeChunk(SCOPE_FIRST_CHUNK);
    }
    this.firstChunk = this.chunk;
    const u32 = heap.u32;
    u32[this.chunk >>> 2] = 0;
    this.top = this.chunk + SCOPE_HEADER;
    this.end = this.chunk + u32[(this.chunk >>> 2) + 1]!;
    if (this.parent !== null) this.parent.child = this;
    home.innermost = this;
  }

  /**
   * Allocates `size` bytes in the scope and returns a pointer into the heap's views, 16-byte aligned. The
   * memory is not zeroed and lives until the scope closes.
   * @throws RangeError for a size that is not an integer from 0 to the heap's size; HeapError OUT_OF_MEMORY
   * when the heap cannot serve the chunk it needs (the scope stays open, what it handed out stays valid);
   * HeapError DETACHED once closed.
   */
  malloc(size: number): number {
    if ((size >>> 0) === size && size < FAST_MAX) {
      const p = this.top;
      const next = p + (size === 0 ? SCOPE_ALIGN : (size + SCOPE_ALIGN - 1) & -SCOPE_ALIGN);
      if (next <= this.end) {
        this.top = next;
        return p;
      }
    }
    return this.mallocChunk(size);
  }

  /**
   * Allocates `count * size` bytes in the scope, zeroed.
   * @throws RangeError as `heap.calloc` does; HeapError OUT_OF_MEMORY as `malloc`; HeapError DETACHED once closed.
   */
  calloc(count: number, size: number): number {
    if (this.closed) throw scopeClosedError();
    const total = callocBytes(count, size, this.heap.space.maxBytes);
    const p = this.malloc(total);
    this.heap.u8.fill(0, p, p + total);
    return p;
  }

  /** Whether the scope has closed. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Closes the scope: its open nested scopes first, then every chunk goes back to the heap at once. Every
   * pointer it handed out dangles from here. Closing again does nothing.
   * @throws HeapError DETACHED when the heap object left the heap first (nothing changes: close scopes first).
   */
  close(): void {
    if (this.closed) return;
    if (this.heap.isDetached) {
      throw new HeapError('DETACHED', 'the heap object of this scope left the heap before the scope closed; its chunks stay live in the heap');
    }
    if (this.child !== null) this.child.close();
    const u32 = this.heap.u32;
    let chunk = this.chunk;
    this.closed = true;
    this.top = 0;
    this.end = 0;
    this.chunk = 0;
    if (this.parent !== null) this.parent.child = null;
    const home = this.home;
    home.innermost = this.parent !== null && !this.parent.closed ? this.parent : null;
    while (chunk !== 0) {
      const previous = u32[chunk >>> 2]!;
      // The first chunk becomes the spare when there is none and chunks are simply freed.
      if (chunk === this.firstChunk && home.spare === 0 && this.release === freeChunk) home.spare = chunk;
      else this.release(this.heap, chunk, u32[(chunk >>> 2) + 1]!);
      chunk = previous;
    }
  }

  /** `using scope = heap.scope()` closes the scope at the end of the block. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** The bump missed: a closed scope, a bad size, or a request that needs another chunk. */
  private mallocChunk(size: number): number {
    if (this.closed) throw scopeClosedError();
    const maxBytes = this.heap.space.maxBytes;
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0 || size > maxBytes) {
      throw new RangeError(`size must be an integer from 0 to maxBytes ${maxBytes}, got ${describeValue(size)}`);
    }
    const step = size === 0 ? SCOPE_ALIGN : Math.ceil(size / SCOPE_ALIGN) * SCOPE_ALIGN;
    if (SCOPE_HEADER + step > this.nextChunk) {
      // A chunk of its own, linked behind the current one; the current chunk keeps its room.
      const own = this.takeChunk(SCOPE_HEADER + step);
      const u32 = this.heap.u32;
      u32[own >>> 2] = u32[this.chunk >>> 2]!;
      u32[this.chunk >>> 2] = own;
      return own + SCOPE_HEADER;
    }
    const chunk = this.takeChunk(this.nextChunk);
    const u32 = this.heap.u32;
    u32[chunk >>> 2] = this.chunk;
    this.nextChunk = Math.min(this.nextChunk * 2, SCOPE_MAX_CHUNK);
    this.chunk = chunk;
    this.end = chunk + u32[(chunk >>> 2) + 1]!;
    this.top = chunk + SCOPE_HEADER + step;
    return chunk + SCOPE_HEADER;
  }

  /**
   * Takes a chunk of at least `bytes` from the heap and writes its header (no link yet, its usable size).
   * @throws HeapError OUT_OF_MEMORY when the heap cannot serve it, a chunk larger than the heap (a request
   * within maxBytes plus the chunk's header) included.
   */
  private takeChunk(bytes: number): number {
    const maxBytes = this.heap.space.maxBytes;
    if (bytes > maxBytes) {
      throw new HeapError('OUT_OF_MEMORY', `out of memory: a scope chunk of ${formatBytes(bytes)} (header included) is larger than the heap's maxBytes ${formatBytes(maxBytes)}`);
    }
    const chunk = this.heap.malloc(bytes);
    const usable = this.heap.usableSize(chunk);
    const u32 = this.heap.u32;
    u32[chunk >>> 2] = 0;
    u32[(chunk >>> 2) + 1] = usable - (usable % SCOPE_ALIGN);
    return chunk;
  }
}

/** Describes a pointer of a closed scope, for the checked build's refusal. */
export function scopeReleasedMessage(ptr: number): string {
  return `checked: ${formatAddress(ptr)} was allocated in a scope that has closed; scope memory is never freed one by one`;
}
