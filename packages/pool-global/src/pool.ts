/**
 * The global pool: any agent mallocs and frees any block, and no agent keeps state of its own. A small
 * request pops its class's free list or, when that is empty, carves the next block from the class's current
 * slab (one CAS on the slab's carve word; a fresh 1 MiB slab when it is used up). A free validates
 * the pointer, sets the block's free mark with a CAS (so a double free is refused even when two agents race)
 * and pushes the block. Large requests are mapped on their own (`large.ts`).
 *
 * An agent may be terminated at any instruction: what it strands is at most the block it was handing out
 * or freeing (or, between reserving a fresh slab and publishing it, that slab), never a list or another
 * agent's block: every shared change is one CAS or fetch-add on a word that is consistent before and after.
 *
 * A slab whose blocks are all free goes back to the address space (its pages to the OS) when an agent asks
 * for it: `returnEmptySlabs` (see `return-slabs.ts`).
 */
import { checkAddressSpace, type AddressSpace } from '@paddock/platform';
import { badSize, doubleFree, misaligned, noBlock, notAPointer } from './errors.js';
import { FreeLists } from './free-lists.js';
import { createHeader, findHeader } from './header.js';
import { LARGE_HEADER, largeUsable, mapLarge, unmapLarge } from './large.js';
import {
  CLASS_COUNT, H_CARVE, H_ENTRY, H_RETURNED, HEAD_BYTES, LARGE, MAX_CLASS_SIZE, MiB, SLAB_BYTES, classIndex, clearedEntry, entryKind,
  freeMark, headerBytes, publishedEntry, topClass, topOffset, topWord,
} from './layout.js';
import { walkPool, type GlobalPoolCounts } from './check.js';
import { returnEmptySlabs, type SlabReturnScratch } from './return-slabs.js';

export class GlobalPool {
  /** The pool header as Int32 words (ENTRY and TOP tables included). */
  private readonly hdr: Int32Array;
  private readonly lists: FreeLists;
  private readonly maxBytes: number;
  /** Word index of TOP[0] in `hdr`. */
  private readonly topAt: number;
  /** The address space the pool lives in. */
  readonly space: AddressSpace;
  /** Per-MiB counts for `returnEmptySlabs` (made on its first call; nothing in it outlasts a call). */
  private returnScratch: SlabReturnScratch | null;

  private constructor(space: AddressSpace, address: number) {
    const mibs = Math.ceil(space.maxBytes / MiB);
    this.hdr = new Int32Array(space.buffer, address, headerBytes(mibs) >>> 2);
    this.lists = new FreeLists(space.buffer, address + HEAD_BYTES, CLASS_COUNT);
    this.maxBytes = space.maxBytes;
    this.topAt = H_ENTRY + mibs;
    this.space = space;
    this.returnScratch = null;
  }

  /** Creates the pool in a space that holds none (the first agent). @throws HeapError `BAD_HANDLE` if it holds one. */
  static create(space: AddressSpace): GlobalPool {
    checkAddressSpace(space);
    return new GlobalPool(space, createHeader(space));
  }

  /** Opens the pool another agent created in `space`. @throws HeapError `BAD_HANDLE` if it holds none. */
  static open(space: AddressSpace): GlobalPool {
    checkAddressSpace(space);
    return new GlobalPool(space, findHeader(space));
  }

  /**
   * A block of at least `size` bytes (0 included): a class block aligned to its size, or a large block.
   * @throws RangeError for a size that is not an integer from 0 to the space's size; HeapError
   * `OUT_OF_MEMORY` when the space has no room.
   */
  malloc(size: number): number {
    if (typeof size !== 'number' || !(size >= 0 && size <= MAX_CLASS_SIZE) || size % 1 !== 0) {
      if (typeof size === 'number' && Number.isInteger(size) && size > MAX_CLASS_SIZE && size <= this.maxBytes) return mapLarge(this.space, this.hdr, size);
      throw badSize(size, this.maxBytes);
    }
    const c = classIndex(size);
    const lists = this.lists;
    const space = this.space;
    for (;;) {
      const old = lists.load(c);
      const p = lists.first(old);
      if (p === 0) return this.carve(c);
      space.covers(p + 8);
      const next = space.u32[p >>> 2]!;
      if (lists.casPop(c, old, next)) {
        space.i32[(p >>> 2) + 1] = 0;
        return p;
      }
    }
  }

