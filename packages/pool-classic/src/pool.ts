/**
 * The classic pool: Pony's allocator before `pool_arena`, in one shared buffer.
 *
 * Small objects (0 B to 1 MiB, 16 power-of-two classes) come from this agent's free list for the class,
 * else a whole list popped from the class's global stack, else the class's bump range, else a new 1 MiB
 * block. A free pushes onto the freeing agent's list for the class, whoever allocated the object; a list
 * that already holds 1 MiB of objects is first pushed whole onto the global stack.
 *
 * Large blocks (above 1 MiB) are rounded up to 4 KiB pages and occupy a whole number of MiBs. They come
 * first-fit from this agent's free large blocks sorted by size, then the global list, then a fresh
 * reservation; a bigger free block is split (the request takes its top end, the rest stays listed). A
 * freed large block goes onto the freeing agent's list, never back to the agent that allocated it, and
 * is never merged with its neighbours; its pages are discarded unless `retain` is set. New 1 MiB blocks
 * for the classes come from the same large lists. Nothing else is ever returned to the OS.
 *
 * See `docs/design/pool-classic.md` for the layouts and invariants.
 */
import { HeapError, describeValue, formatAddress, formatBytes, type AddressSpace, type PageReturnMode } from '@paddock/platform';
import { SIZE_CLASS_COUNT } from '@paddock/profile';
import {
  CHUNK_MIBS,
  CLASS_COUNT,
  FLAG_RETAIN,
  H_ENTRY,
  H_FLAGS,
  H_LARGE_BLOCKS,
  H_LARGE_MIBS,
  H_MAGIC,
  H_MIBS,
  H_AGENTS,
  H_STACK_COUNT,
  H_VERSION,
  KIND_MASK,
  LARGE_GLOBAL,
  LARGE_LIVE,
  LARGE_LOCAL,
  LOCAL_LARGE_MAX,
  MAGIC,
  MAX_CLASS_SIZE,
  MiB,
  PAGE,
  PAGES_PER_MIB,
  RECORD_WORDS,
  R_AGENT,
  R_ALLOCS,
  R_FREES,
  R_LARGE_ALLOCS,
  R_LARGE_ALLOC_PAGES,
  R_LARGE_FREES,
  R_LARGE_FREE_PAGES,
  R_STATE,
  STACK_HEAD_BYTES,
  VERSION,
  classIndex,
  freeMark,
  headerBytes,
  listCapacity,
} from './layout.js';
import { LargeList, claimRecord, forEachRecord, popList, pushList } from './shared.js';

/** The root word that holds the pool header's address (0 and 1 belong to the region layer and the registry). */
export const POOL_ROOT = 2;

/** Idle tick schedule, the same as the arena backend's: 10 ms doubling to 500 ms. */
export const TICK_MIN_MS = 10;
export const TICK_MAX_MS = 500;

if (SIZE_CLASS_COUNT !== CLASS_COUNT) throw new Error('@paddock/pool-classic: size class count differs from @paddock/profile');

/** Options for {@link ClassicPool.create}. */
export interface ClassicPoolOptions {
  /** Keep freed large blocks' pages (Pony's `pool_retain` build flag): nothing at all goes back to the OS. */
  retain?: boolean;
}

/** One size class in {@link ClassicPoolStats}. */
export interface ClassicClassStats {
  /** Object size of the class in bytes. */
  size: number;
  /** Objects of this class live in the whole heap (allocated and not yet freed, by any agent). */
  live: number;
  /** Free objects of this class that this agent can see: its own list plus the global stack. */
  free: number;
}

/** What {@link ClassicPool.stats} reports. */
export interface ClassicPoolStats {
  backend: 'pool_classic';
  /** How freed large blocks' pages reach the OS: `'none'` without the native addon, or with `retain`. */
  pageReturn: PageReturnMode;
  /** Bytes committed in the whole address space (the pool's memory and headers). */
  committedBytes: number;
  /** Bytes in live blocks, whole heap, at their usable sizes. */
  liveBytes: number;
  /** Per size class, 32 B to 1 MiB. */
  perClass: ClassicClassStats[];
  /** Bytes of free large blocks (and unused parts of reserved chunks) on this agent's list and the global list. */
  largeFreeBytes: number;
}

