/**
 * The classic pool: Pony's allocator before `pool_arena`, in one shared buffer. This file is one agent's
 * handle on it, `ClassicPool`: the public API, the small-object path and the agent's life cycle.
 *
 * Small objects (0 B to 1 MiB, 16 power-of-two classes) come from this agent's free list for the class,
 * else a whole list popped from the class's global stack, else the class's bump range, else a new 1 MiB
 * block. A free pushes onto the freeing agent's list for the class, whoever allocated the object; a list
 * that already holds 1 MiB of objects is first pushed whole onto the global stack.
 *
 * Large blocks (above 1 MiB), and the 1 MiB blocks the classes bump from, are the agent's `LargeBlocks`
 * (`large.ts`): first fit from sorted lists, never merged, their pages discarded on free unless `retain`
 * is set. Nothing else is ever returned to the OS. Beside them: `layout.ts` (the numbers and the buffer
 * layout), `header.ts` (creating and opening the pool header), `shared.ts` (the structures every agent
 * shares), `check.ts` (the consistency check), `errors.ts` (bad input and its errors) and `types.ts`
 * (what the API takes and returns).
 *
 * See `docs/design/pool-classic.md` for the layouts and invariants.
 */
import { HeapError, checkAddressSpace, describeValue, formatAddress, formatBytes, type AddressSpace } from '@paddock/platform';
import { SIZE_CLASS_COUNT } from '@paddock/profile';
import {
  CLASS_COUNT,
  H_AGENTS,
  H_ENTRY,
  H_FLAGS,
  H_LARGE_MIBS,
  H_MIBS,
  H_STACK_COUNT,
  FLAG_RETAIN,
  KIND_MASK,
  LARGE_GLOBAL,
  LARGE_LIVE,
  LARGE_LOCAL,
  MAX_CLASS_SIZE,
  MiB,
  PAGE,
  RECORD_WORDS,
  R_AGENT,
  R_ALLOCS,
  R_FREES,
  R_LARGE_ALLOC_PAGES,
  R_LARGE_FREES,
  R_LARGE_FREE_PAGES,
  R_STATE,
  STACK_HEAD_BYTES,
  classIndex,
  entryWord,
  freeMark,
  headerBytes,
  listCapacity,
} from './layout.js';
import { checkPool } from './check.js';
import { badPointer, badSmall, checkLargeStart, checkSize, corrupt, doubleFree } from './errors.js';
import { createHeader, findHeader } from './header.js';
import { LargeBlocks } from './large.js';
import { claimRecord, forEachRecord, popList, pushList } from './shared.js';
import type { ClassicClassStats, ClassicPoolOptions, ClassicPoolStats } from './types.js';

/** Idle tick schedule, the same as the arena backend's: 10 ms doubling to 500 ms. */
export const TICK_MIN_MS = 10;
export const TICK_MAX_MS = 500;

if (SIZE_CLASS_COUNT !== CLASS_COUNT) throw new Error('@paddock/pool-classic: size class count differs from @paddock/profile');

/** One agent's handle on the classic pool of an address space. */
export class ClassicPool {
  /** Which backend this is. */
  readonly backend = 'pool_classic' as const;
  /** The address space the pool lives in. */
  readonly space: AddressSpace;
  /** Whether freed large blocks keep their pages. */
  readonly retain: boolean;
  /** Address of the shared pool header (also in root word 2). */
  readonly headerAddress: number;

  // V8 lays fields out in the order they are first assigned: the initialised fields (backend, head ...
  // lastOps) before the constructor's body (space ... rec, then blocks). The small malloc and free read
  // head, len, space, maxBytes, hdr and rec: new fields go after them, and `blocks` is assigned last.
  private readonly hdr: Int32Array;
  private readonly heads: BigInt64Array;
  private readonly rec: Int32Array;
  private readonly maxBytes: number;
  private readonly pagesAt: number;
  /** This agent's large blocks: its own free list, the global list and fresh chunks behind it. */
  private readonly blocks: LargeBlocks;

