/**
 * One agent's large blocks in the classic pool. A request above 1 MiB is rounded up to 4 KiB pages and
 * occupies a whole number of MiBs (its footprint), aligned to 1 MiB. A piece of that footprint comes
 * first fit from this agent's free large blocks (a sorted array of keys in JS memory), then from the
 * global large list, then from a fresh chunk reserved from the space; a bigger free block is split: the
 * request takes its top end and the rest stays a free block on this agent's list. New 1 MiB class blocks
 * are taken the same way. A freed block joins the freeing agent's list, is never merged with its
 * neighbours, and has its pages discarded unless `retain` is set; a list grown past
 * `LOCAL_LARGE_MAX` blocks hands its largest half to the global list.
 */
import { HeapError, formatAddress, formatBytes, type AddressSpace } from '@paddock/platform';
import {
  CHUNK_MIBS,
  H_ENTRY,
  H_LARGE_BLOCKS,
  H_LARGE_MIBS,
  KIND_MASK,
  LARGE_GLOBAL,
  LARGE_LIVE,
  LARGE_LOCAL,
  LOCAL_LARGE_MAX,
  MiB,
  PAGE,
  PAGES_PER_MIB,
  R_LARGE_ALLOCS,
  R_LARGE_ALLOC_PAGES,
  R_LARGE_FREES,
  R_LARGE_FREE_PAGES,
  entryWord,
  keyFootprint,
  keyMib,
  largeKey,
} from './layout.js';
import { badPointer, checkLargeStart, corrupt } from './errors.js';
import { LargeList } from './shared.js';

/** One agent's side of the large blocks: its own free list, and its use of the global one. */
export class LargeBlocks {
  /** This agent's free large blocks, as ascending {@link largeKey}s (footprint, then first MiB). */
  readonly keys: number[] = [];
  /** The global list of free large blocks, shared by every agent. */
  readonly global: LargeList;
  private readonly space: AddressSpace;
  private readonly hdr: Int32Array;
  private readonly rec: Int32Array;
  private readonly retain: boolean;
  private readonly mibs: number;
  private readonly maxBytes: number;
  private readonly pagesAt: number;

  /**
   * `hdr` is the pool header (MiB table included), `rec` this agent's statistics record, `mibs` the
   * number of MiBs in the space.
   */
  constructor(space: AddressSpace, hdr: Int32Array, rec: Int32Array, retain: boolean, mibs: number) {
    this.space = space;
    this.hdr = hdr;
    this.rec = rec;
    this.retain = retain;
    this.mibs = mibs;
    this.maxBytes = space.maxBytes;
    this.pagesAt = H_ENTRY + mibs;
    this.global = new LargeList(hdr, mibs);
  }

  /** Allocates a large block of `size` bytes (above 1 MiB, already checked against the space). */
  alloc(size: number): number {
    const need = Math.ceil(size / PAGE);
    const fp = Math.ceil(need / PAGES_PER_MIB);
    const a = this.takeCommitted(fp, need * PAGE);
    const m = a / MiB;
    this.hdr[this.pagesAt + m] = need;
    Atomics.store(this.hdr, H_ENTRY + m, entryWord(LARGE_LIVE, fp));
    this.rec[R_LARGE_ALLOCS]!++;
    this.rec[R_LARGE_ALLOC_PAGES]! += need;
    return a;
  }

  /**
   * Frees the large block at `ptr`, whose MiB has entry `e` (any kind but a class block's).
   * @throws HeapError `BAD_POINTER`, `MISALIGNED` or `DOUBLE_FREE`, before anything changes.
   */
  free(ptr: number, e: number): void {
    const k = e & KIND_MASK;
    if (k !== LARGE_LIVE && k !== LARGE_LOCAL && k !== LARGE_GLOBAL) throw badPointer(this.hdr, this.maxBytes, ptr, 'free');
    checkLargeStart(this.hdr, this.maxBytes, ptr, 'free');
    const m = ptr / MiB;
    let fp: number;
    for (;;) {
      const cur = Atomics.load(this.hdr, H_ENTRY + m);
      const kind = cur & KIND_MASK;
      if (kind !== LARGE_LIVE) {
        if (kind === LARGE_LOCAL || kind === LARGE_GLOBAL) {
          throw new HeapError('DOUBLE_FREE', `free(${formatAddress(ptr)}): the large block of ${formatBytes((cur >>> 8) * MiB)} there is already free`, ptr);
        }
        throw badPointer(this.hdr, this.maxBytes, ptr, 'free');
      }
      fp = cur >>> 8;
      // One CAS, so two agents freeing the same block at once cannot both succeed.
      if (Atomics.compareExchange(this.hdr, H_ENTRY + m, cur, entryWord(LARGE_LOCAL, fp)) === cur) break;
    }
    this.rec[R_LARGE_FREES]!++;
    this.rec[R_LARGE_FREE_PAGES]! += this.hdr[this.pagesAt + m]!;
    if (!this.retain) this.space.discard(ptr, fp * MiB);
    this.insertLocal(fp, m);
    if (this.keys.length > LOCAL_LARGE_MAX) this.spill(this.keys.length >>> 1);
  }