const KEY_SCALE = 4096; // local large keys: footprint * KEY_SCALE + first MiB (MiB index < 4096)

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

  private readonly hdr: Int32Array;
  private readonly heads: BigInt64Array;
  private readonly large: LargeList;
  private readonly rec: Int32Array;
  private readonly maxBytes: number;
  private readonly mibs: number;
  private readonly pagesAt: number;

  // Agent-local state (JS memory). Addresses are kept as doubles: exact up to 4 GiB, no sign games.
  private readonly head = new Float64Array(CLASS_COUNT);
  private readonly len = new Int32Array(CLASS_COUNT);
  private readonly bump = new Float64Array(CLASS_COUNT);
  private readonly bumpEnd = new Float64Array(CLASS_COUNT);
  /** This agent's free large blocks, as sorted keys `footprint * 4096 + firstMiB`. */
  private largeKeys: number[] = [];
  private tickDelay = TICK_MIN_MS;
  private lastOps = -1;

  private constructor(space: AddressSpace, address: number) {
    this.space = space;
    this.headerAddress = address;
    this.maxBytes = space.maxBytes;
    const probe = new Int32Array(space.buffer, address, H_ENTRY);
    this.mibs = probe[H_MIBS]!;
    const bytes = headerBytes(this.mibs);
    space.covers(address + bytes);
    this.hdr = new Int32Array(space.buffer, address, bytes >>> 2);
    this.heads = new BigInt64Array(space.buffer, address + STACK_HEAD_BYTES, CLASS_COUNT);
    this.pagesAt = H_ENTRY + this.mibs;
    this.large = new LargeList(this.hdr, this.mibs);
    this.retain = (this.hdr[H_FLAGS]! & FLAG_RETAIN) !== 0;
    Atomics.add(this.hdr, H_AGENTS, 1);
    const record = claimRecord(space, this.hdr);
    this.rec = new Int32Array(space.buffer, record, RECORD_WORDS);
    this.rec[R_AGENT] = space.agentId;
    Atomics.store(this.rec, R_STATE, 1);
  }

  /**
   * Creates the pool in `space` (the first agent) and publishes it in root word 2.
   * @throws HeapError `BAD_HANDLE` if the space already holds a pool; TypeError for bad options.
   */
  static create(space: AddressSpace, options: ClassicPoolOptions = {}): ClassicPool {
    checkSpace(space);
    if (options === null || typeof options !== 'object') throw new TypeError(`ClassicPool.create options must be an object, got ${describeValue(options)}`);
    const retain = options.retain ?? false;
    if (typeof retain !== 'boolean') throw new TypeError(`retain must be a boolean, got ${describeValue(retain)}`);
    if (space.root(POOL_ROOT) !== 0) {
      throw new HeapError('BAD_HANDLE', `this address space already holds a pool (root word ${POOL_ROOT} is set): open it with ClassicPool.open(space)`);
    }
    const mibs = Math.ceil(space.maxBytes / MiB);
    const bytes = headerBytes(mibs);
    const address = space.reserve(bytes);
    space.commit(address, bytes);
    const hdr = new Int32Array(space.buffer, address, bytes >>> 2);
    hdr.fill(0);
    hdr[H_VERSION] = VERSION;
    hdr[H_FLAGS] = retain ? FLAG_RETAIN : 0;
    hdr[H_MIBS] = mibs;
    Atomics.store(hdr, H_MAGIC, MAGIC);
    if (space.casRoot(POOL_ROOT, 0, address) !== 0) {
      space.release(address, bytes);
      throw new HeapError('BAD_HANDLE', `another agent created a pool in this address space first: open it with ClassicPool.open(space)`);
    }
    return new ClassicPool(space, address);
  }

  /**
   * Opens, in this agent, the pool another agent created in `space`.
   * @throws HeapError `BAD_HANDLE` when the space holds no classic pool.
   */
  static open(space: AddressSpace): ClassicPool {
    checkSpace(space);
    const address = space.root(POOL_ROOT) >>> 0;
    if (address === 0) {
      throw new HeapError('BAD_HANDLE', `this address space holds no pool (root word ${POOL_ROOT} is 0): create one with ClassicPool.create(space)`);
    }
    if (!space.covers(address + H_ENTRY * 4)) throw new HeapError('BAD_HANDLE', `root word ${POOL_ROOT} points outside the buffer (${formatAddress(address)})`);
    const probe = new Int32Array(space.buffer, address, H_ENTRY);
    if (Atomics.load(probe, H_MAGIC) !== MAGIC) {
      throw new HeapError('BAD_HANDLE', `root word ${POOL_ROOT} does not point at a classic pool header (no magic at ${formatAddress(address)}): the space may hold another backend`);
    }
    if (probe[H_VERSION] !== VERSION) throw new HeapError('BAD_HANDLE', `classic pool header version ${probe[H_VERSION]}, this build reads ${VERSION}`);
    if (probe[H_MIBS] !== Math.ceil(space.maxBytes / MiB)) throw new HeapError('BAD_HANDLE', 'the classic pool header does not match the address space');
    return new ClassicPool(space, address);
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
    return this.allocLarge(checkSize('size', size, this.maxBytes));
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
    if (typeof ptr !== 'number' || !(ptr > 0 && ptr < this.maxBytes)) throw this.badPointer(ptr, 'free');
    const e = this.hdr[H_ENTRY + (ptr >>> 20)]!;
    const k = e & KIND_MASK;
    if (k !== 0 && k <= CLASS_COUNT) {
      const c = k - 1;
      const off = ptr & (MiB - 1);
      if ((off & ((32 << c) - 1)) !== 0 || off >= e >>> 8 || ptr % 1 !== 0) throw this.badSmall(ptr, c, e, 'free');
      const space = this.space;
      if (ptr + 8 > space.viewBytes) space.covers(ptr + 8);
      const i = ptr >>> 2;
      const i32 = space.i32;
      const mark = freeMark(ptr, c);
      if (i32[i + 1] === mark) throw this.doubleFree(ptr, c);
      if (this.len[c]! >= 1 << (15 - c)) this.pushLocal(c);
      space.u32[i] = this.head[c]!;
      i32[i + 1] = mark;
      this.head[c] = ptr;
      this.len[c]!++;
      this.rec[R_FREES + c]!++;
      return;
    }
    this.freeLarge(ptr, e);
  }

  // ---- agent life cycle ---------------------------------------------------------------------------

  /** Pushes this agent's free lists (every class, and its free large blocks) to the global lists. */
  flush(): void {
    for (let c = 0; c < CLASS_COUNT; c++) if (this.len[c]! > 0) this.pushLocal(c);
    if (this.largeKeys.length > 0) this.spill(this.largeKeys.length);
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
      Atomics.store(this.hdr, H_ENTRY + (b >>> 20), (MiB << 8) | (c + 1));
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
    let largeMibs = Atomics.load(this.hdr, H_LARGE_MIBS);
    for (const key of this.largeKeys) largeMibs += Math.floor(key / KEY_SCALE);
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
    if (Atomics.load(this.hdr, H_MAGIC) !== MAGIC) this.corrupt('the pool header lost its magic', this.headerAddress);
    this.checkTable();
    const seen = new Set<number>();
    for (let c = 0; c < CLASS_COUNT; c++) {
      this.walkList(c, this.head[c]!, this.len[c]!, seen, `this agent's class ${c} list`);
      const b = this.bump[c]!;
      const end = this.bumpEnd[c]!;
      if (b !== 0) {
        const base = end - MiB;
        const e = this.hdr[H_ENTRY + base / MiB]!;
        if (end % MiB !== 0 || b < base || b > end) this.corrupt(`class ${c} bump range [${formatAddress(b)}, ${formatAddress(end)}) is not inside one 1 MiB block`, b);
        if ((e & KIND_MASK) !== c + 1) this.corrupt(`class ${c} bump range lies in a MiB that is not a class ${c} block`, base);
        if (e >>> 8 !== b - base) this.corrupt(`class ${c} block's high-water offset ${e >>> 8} differs from this agent's bump offset ${b - base}`, base);
      }
    }
    // The global stacks: take every list off (so nobody changes it while we look), check, put back.
    for (let c = 0; c < CLASS_COUNT; c++) {
      const taken: number[] = [];
      try {
        for (let h = popList(this.space, this.heads, c); h !== 0; h = popList(this.space, this.heads, c)) {
          taken.push(h);
          const n = this.space.u32[(h >>> 2) + 2]!;
          if (n < 1 || n > listCapacity(c)) this.corrupt(`a class ${c} list on the global stack claims ${n} objects (1 to ${listCapacity(c)} allowed)`, h);
          this.walkList(c, h, n, seen, `a class ${c} list on the global stack`);
        }
      } finally {
        for (let j = taken.length - 1; j >= 0; j--) {
          const h = taken[j]!;
          const n = this.space.u32[(h >>> 2) + 2]!;
          Atomics.sub(this.hdr, H_STACK_COUNT + c, n);
          pushList(this.space, this.hdr, this.heads, c, h, n);
        }
      }
    }
    // This agent's large list.
    const keys = this.largeKeys;
    for (let j = 0; j < keys.length; j++) {
      const key = keys[j]!;
      if (j > 0 && keys[j - 1]! >= key) this.corrupt(`this agent's large list is not sorted at entry ${j}`);
      const fp = Math.floor(key / KEY_SCALE);
      const m = key % KEY_SCALE;
      if (this.hdr[H_ENTRY + m] !== ((fp << 8) | LARGE_LOCAL)) this.corrupt(`a block on this agent's large list (${fp} MiB) is not marked as a free local block`, m * MiB);
      seen.add(m * MiB);
    }
    // The global large list.
    let list = this.large.take();
    try {
      let prevKey = -1;
      let count = 0;
      for (let b = list; b !== 0; b = this.large.next(b)) {
        if (++count > this.mibs) this.corrupt('the global large list is longer than the space has MiBs (a cycle)');
        if (b % MiB !== 0 || b >= this.maxBytes) this.corrupt(`the global large list links to ${formatAddress(b)}, not a MiB of the space`, b);
        const e = this.hdr[H_ENTRY + b / MiB]!;
        if ((e & KIND_MASK) !== LARGE_GLOBAL) this.corrupt('a block on the global large list is not marked as a free global block', b);
        const key = this.large.key(b);
        if (key <= prevKey) this.corrupt('the global large list is not sorted by size', b);
        if (seen.has(b)) this.corrupt('a large block is on two lists', b);
        seen.add(b);
        prevKey = key;
      }
    } finally {
      this.large.putBack(list);
      list = 0;
    }
  }

  // ---- small objects: slow paths ------------------------------------------------------------------

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
      this.corrupt(
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
        this.corrupt(`a class ${c} list popped from the global stack is damaged (head mark or length ${n})`, h);
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
    const a = this.takeBlock(1);
    try {
      this.space.commit(a, MiB);
    } catch (err) {
      this.giveBack(a, 1);
      throw err;
    }
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

  // ---- large blocks -------------------------------------------------------------------------------

  private allocLarge(size: number): number {
    const need = Math.ceil(size / PAGE);
    const fp = Math.ceil(need / PAGES_PER_MIB);
    const a = this.takeBlock(fp);
    try {
      this.space.commit(a, need * PAGE);
    } catch (err) {
      this.giveBack(a, fp);
      throw err;
    }
    const m = a / MiB;
    this.hdr[this.pagesAt + m] = need;
    Atomics.store(this.hdr, H_ENTRY + m, (fp << 8) | LARGE_LIVE);
    this.rec[R_LARGE_ALLOCS]!++;
    this.rec[R_LARGE_ALLOC_PAGES]! += need;
    return a;
  }

  private freeLarge(ptr: number, e: number): void {
    const k = e & KIND_MASK;
    if (k !== LARGE_LIVE && k !== LARGE_LOCAL && k !== LARGE_GLOBAL) throw this.badPointer(ptr, 'free');
    if (ptr % PAGE !== 0) throw new HeapError('MISALIGNED', `free(${formatAddress(ptr)}): not the start of a block (large blocks start on 1 MiB boundaries)`, ptr);
    if (ptr % MiB !== 0) throw this.badPointer(ptr, 'free');
    const m = ptr / MiB;
    let fp: number;
    for (;;) {
      const cur = Atomics.load(this.hdr, H_ENTRY + m);
      const kind = cur & KIND_MASK;
      if (kind !== LARGE_LIVE) {
        if (kind === LARGE_LOCAL || kind === LARGE_GLOBAL) {
          throw new HeapError('DOUBLE_FREE', `free(${formatAddress(ptr)}): the large block of ${formatBytes((cur >>> 8) * MiB)} there is already free`, ptr);
        }
        throw this.badPointer(ptr, 'free');
      }
      fp = cur >>> 8;
      // One CAS, so two agents freeing the same block at once cannot both succeed.
      if (Atomics.compareExchange(this.hdr, H_ENTRY + m, cur, (fp << 8) | LARGE_LOCAL) === cur) break;
    }
    this.rec[R_LARGE_FREES]!++;
    this.rec[R_LARGE_FREE_PAGES]! += this.hdr[this.pagesAt + m]!;
    if (!this.retain) this.space.discard(ptr, fp * MiB);
    this.insertLocal(fp, m);
    if (this.largeKeys.length > LOCAL_LARGE_MAX) this.spill(this.largeKeys.length >>> 1);
  }

  /**
   * A free piece of exactly `fp` MiBs: first fit from this agent's list, then the global list, then a
   * fresh chunk. The caller sets the piece's entry (large block or class block).
   */
  private takeBlock(fp: number): number {
    let a = this.takeLocal(fp);
    if (a < 0) a = this.takeGlobal(fp);
    if (a < 0) a = this.takeFresh(fp);
    return a;
  }

  private takeLocal(fp: number): number {
    const keys = this.largeKeys;
    const want = fp * KEY_SCALE;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid]! < want) lo = mid + 1;
      else hi = mid;
    }
    if (lo === keys.length) return -1;
    const key = keys[lo]!;
    keys.splice(lo, 1);
    return this.carve(key % KEY_SCALE, Math.floor(key / KEY_SCALE), fp);
  }

  private takeGlobal(fp: number): number {
    let list = this.large.take();
    if (list === 0) return -1;
    let prev = 0;
    let b = list;
    for (let steps = 0; b !== 0 && this.hdr[H_ENTRY + b / MiB]! >>> 8 < fp; steps++) {
      if (steps > this.mibs) this.corrupt('the global large list has a cycle');
      prev = b;
      b = this.large.next(b);
    }
    if (b !== 0) {
      const next = this.large.next(b);
      if (prev === 0) list = next;
      else this.large.setNext(prev, next);
    }
    this.large.putBack(list);
    if (b === 0) return -1;
    const m = b / MiB;
    const e = this.hdr[H_ENTRY + m]!;
    if ((e & KIND_MASK) !== LARGE_GLOBAL) this.corrupt('a block on the global large list is not marked as a free global block', b);
    const have = e >>> 8;
    Atomics.sub(this.hdr, H_LARGE_MIBS, have);
    Atomics.sub(this.hdr, H_LARGE_BLOCKS, 1);
    Atomics.store(this.hdr, H_ENTRY + m, (have << 8) | LARGE_LOCAL);
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
    Atomics.store(this.hdr, H_ENTRY + m, (chunk << 8) | LARGE_LOCAL);
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
    Atomics.store(this.hdr, H_ENTRY + m, (rest << 8) | LARGE_LOCAL);
    this.insertLocal(rest, m);
    return (m + rest) * MiB;
  }

  /** Puts a piece taken by {@link takeBlock} back (when committing it failed). */
  private giveBack(a: number, fp: number): void {
    const m = a / MiB;
    Atomics.store(this.hdr, H_ENTRY + m, (fp << 8) | LARGE_LOCAL);
    this.insertLocal(fp, m);
  }

  private insertLocal(fp: number, m: number): void {
    const keys = this.largeKeys;
    const key = fp * KEY_SCALE + m;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    keys.splice(lo, 0, key);
  }

  /** Moves this agent's `count` largest free large blocks to the global list. */
  private spill(count: number): void {
    const moved = this.largeKeys.splice(this.largeKeys.length - count, count);
    let list = 0;
    let mibs = 0;
    for (let j = moved.length - 1; j >= 0; j--) {
      const fp = Math.floor(moved[j]! / KEY_SCALE);
      const m = moved[j]! % KEY_SCALE;
      Atomics.store(this.hdr, H_ENTRY + m, (fp << 8) | LARGE_GLOBAL);
      this.large.setNext(m * MiB, list);
      list = m * MiB;
      mibs += fp;
    }
    Atomics.add(this.hdr, H_LARGE_MIBS, mibs);
    Atomics.add(this.hdr, H_LARGE_BLOCKS, moved.length);
    this.large.putBack(list);
  }

  // ---- checks and errors --------------------------------------------------------------------------

  /** Validates `ptr` as a live block and returns its usable size. */
  private blockSize(ptr: number, op: string, freedCode: 'DOUBLE_FREE' | 'BAD_POINTER'): number {
    if (typeof ptr !== 'number' || !(ptr > 0 && ptr < this.maxBytes) || ptr % 1 !== 0) throw this.badPointer(ptr, op);
    const e = this.hdr[H_ENTRY + (ptr >>> 20)]!;
    const k = e & KIND_MASK;
    if (k !== 0 && k <= CLASS_COUNT) {
      const c = k - 1;
      const off = ptr % MiB;
      if (off % (32 << c) !== 0 || off >= e >>> 8) throw this.badSmall(ptr, c, e, op);
      this.space.covers(ptr + 8);
      if (this.space.i32[(ptr >>> 2) + 1] === freeMark(ptr, c)) {
        throw new HeapError(freedCode, `${op}(${formatAddress(ptr)}): the class ${c} object there was freed`, ptr);
      }
      return 32 << c;
    }
    if (k === LARGE_LIVE || k === LARGE_LOCAL || k === LARGE_GLOBAL) {
      if (ptr % PAGE !== 0) throw new HeapError('MISALIGNED', `${op}(${formatAddress(ptr)}): not the start of a block (large blocks start on 1 MiB boundaries)`, ptr);
      if (ptr % MiB !== 0) throw this.badPointer(ptr, op);
      if (k !== LARGE_LIVE) throw new HeapError(freedCode, `${op}(${formatAddress(ptr)}): the large block there was freed`, ptr);
      return this.hdr[this.pagesAt + ptr / MiB]! * PAGE;
    }
    throw this.badPointer(ptr, op);
  }

  private badSmall(ptr: number, c: number, e: number, op: string): HeapError {
    const off = ptr % MiB;
    const size = 32 << c;
    if (ptr % 1 !== 0) return this.badPointer(ptr, op);
    if (off % size !== 0) {
      return new HeapError('MISALIGNED', `${op}(${formatAddress(ptr)}): inside a class ${c} block, but not on a ${size}-byte object boundary`, ptr);
    }
    return new HeapError('BAD_POINTER', `${op}(${formatAddress(ptr)}): this class ${c} block has handed out objects only below offset ${e >>> 8}; nothing was allocated here`, ptr);
  }

  private badPointer(ptr: unknown, op: string): HeapError {
    if (typeof ptr !== 'number' || !Number.isInteger(ptr) || ptr < 0 || ptr >= this.maxBytes) {
      return new HeapError('BAD_POINTER', `${op}(${describeValue(ptr)}): not a pointer into this heap (an integer from 1 to ${this.maxBytes - 1})`);
    }
    // Find a large block that contains it, for a better message.
    for (let m = ptr >>> 20; m >= 0; m--) {
      const e = this.hdr[H_ENTRY + m]!;
      const k = e & KIND_MASK;
      if (k === 0) continue;
      if (k >= LARGE_LIVE && k <= LARGE_GLOBAL && ptr < (m + (e >>> 8)) * MiB && ptr !== m * MiB) {
        return new HeapError('BAD_POINTER', `${op}(${formatAddress(ptr)}): inside the large block at ${formatAddress(m * MiB)}, not its start`, ptr);
      }
      break;
    }
    return new HeapError('BAD_POINTER', `${op}(${formatAddress(ptr)}): no block of this pool starts there`, ptr);
  }

  private doubleFree(ptr: number, c: number): HeapError {
    return new HeapError('DOUBLE_FREE', `free(${formatAddress(ptr)}): the class ${c} object there is already free`, ptr);
  }

  private corrupt(message: string, address?: number): never {
    throw new HeapError('CORRUPTION', `classic pool: ${message}${address === undefined ? '' : ` (at ${formatAddress(address)})`}`, address);
  }

  /** The MiB table: kinds known, high-water marks sane, no entry inside a large block. */
  private checkTable(): void {
    const hdr = this.hdr;
    let coverHead = -1;
    let coverEnd = 0;
    for (let m = 0; m < this.mibs; m++) {
      const e = Atomics.load(hdr, H_ENTRY + m);
      const k = e & KIND_MASK;
      if (k === 0) continue;
      if (m < coverEnd) {
        // Another agent may have split that block since we read it: splitting only shrinks a head.
        coverEnd = coverHead + (Atomics.load(hdr, H_ENTRY + coverHead) >>> 8);
        if (m < coverEnd) this.corrupt(`MiB ${m} has an entry but lies inside the large block at ${formatAddress(coverHead * MiB)}`, m * MiB);
      }
      const v = e >>> 8;
      if ((e & 0xe0) !== 0) this.corrupt(`MiB ${m} has a malformed entry ${e}`, m * MiB);
      if (k <= CLASS_COUNT) {
        if (v > MiB || v % (32 << (k - 1)) !== 0) this.corrupt(`class block at MiB ${m} has high-water offset ${v}`, m * MiB);
      } else if (k >= LARGE_LIVE && k <= LARGE_GLOBAL) {
        if (v < 1 || m + v > this.mibs) this.corrupt(`large block at MiB ${m} claims ${v} MiBs`, m * MiB);
        if (k === LARGE_LIVE) {
          const pages = hdr[this.pagesAt + m]!;
          if (pages <= PAGES_PER_MIB || Math.ceil(pages / PAGES_PER_MIB) !== v) this.corrupt(`live large block at MiB ${m} has ${pages} pages in ${v} MiBs`, m * MiB);
        }
        coverHead = m;
        coverEnd = m + v;
      } else {
        this.corrupt(`MiB ${m} has an unknown kind ${k}`, m * MiB);
      }
    }
  }

  private walkList(c: number, head: number, length: number, seen: Set<number>, where: string): void {
    const space = this.space;
    let p = head;
    let n = 0;
    while (p !== 0) {
      if (n >= length) this.corrupt(`${where} is longer than its length ${length}: a cycle or a corrupted link`, p);
      if (!(p > 0 && p < this.maxBytes) || p % 1 !== 0) this.corrupt(`${where} links to ${formatAddress(p)}, outside the heap`);
      const e = this.hdr[H_ENTRY + (p >>> 20)]!;
      if ((e & KIND_MASK) !== c + 1) this.corrupt(`${where} holds ${formatAddress(p)}, which is not in a class ${c} block`, p);
      const off = p % MiB;
      if (off % (32 << c) !== 0) this.corrupt(`${where} holds ${formatAddress(p)}, not on an object boundary`, p);
      if (off >= e >>> 8) this.corrupt(`${where} holds ${formatAddress(p)}, above its block's high-water offset`, p);
      if (!space.covers(p + 8) || space.i32[(p >>> 2) + 1] !== freeMark(p, c)) this.corrupt(`${where} holds ${formatAddress(p)}, which lost its free mark (written after free?)`, p);
      if (seen.has(p)) this.corrupt(`${formatAddress(p)} is on two free lists (${where})`, p);
      seen.add(p);
      n++;
      p = space.u32[p >>> 2]!;
    }
    if (n !== length) this.corrupt(`${where} has ${n} objects, but its length says ${length}`, head);
  }

  /** This agent's allocation and free count, for idle detection. */
  private opCount(): number {
    let sum = 0;
    for (let w = R_ALLOCS; w <= R_LARGE_FREES; w++) sum = (sum + this.rec[w]!) | 0;
    return sum;
  }
}

function checkSpace(space: unknown): asserts space is AddressSpace {
  const s = space as AddressSpace | null;
  if (s === null || typeof s !== 'object' || typeof s.reserve !== 'function' || typeof s.casRoot !== 'function') {
    throw new TypeError(`expected a Paddock AddressSpace, got ${describeValue(space)}`);
  }
}

function checkSize(name: string, size: unknown, max: number): number {
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${describeValue(size)}`);
  }
  if (size > max) throw new RangeError(`${name} ${formatBytes(size)} is larger than the heap (maxBytes ${formatBytes(max)})`);
  return size;
}