  // Agent-local state (JS memory). Addresses are kept as doubles: exact up to 4 GiB, no sign games.
  private readonly head = new Float64Array(CLASS_COUNT);
  private readonly len = new Int32Array(CLASS_COUNT);
  private readonly bump = new Float64Array(CLASS_COUNT);
  private readonly bumpEnd = new Float64Array(CLASS_COUNT);
  private tickDelay = TICK_MIN_MS;
  private lastOps = -1;

  private constructor(space: AddressSpace, address: number) {
    this.space = space;
    this.headerAddress = address;
    this.maxBytes = space.maxBytes;
    const probe = new Int32Array(space.buffer, address, H_ENTRY);
    const mibs = probe[H_MIBS]!;
    const bytes = headerBytes(mibs);
    space.covers(address + bytes);
    this.hdr = new Int32Array(space.buffer, address, bytes >>> 2);
    this.heads = new BigInt64Array(space.buffer, address + STACK_HEAD_BYTES, CLASS_COUNT);
    this.pagesAt = H_ENTRY + mibs;
    this.retain = (this.hdr[H_FLAGS]! & FLAG_RETAIN) !== 0;
    Atomics.add(this.hdr, H_AGENTS, 1);
    const record = claimRecord(space, this.hdr);
    this.rec = new Int32Array(space.buffer, record, RECORD_WORDS);
    this.rec[R_AGENT] = space.agentId;
    Atomics.store(this.rec, R_STATE, 1);
    this.blocks = new LargeBlocks(space, this.hdr, this.rec, this.retain, mibs);
  }

  /**
   * Creates the pool in `space` (the first agent) and publishes it in root word 2.
   * @throws HeapError `BAD_HANDLE` if the space already holds a pool; TypeError for bad options.
   */
  static create(space: AddressSpace, options: ClassicPoolOptions = {}): ClassicPool {
    checkAddressSpace(space);
    if (options === null || typeof options !== 'object') throw new TypeError(`ClassicPool.create options must be an object, got ${describeValue(options)}`);
    const retain = options.retain ?? false;
    if (typeof retain !== 'boolean') throw new TypeError(`retain must be a boolean, got ${describeValue(retain)}`);
    return new ClassicPool(space, createHeader(space, retain));
  }

  /**
   * Opens, in this agent, the pool another agent created in `space`.
   * @throws HeapError `BAD_HANDLE` when the space holds no classic pool.
   */
  static open(space: AddressSpace): ClassicPool {
    checkAddressSpace(space);
    return new ClassicPool(space, findHeader(space));
  }

  // ---- allocation -------------------------------------------------------------------------------

  /**
   * Allocates `size` bytes; 0 bytes gives a minimal block. Class objects are aligned to their class size,
   * large blocks to 1 MiB.
   * @throws RangeError for a negative, fractional, non-number or larger-than-the-space size; HeapError
   * `OUT_OF_MEMORY` when the space is full.
   */
  malloc(size: number): number {
    if (size >= 0 && size <= MAX_CLASS_SIZE && (size | 0) === size) return this.allocSmall(size <= 32 ? 0 : 27 - Math.clz32(size - 1));
    return this.blocks.alloc(checkSize('size', size, this.maxBytes));
  }

  /** Allocates `count * size` zeroed bytes. @throws RangeError for bad numbers or an overflowing product. */
  calloc(count: number, size: number): number {
    checkSize('count', count, Number.MAX_SAFE_INTEGER);
    checkSize('size', size, Number.MAX_SAFE_INTEGER);
    const total = count * size;
    if (total > this.maxBytes) {
      throw new RangeError(`calloc(${count}, ${size}) asks for ${total} bytes, more than the heap (maxBytes ${formatBytes(this.maxBytes)})`);
    }
    const p = this.malloc(total);
    if (total > 0) {
      this.space.covers(p + total);
      this.space.u8.fill(0, p, p + total);
    }
    return p;
  }