  /**
   * A free piece of exactly `fp` MiBs with its first `bytes` committed; if the commit fails, the piece
   * goes back to this agent's list before the error is rethrown. The caller sets the piece's entry (a
   * large block or a class block).
   */
  takeCommitted(fp: number, bytes: number): number {
    const a = this.take(fp);
    try {
      this.space.commit(a, bytes);
    } catch (err) {
      const m = a / MiB;
      Atomics.store(this.hdr, H_ENTRY + m, entryWord(LARGE_LOCAL, fp));
      this.insertLocal(fp, m);
      throw err;
    }
    return a;
  }

  /** Moves every free large block of this agent to the global list. */
  flush(): void {
    if (this.keys.length > 0) this.spill(this.keys.length);
  }

  /** MiBs in this agent's free large blocks. */
  localMibs(): number {
    let mibs = 0;
    for (const key of this.keys) mibs += keyFootprint(key);
    return mibs;
  }

  /** A free piece of exactly `fp` MiBs: first fit from this agent's list, then the global list, then a fresh chunk. */
  private take(fp: number): number {
    let a = this.takeLocal(fp);
    if (a < 0) a = this.takeGlobal(fp);
    if (a < 0) a = this.takeFresh(fp);
    return a;
  }

  private takeLocal(fp: number): number {
    const keys = this.keys;
    const at = lowerBound(keys, largeKey(fp, 0));
    if (at === keys.length) return -1;
    const key = keys[at]!;
    keys.splice(at, 1);
    return this.carve(keyMib(key), keyFootprint(key), fp);
  }

  private takeGlobal(fp: number): number {
    let list = this.global.take();
    if (list === 0) return -1;
    let prev = 0;
    let b = list;
    for (let steps = 0; b !== 0 && this.hdr[H_ENTRY + b / MiB]! >>> 8 < fp; steps++) {
      if (steps > this.mibs) corrupt('the global large list has a cycle');
      prev = b;
      b = this.global.next(b);
    }
    if (b !== 0) {
      const next = this.global.next(b);
      if (prev === 0) list = next;
      else this.global.setNext(prev, next);
    }
    this.global.putBack(list);
    if (b === 0) return -1;
    const m = b / MiB;
    const e = this.hdr[H_ENTRY + m]!;
    if ((e & KIND_MASK) !== LARGE_GLOBAL) corrupt('a block on the global large list is not marked as a free global block', b);
    const have = e >>> 8;
    Atomics.sub(this.hdr, H_LARGE_MIBS, have);
    Atomics.sub(this.hdr, H_LARGE_BLOCKS, 1);
    Atomics.store(this.hdr, H_ENTRY + m, entryWord(LARGE_LOCAL, have));
    return this.carve(m, have, fp);
  }

  private takeFresh(fp: number): number {
    let chunk = Math.max(fp, CHUNK_MIBS);
    let a: number;
    try {
      a = this.space.reserve(chunk * MiB, MiB);
    } catch (err) {
      if (chunk === fp || !(err instanceof HeapError) || err.code !== 'OUT_OF_MEMORY') throw err;
      chunk = fp;
      a = this.space.reserve(chunk * MiB, MiB);
    }
    const m = a / MiB;
    Atomics.store(this.hdr, H_ENTRY + m, entryWord(LARGE_LOCAL, chunk));
    return this.carve(m, chunk, fp);
  }

  /**
   * Takes `fp` MiBs off the top of the free block at MiB `m` of `have` MiBs (this agent's, unlisted); the
   * rest stays a free block at `m` on this agent's list. The head shrinks before the new piece gets an
   * entry, so no moment shows one block inside another.
   */
  private carve(m: number, have: number, fp: number): number {
    if (have === fp) return m * MiB;
    const rest = have - fp;
    Atomics.store(this.hdr, H_ENTRY + m, entryWord(LARGE_LOCAL, rest));
    this.insertLocal(rest, m);
    return (m + rest) * MiB;
  }

  private insertLocal(fp: number, m: number): void {
    const key = largeKey(fp, m);
    this.keys.splice(lowerBound(this.keys, key), 0, key);
  }

  /** Moves this agent's `count` largest free large blocks to the global list. */
  private spill(count: number): void {
    const moved = this.keys.splice(this.keys.length - count, count);
    let list = 0;
    let mibs = 0;
    for (let j = moved.length - 1; j >= 0; j--) {
      const fp = keyFootprint(moved[j]!);
      const m = keyMib(moved[j]!);
      Atomics.store(this.hdr, H_ENTRY + m, entryWord(LARGE_GLOBAL, fp));
      this.global.setNext(m * MiB, list);
      list = m * MiB;
      mibs += fp;
    }
    Atomics.add(this.hdr, H_LARGE_MIBS, mibs);
    Atomics.add(this.hdr, H_LARGE_BLOCKS, moved.length);
    this.global.putBack(list);
  }
}

/** The index of the first of the ascending `keys` that is not below `key` (`keys.length` when none is). */
function lowerBound(keys: readonly number[], key: number): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