  /**
   * Frees the block at `ptr`; free(0) does nothing. Any agent frees any block.
   * @throws HeapError `BAD_POINTER`, `MISALIGNED` or `DOUBLE_FREE` (nothing changes then).
   */
  free(ptr: number): void {
    if (ptr === 0) return;
    const e = this.entryOf(ptr, 'free');
    if (entryKind(e) === LARGE) {
      unmapLarge(this.space, this.hdr, ptr);
      return;
    }
    const c = entryKind(e) - 1;
    this.checkCarved(ptr, c, 'free');
    const space = this.space;
    space.covers(ptr + 8);
    const i32 = space.i32;
    const at = (ptr >>> 2) + 1;
    const mark = freeMark(ptr, c);
    let seen = 0;
    for (;;) {
      seen = Atomics.load(i32, at);
      if (seen === mark) throw doubleFree(ptr, `class ${c} block`);
      if (Atomics.compareExchange(i32, at, seen, mark) === seen) break;
    }
    if (Atomics.load(this.hdr, H_ENTRY + (ptr >>> 20)) !== e) this.slabReturnedMeanwhile(ptr, c, at, seen, mark);
    this.lists.push(space.u32, c, ptr, ptr);
  }

  /**
   * Returns the pages of every class `c` slab whose blocks are all free (every class when `c` is omitted);
   * returns the bytes given back. Meant for a quiet moment: it takes the class's whole free list while it
   * counts, so meanwhile other agents carve fresh blocks instead of reusing free ones. Call it only from an
   * agent that cannot be stopped half way (the main thread): one terminated in the middle strands the free
   * blocks of the list it took. See `return-slabs.ts`.
   * @throws HeapError `CORRUPTION` when the list names a block that is not a free block of the class (the
   * list is cut before it).
   */
  returnEmptySlabs(c?: number): number {
    this.returnScratch ??= { counts: new Int32Array(this.topAt - H_ENTRY), touched: new Int32Array(this.topAt - H_ENTRY) };
    const ctx = { space: this.space, hdr: this.hdr, lists: this.lists, topAt: this.topAt, scratch: this.returnScratch };
    if (c !== undefined) {
      if (!Number.isInteger(c) || c < 0 || c >= CLASS_COUNT) throw new RangeError(`class must be an integer from 0 to ${CLASS_COUNT - 1}, got ${c}`);
      return returnEmptySlabs(ctx, c);
    }
    let bytes = 0;
    for (let k = 0; k < CLASS_COUNT; k++) bytes += returnEmptySlabs(ctx, k);
    return bytes;
  }

  /** Slabs returned to the address space since the pool was made, by every agent. */
  get returnedSlabs(): number {
    return Atomics.load(this.hdr, H_RETURNED);
  }

  /** The head word of class `c`'s free list: it changes with every pop and push (an idle check compares it). */
  listHead(c: number): bigint {
    return this.lists.load(c);
  }

  /**
   * A free whose block's slab was returned (and its MiB perhaps used again) between the free's checks and its
   * free mark: every block of a returned slab was free, so this was a second free of the block. The mark the
   * free wrote goes back to what was there, and nothing is pushed.
   */
  private slabReturnedMeanwhile(ptr: number, c: number, at: number, seen: number, mark: number): never {
    Atomics.compareExchange(this.space.i32, at, mark, seen);
    throw doubleFree(ptr, `class ${c} block (its slab was returned meanwhile)`);
  }

  /**
   * The usable bytes of the live block at `ptr`: its class size, or a large block's committed bytes less
   * its header. @throws HeapError `BAD_POINTER`, `MISALIGNED` or `DOUBLE_FREE` (the block is free).
   */
  usableSize(ptr: number): number {
    const e = this.entryOf(ptr, 'usableSize');
    if (entryKind(e) === LARGE) return largeUsable(this.space, ptr, 'usableSize');
    const c = entryKind(e) - 1;
    this.checkCarved(ptr, c, 'usableSize');
    this.space.covers(ptr + 8);
    if (Atomics.load(this.space.i32, (ptr >>> 2) + 1) === freeMark(ptr, c)) throw doubleFree(ptr, `class ${c} block`);
    return 32 << c;
  }

  /**
   * Walks every slab and free list and counts; the counts hold only while no agent is changing the pool.
   * @throws HeapError `CORRUPTION` when a list names a block that is not a free block of its class, names
   * one twice, or holds more blocks than were ever carved.
   */
  check(): GlobalPoolCounts {
    return walkPool(this.space, this.hdr, this.lists, this.topAt);
  }