  /**
   * Resizes the block at `ptr`: 0 acts as malloc; a size of the same class (or the same rounded large
   * size) keeps the pointer; otherwise allocates, copies min(old, new) bytes and frees the old block
   * (with its real size, whatever the new size is).
   */
  realloc(ptr: number, size: number): number {
    if (ptr === 0) return this.malloc(size);
    const small = size >= 0 && size <= MAX_CLASS_SIZE && (size | 0) === size;
    if (!small) checkSize('size', size, this.maxBytes);
    const old = this.blockSize(ptr, 'realloc', 'DOUBLE_FREE');
    if (small) {
      if (old <= MAX_CLASS_SIZE && classIndex(size) === classIndex(old)) return ptr;
    } else if (old > MAX_CLASS_SIZE && Math.ceil(size / PAGE) * PAGE === old) {
      return ptr;
    }
    const q = this.malloc(size);
    const n = Math.min(old, size);
    if (n > 0) {
      this.space.covers(Math.max(ptr, q) + n);
      this.space.u8.copyWithin(q, ptr, ptr + n);
    }
    this.free(ptr);
    return q;
  }

  /** Bytes usable at `ptr`: the class size, or the large block's size in whole pages. */
  usableSize(ptr: number): number {
    return this.blockSize(ptr, 'usableSize', 'BAD_POINTER');
  }

  /**
   * Frees the block at `ptr`; free(0) does nothing. Any agent may free any block.
   * @throws HeapError `BAD_POINTER` (no block starts there), `MISALIGNED`, or `DOUBLE_FREE`; the heap is
   * left unchanged.
   */
  free(ptr: number): void {
    if (ptr === 0) return;
    if (typeof ptr !== 'number' || !(ptr > 0 && ptr < this.maxBytes)) throw badPointer(this.hdr, this.maxBytes, ptr, 'free');
    const e = this.hdr[H_ENTRY + (ptr >>> 20)]!;
    const k = e & KIND_MASK;
    if (k !== 0 && k <= CLASS_COUNT) {
      const c = k - 1;
      const off = ptr & (MiB - 1);
      if ((off & ((32 << c) - 1)) !== 0 || off >= e >>> 8 || ptr % 1 !== 0) throw badSmall(this.hdr, this.maxBytes, ptr, c, e, 'free');
      const space = this.space;
      if (ptr + 8 > space.viewBytes) space.covers(ptr + 8);
      const i = ptr >>> 2;
      const i32 = space.i32;
      const mark = freeMark(ptr, c);
      if (i32[i + 1] === mark) throw doubleFree(ptr, c);
      if (this.len[c]! >= 1 << (15 - c)) this.pushLocal(c);
      space.u32[i] = this.head[c]!;
      i32[i + 1] = mark;
      this.head[c] = ptr;
      this.len[c]!++;
      this.rec[R_FREES + c]!++;
      return;
    }
    this.blocks.free(ptr, e);
  }

  /** Validates `ptr` as a live block and returns its usable size. */
  private blockSize(ptr: number, op: string, freedCode: 'DOUBLE_FREE' | 'BAD_POINTER'): number {
    if (typeof ptr !== 'number' || !(ptr > 0 && ptr < this.maxBytes) || ptr % 1 !== 0) throw badPointer(this.hdr, this.maxBytes, ptr, op);
    const e = this.hdr[H_ENTRY + (ptr >>> 20)]!;
    const k = e & KIND_MASK;
    if (k !== 0 && k <= CLASS_COUNT) {
      const c = k - 1;
      const off = ptr % MiB;
      if (off % (32 << c) !== 0 || off >= e >>> 8) throw badSmall(this.hdr, this.maxBytes, ptr, c, e, op);
      this.space.covers(ptr + 8);
      if (this.space.i32[(ptr >>> 2) + 1] === freeMark(ptr, c)) {
        throw new HeapError(freedCode, `${op}(${formatAddress(ptr)}): the class ${c} object there was freed`, ptr);
      }
      return 32 << c;
    }
    if (k === LARGE_LIVE || k === LARGE_LOCAL || k === LARGE_GLOBAL) {
      checkLargeStart(this.hdr, this.maxBytes, ptr, op);
      if (k !== LARGE_LIVE) throw new HeapError(freedCode, `${op}(${formatAddress(ptr)}): the large block there was freed`, ptr);
      return this.hdr[this.pagesAt + ptr / MiB]! * PAGE;
    }
    throw badPointer(this.hdr, this.maxBytes, ptr, op);
  }

  // ---- agent life cycle ---------------------------------------------------------------------------

  /** Pushes this agent's free lists (every class, and its free large blocks) to the global lists. */
  flush(): void {
    for (let c = 0; c < CLASS_COUNT; c++) if (this.len[c]! > 0) this.pushLocal(c);
    this.blocks.flush();
  }

  /** The classic pool has no inboxes: nothing to drain. */
  drain(): void {}

  /**
   * One idle tick. Returns the milliseconds until the next tick is worth running: 10 after any allocation
   * activity since the last tick, then doubling per quiet tick up to 500, where it runs {@link returnIdle}
   * (which, for the classic pool, keeps everything).
   */
  tick(): number {
    const ops = this.opCount();
    if (ops !== this.lastOps) {
      this.lastOps = ops;
      this.tickDelay = TICK_MIN_MS;
    } else if (this.tickDelay < TICK_MAX_MS) {
      this.tickDelay = Math.min(TICK_MAX_MS, this.tickDelay * 2);
      if (this.tickDelay === TICK_MAX_MS) this.returnIdle();
    }
    return this.tickDelay;
  }

  /**
   * The classic pool's idle return keeps all memory: its free lists, bump ranges and large blocks stay
   * with this agent, committed. That is the documented difference from the arena backend.
   */
  returnIdle(): void {}

  /**
   * Agent exit: hands everything to the global lists (free lists, the unused rest of every bump range as
   * a list of free objects, free large blocks). The handle stays usable and starts over if used again.
   */
  detach(): void {
    this.flush();
    const space = this.space;
    for (let c = 0; c < CLASS_COUNT; c++) {
      const b = this.bump[c]!;
      const end = this.bumpEnd[c]!;
      this.bump[c] = 0;
      this.bumpEnd[c] = 0;
      if (b === 0 || b >= end) continue;
      const s = 32 << c;
      space.covers(end);
      const u32 = space.u32;
      const i32 = space.i32;
      for (let p = b; p < end; p += s) {
        u32[p >>> 2] = p + s < end ? p + s : 0;
        i32[(p >>> 2) + 1] = freeMark(p, c);
      }
      Atomics.store(this.hdr, H_ENTRY + (b >>> 20), entryWord(c + 1, MiB));
      pushList(space, this.hdr, this.heads, c, b, (end - b) / s);
    }
    Atomics.store(this.rec, R_STATE, 2);
  }

  // ---- inspection ---------------------------------------------------------------------------------

  /** Heap figures; live counts are exact when no agent is allocating or freeing at the same time. */
  stats(): ClassicPoolStats {
    const live = new Array<number>(CLASS_COUNT).fill(0);
    let largePages = 0;
    const i32 = (): Int32Array => this.space.i32;
    forEachRecord(this.space, this.hdr, (r) => {
      const w = r >>> 2;
      const v = i32();
      for (let c = 0; c < CLASS_COUNT; c++) live[c] = (live[c]! + ((v[w + R_ALLOCS + c]! - v[w + R_FREES + c]!) | 0)) | 0;
      largePages = (largePages + ((v[w + R_LARGE_ALLOC_PAGES]! - v[w + R_LARGE_FREE_PAGES]!) | 0)) | 0;
    });
    const perClass: ClassicClassStats[] = [];
    let liveBytes = largePages * PAGE;
    for (let c = 0; c < CLASS_COUNT; c++) {
      const size = 32 << c;
      liveBytes += live[c]! * size;
      perClass.push({ size, live: live[c]!, free: this.len[c]! + Atomics.load(this.hdr, H_STACK_COUNT + c) });
    }
    const largeMibs = Atomics.load(this.hdr, H_LARGE_MIBS) + this.blocks.localMibs();
    return {
      backend: 'pool_classic',
      pageReturn: this.retain ? 'none' : this.space.pageReturn,
      committedBytes: this.space.committedBytes,
      liveBytes,
      perClass,
      largeFreeBytes: largeMibs * MiB,
    };
  }