  /**
   * The same counts without the checks, safe while other agents work: it never throws, and what it counts is
   * exact only while no agent is changing the pool (a list another agent pops meanwhile is counted up to where
   * the walk met a block handed out again).
   */
  counts(): GlobalPoolCounts {
    return walkPool(this.space, this.hdr, this.lists, this.topAt, false);
  }

  /**
   * The ENTRY word of the slab or large block `ptr` could be a block of (its kind 1 + class, or LARGE).
   * @throws HeapError `BAD_POINTER` when it is neither.
   */
  private entryOf(ptr: number, op: string): number {
    if (typeof ptr !== 'number' || !Number.isInteger(ptr) || ptr <= 0 || ptr >= this.maxBytes) throw notAPointer(ptr, this.maxBytes, op);
    const m = ptr >>> 20;
    const e = Atomics.load(this.hdr, H_ENTRY + m);
    const kind = entryKind(e);
    if (kind >= 1 && kind <= CLASS_COUNT) return e;
    if (kind === LARGE && ptr > m * MiB) return e;
    if (ptr % MiB === LARGE_HEADER) throw noBlock(ptr, op, 'no live large block starts there (freed already, or never allocated)');
    throw noBlock(ptr, op, 'not inside a slab or a live large block of this pool');
  }

  /** @throws unless `ptr` is on a class `c` block boundary below its slab's carve offset. */
  private checkCarved(ptr: number, c: number, op: string): void {
    const off = ptr % SLAB_BYTES;
    if (off % (32 << c) !== 0) throw misaligned(ptr, c, op);
    const top = topOffset(Atomics.load(this.hdr, this.topAt + (ptr >>> 20)));
    if (off >= top) throw noBlock(ptr, op, `this class ${c} slab has handed out blocks only below offset ${top}; nothing was allocated here`);
  }

  /**
   * Carves the next class `c` block from the class's current slab, starting a fresh slab when it is used up.
   * The carve is a CAS on the slab's TOP word, which names the class: an agent that read CARVE long ago and
   * whose slab has since been returned (its MiB perhaps a slab of another class now) finds another class or a
   * sealed offset there and carves nothing from it.
   */
  private carve(c: number): number {
    const hdr = this.hdr;
    const size = 32 << c;
    for (;;) {
      const slab = Atomics.load(hdr, H_CARVE + c) >>> 0;
      if (slab === 0) {
        const fresh = this.newSlab(c);
        if (fresh !== 0) return fresh;
        continue;
      }
      const top = this.topAt + (slab >>> 20);
      const t = Atomics.load(hdr, top);
      const off = topOffset(t);
      if (topClass(t) === c && off < SLAB_BYTES) {
        if (Atomics.compareExchange(hdr, top, t, t + size) === t) return this.fresh(slab + off);
        continue;
      }
      Atomics.compareExchange(hdr, H_CARVE + c, slab | 0, 0);
    }
  }

  /** Clears a just-carved block's free-mark word (the memory may hold anything from an earlier use). */
  private fresh(p: number): number {
    this.space.covers(p + 8);
    this.space.i32[(p >>> 2) + 1] = 0;
    return p;
  }

  /**
   * Reserves and commits a fresh slab for class `c`, takes its first block and publishes it as the class's
   * current slab; returns that block. Returns 0, having released the slab (nobody else knew of it), when
   * another agent published a slab first.
   */
  private newSlab(c: number): number {
    const space = this.space;
    const hdr = this.hdr;
    const slab = space.reserve(SLAB_BYTES, SLAB_BYTES);
    space.commit(slab, SLAB_BYTES);
    const m = slab >>> 20;
    const e = publishedEntry(Atomics.load(hdr, H_ENTRY + m), 1 + c);
    Atomics.store(hdr, this.topAt + m, topWord(c, 32 << c));
    Atomics.store(hdr, H_ENTRY + m, e);
    if (Atomics.compareExchange(hdr, H_CARVE + c, 0, slab | 0) === 0) return this.fresh(slab);
    Atomics.store(hdr, H_ENTRY + m, clearedEntry(e));
    Atomics.store(hdr, this.topAt + m, topWord(c, SLAB_BYTES));
    space.release(slab, SLAB_BYTES);
    return 0;
  }
}