  /**
   * Walks everything this agent can see and validates it: the MiB table (no block inside another), this
   * agent's free lists and bump ranges, every list on the global stacks and the global large list (each
   * taken off while it is checked, then put back). Object marks, alignment, classes, lengths, cycles, and
   * that no object is on two lists.
   * @throws HeapError `CORRUPTION` naming the first broken rule.
   */
  check(): void {
    const lists = { head: this.head, len: this.len, bump: this.bump, bumpEnd: this.bumpEnd };
    checkPool(this.space, this.headerAddress, this.hdr, this.heads, lists, this.blocks);
  }

  // ---- small objects: the list pop and its slow paths ---------------------------------------------

  private allocSmall(c: number): number {
    const p = this.head[c]!;
    if (p !== 0) {
      const i = p >>> 2;
      const i32 = this.space.i32;
      if (i32[i + 1] === freeMark(p, c)) {
        this.head[c] = this.space.u32[i]!;
        i32[i + 1] = 0;
        this.len[c]!--;
        this.rec[R_ALLOCS + c]!++;
        return p;
      }
      return this.popChecked(c, p);
    }
    return this.refill(c);
  }

  /** The local list's head lost its mark, or lies beyond this agent's views (a list pulled from the global stack). */
  private popChecked(c: number, p: number): number {
    const space = this.space;
    if (!space.covers(p + 8) || space.i32[(p >>> 2) + 1] !== freeMark(p, c)) {
      corrupt(
        `the class ${c} free list reaches ${formatAddress(p)}, which carries no free mark: a freed object was written after free, or a link is corrupted`,
        p,
      );
    }
    return this.allocSmall(c);
  }

  /** The local list is empty: pull a list from the global stack, else bump, else start a new 1 MiB block. */
  private refill(c: number): number {
    const h = popList(this.space, this.heads, c);
    if (h !== 0) {
      const i = h >>> 2;
      const n = this.space.u32[i + 2]!;
      Atomics.sub(this.hdr, H_STACK_COUNT + c, n);
      if (this.space.i32[i + 1] !== freeMark(h, c) || n < 1 || n > listCapacity(c)) {
        corrupt(`a class ${c} list popped from the global stack is damaged (head mark or length ${n})`, h);
      }
      this.head[c] = this.space.u32[i]!;
      this.len[c] = n - 1;
      this.space.i32[i + 1] = 0;
      this.rec[R_ALLOCS + c]!++;
      return h;
    }
    let b = this.bump[c]!;
    if (b === 0 || b >= this.bumpEnd[c]!) b = this.newClassBlock(c);
    const next = b + (32 << c);
    this.bump[c] = next;
    const m = b >>> 20;
    this.hdr[H_ENTRY + m] = ((next - m * MiB) << 8) | (c + 1);
    this.space.i32[(b >>> 2) + 1] = 0; // the block may be recycled large memory: no stale mark
    this.rec[R_ALLOCS + c]!++;
    return b;
  }

  private newClassBlock(c: number): number {
    const a = this.blocks.takeCommitted(1, MiB);
    Atomics.store(this.hdr, H_ENTRY + (a >>> 20), c + 1);
    this.bump[c] = a;
    this.bumpEnd[c] = a + MiB;
    return a;
  }

  private pushLocal(c: number): void {
    pushList(this.space, this.hdr, this.heads, c, this.head[c]!, this.len[c]!);
    this.head[c] = 0;
    this.len[c] = 0;
  }

  /** This agent's allocation and free count, for idle detection. */
  private opCount(): number {
    let sum = 0;
    for (let w = R_ALLOCS; w <= R_LARGE_FREES; w++) sum = (sum + this.rec[w]!) | 0;
    return sum;
  }
}
