/**
 * One agent's handle on a shared address space: its views of the buffer, and the operations on ranges.
 *
 * Reserve finds a run of clear granule bits at the requested alignment and claims it word by word with
 * `Atomics.compareExchange`; if another agent took a bit in the run first, the claim rolls back the words it
 * had taken and the search goes on past that bit. Nothing ever waits. Commit grows the buffer to cover a
 * range and sets its page bits; decommit clears them and, with the native addon, returns the pages to the
 * OS (`madvise`); discard returns pages but leaves the range committed (its contents become undefined).
 *
 * Every agent keeps its own fixed-length views (length-tracking views over a growable buffer are several
 * times slower); `refresh()` rebuilds them when the buffer has grown, and `covers(end)` does so lazily.
 */
import type { Backing, BackingKind } from './backing.js';
import { allBitsSet, claimBitRange, clearBitRangeAtomic, countSetBits, firstSetBit, setBitRangeAtomic } from './bitmap.js';
import { HeapError, describeValue, formatAddress, formatBytes } from './errors.js';
import { choosePageReturn, type NativePageReturn, type PageReturnMode } from './host.js';
import {
  GRANULE,
  H_AGENTS,
  H_BUFFER_PAGES,
  H_GROW_PAGES,
  H_HEADER_BYTES,
  H_RESERVED_GRANULES,
  H_ROOTS,
  PAGE_SIZE,
  RESERVE_BITMAP,
  ROOT_COUNT,
  commitBitmapAt,
} from './space-header.js';

/** log2 of {@link GRANULE} and of {@link PAGE_SIZE}. */
const GRANULE_SHIFT = 16;
const PAGE_SHIFT = 12;

/** What another agent needs to open the same space. Structured-cloneable: send it with `postMessage`. */
export interface AddressSpaceHandle {
  readonly kind: 'paddock-address-space';
  readonly version: number;
  readonly backing: BackingKind;
  readonly buffer?: SharedArrayBuffer;
  readonly memory?: WebAssembly.Memory;
  readonly base: number;
  readonly maxBytes: number;
}

/** One agent's view of a shared address space. */
export class AddressSpace {
  /** This agent's number in the space (1 for the creator, then 2, 3, ... in order of opening). */
  readonly agentId: number;
  /** Byte offset of the header. */
  readonly base: number;
  /** The space covers [0, maxBytes). */
  readonly maxBytes: number;
  /** Bytes taken by the header (from `base`). */
  readonly headerBytes: number;
  /** How this agent returns pages. */
  readonly pageReturn: PageReturnMode;
  /** The structured-cloneable handle for other agents. */
  readonly handle: AddressSpaceHandle;

  /** Bytes view of the whole buffer as this agent last saw it; see {@link refresh}. */
  u8!: Uint8Array;
  /** Int32 view of the whole buffer. */
  i32!: Int32Array;
  /** Uint32 view of the whole buffer. */
  u32!: Uint32Array;
  /** Float64 view of the whole buffer. */
  f64!: Float64Array;
  /** Byte length the views cover. */
  viewBytes = 0;
  /**
   * @internal Int32 indexes, into the whole-buffer views ({@link i32}), of the reservation bitmap's and the commit
   * bitmap's word 0 (bit `k` of the bitmap is bit `k & 31` of word `index + (k >>> 5)`), for a layer that tests a
   * page inline on a hot path (see {@link holdsPage}); the header is always in view.
   */
  readonly reserveBitsIndex: number;
  readonly commitBitsIndex: number;

  private readonly backing: Backing;
  private readonly hdr: Int32Array;
  private readonly granules: number;
  /** Header word of the reservation bitmap (one bit per granule). */
  private readonly reserveBitmap: number;
  /** Header word of the commit bitmap (one bit per page). */
  private readonly commitBitmap: number;
  private readonly native: NativePageReturn | null;

  /** @internal use {@link createAddressSpace} or {@link openAddressSpace}. */
  constructor(backing: Backing, base: number, maxBytes: number, hdr: Int32Array, handle: AddressSpaceHandle, pageReturn: 'auto' | PageReturnMode | undefined) {
    this.backing = backing;
    this.base = base;
    this.maxBytes = maxBytes;
    this.hdr = hdr;
    this.handle = handle;
    this.granules = maxBytes / GRANULE;
    this.reserveBitmap = RESERVE_BITMAP;
    this.commitBitmap = commitBitmapAt(maxBytes);
    this.reserveBitsIndex = base / 4 + this.reserveBitmap;
    this.commitBitsIndex = base / 4 + this.commitBitmap;
    this.headerBytes = hdr[H_HEADER_BYTES]!;
    this.native = choosePageReturn(pageReturn);
    this.pageReturn = this.native ? 'native' : 'none';
    this.agentId = Atomics.add(hdr, H_AGENTS, 1) + 1;
    this.remeasure();
  }

  /** Which kind of buffer backs the space. */
  get backingKind(): BackingKind {
    return this.backing.kind;
  }

  /** The shared buffer as it is now. */
  get buffer(): SharedArrayBuffer {
    return this.backing.buffer();
  }

  /**
   * Bytes committed in the whole space (all agents): the commit bitmap's set bits, counted when asked (a
   * count kept beside the bitmap could drift if an agent died between the two updates).
   */
  get committedBytes(): number {
    return countSetBits(this.hdr, this.commitBitmap, 0, this.maxBytes / PAGE_SIZE) * PAGE_SIZE;
  }

  /** How many agents have opened the space so far (the creator included). */
  get agentsOpened(): number {
    return Atomics.load(this.hdr, H_AGENTS);
  }

  /** Bytes reserved in the whole space, the header included. */
  get reservedBytes(): number {
    return Atomics.load(this.hdr, H_RESERVED_GRANULES) * GRANULE;
  }

  /**
   * Rebuilds this agent's views if the buffer has grown; returns whether it did. The check reads one header
   * word, not the buffer's length (a runtime call for a growable buffer or a wasm memory, about 15 ns on every
   * access to a heap's `u8` or `i32`): every agent that grows the buffer, or finds it longer than the word
   * says, raises the word first, so an agent that receives a pointer into new memory sees the word raised.
   */
  refresh(): boolean {
    // A plain read: the word is only ever raised, and an agent that hands out a pointer into new memory raised it
    // before that hand-off (a postMessage or an Atomics store), which this read then sees.
    if (this.hdr[H_BUFFER_PAGES]! * PAGE_SIZE <= this.viewBytes) return false;
    return this.remeasure();
  }

  /** Rebuilds this agent's views from the buffer's real length (and publishes it); returns whether they grew. */
  private remeasure(): boolean {
    const len = this.backing.byteLength();
    const pages = Math.floor(len / PAGE_SIZE);
    for (let seen = Atomics.load(this.hdr, H_BUFFER_PAGES); seen < pages; ) {
      const was = Atomics.compareExchange(this.hdr, H_BUFFER_PAGES, seen, pages);
      if (was === seen) break;
      seen = was;
    }
    if (len === this.viewBytes) return false;
    const buf = this.backing.buffer();
    this.u8 = new Uint8Array(buf, 0, len);
    // Not `len >>> 2`: a 4 GiB buffer's length is 2^32, which `>>>` wraps to 0.
    this.i32 = new Int32Array(buf, 0, Math.floor(len / 4));
    this.u32 = new Uint32Array(buf, 0, Math.floor(len / 4));
    this.f64 = new Float64Array(buf, 0, Math.floor(len / 8));
    this.viewBytes = len;
    return true;
  }

  /** Whether this agent's views reach byte `end` (exclusive), refreshing them if the buffer has grown. */
  covers(end: number): boolean {
    return end <= this.viewBytes || (this.remeasure(), end <= this.viewBytes);
  }

  /** Reads root word `index` (0-7), where upper layers keep the address of their own header. */
  root(index: number): number {
    return Atomics.load(this.hdr, H_ROOTS + checkRoot(index));
  }

  /** Sets root word `index` to `value` if it still holds `expected`; returns the value it held. */
  casRoot(index: number, expected: number, value: number): number {
    return Atomics.compareExchange(this.hdr, H_ROOTS + checkRoot(index), expected | 0, value | 0);
  }

  /**
   * Reserves `size` bytes (rounded up to 64 KiB) at an address aligned to `align` (a power of two; at least
   * 64 KiB is always given). The range is not committed. Lock-free: one CAS per bitmap word, no waiting.
   * @throws RangeError for a bad size or alignment; HeapError `OUT_OF_MEMORY` naming `maxBytes` when no room.
   */
  reserve(size: number, align: number = GRANULE): number {
    checkSize('size', size, this.maxBytes);
    if (typeof align !== 'number' || !Number.isInteger(align) || align <= 0 || !Number.isInteger(Math.log2(align))) {
      throw new RangeError(`align must be a power of two, got ${describeValue(align)}`);
    }
    if (align > this.maxBytes) throw new RangeError(`align ${formatBytes(align)} is larger than maxBytes ${formatBytes(this.maxBytes)}`);
    const n = Math.ceil(size / GRANULE);
    const step = Math.max(1, align / GRANULE);
    let s = 0;
    while (s + n <= this.granules) {
      const taken = firstSetBit(this.hdr, this.reserveBitmap, s, n);
      if (taken < 0) {
        const conflict = claimBitRange(this.hdr, this.reserveBitmap, s, n);
        if (conflict < 0) {
          Atomics.add(this.hdr, H_RESERVED_GRANULES, n);
          return s * GRANULE;
        }
        s = Math.ceil((conflict + 1) / step) * step;
      } else {
        s = Math.ceil((taken + 1) / step) * step;
      }
    }
    throw new HeapError(
      'OUT_OF_MEMORY',
      `out of address space: cannot reserve ${formatBytes(n * GRANULE)} bytes aligned to ${formatBytes(Math.max(align, GRANULE))} ` +
        `within maxBytes ${formatBytes(this.maxBytes)} (${formatBytes(this.reservedBytes)} bytes reserved)`,
    );
  }

  /**
   * Grows the reserved range [addr, addr + size) to [addr, addr + newSize) in place, when the granules right
   * after it are free: claims them with the same CAS protocol as {@link reserve} (all or nothing: on a granule
   * another agent holds, the words taken are given back and nothing is left claimed). Returns whether it did.
   * Never past maxBytes (returns false). The caller owns [addr, addr + size); that range is not checked here.
   * The new range is not committed.
   * @throws RangeError for a bad address or size (addr not 64 KiB aligned, newSize not above size).
   */
  extend(addr: number, size: number, newSize: number): boolean {
    this.checkRange(addr, size);
    if (addr % GRANULE !== 0) throw new RangeError(`extend address ${formatAddress(addr)} is not 64 KiB aligned`);
    if (typeof newSize !== 'number' || !Number.isInteger(newSize) || newSize <= size) {
      throw new RangeError(`extend newSize must be an integer above size ${size}, got ${describeValue(newSize)}`);
    }
    if (addr + newSize > this.maxBytes) return false;
    const g = addr / GRANULE + Math.ceil(size / GRANULE);
    const n = addr / GRANULE + Math.ceil(newSize / GRANULE) - g;
    if (n <= 0) return true;
    if (firstSetBit(this.hdr, this.reserveBitmap, g, n) >= 0) return false;
    if (claimBitRange(this.hdr, this.reserveBitmap, g, n) >= 0) return false;
    Atomics.add(this.hdr, H_RESERVED_GRANULES, n);
    return true;
  }

  /**
   * Releases a reserved range so it can be reserved again; its committed pages are decommitted first.
   * @throws RangeError for a bad range; HeapError `NOT_RESERVED` if any part of it is not reserved (nothing changes).
   */
  release(addr: number, size: number): void {
    this.checkRange(addr, size);
    if (addr % GRANULE !== 0) throw new RangeError(`release address ${formatAddress(addr)} is not 64 KiB aligned`);
    const g = addr / GRANULE;
    const n = Math.ceil(size / GRANULE);
    if (g < this.firstUsableGranule()) {
      throw new HeapError('NOT_RESERVED', `cannot release ${formatAddress(addr)}: it is the address space's header`, addr);
    }
    this.requireReserved(addr, size);
    this.decommit(addr, n * GRANULE);
    clearBitRangeAtomic(this.hdr, this.reserveBitmap, g, n);
    Atomics.sub(this.hdr, H_RESERVED_GRANULES, n);
  }

  /**
   * Makes [addr, addr + size) usable: grows the buffer to cover it and counts its pages as committed.
   * @throws RangeError for a bad range; HeapError `NOT_RESERVED` if the range is not reserved.
   */
  commit(addr: number, size: number): void {
    this.checkRange(addr, size);
    this.requireReserved(addr, size);
    const end = addr + size;
    this.backing.ensure(Math.ceil(end / PAGE_SIZE) * PAGE_SIZE, this.hdr, H_GROW_PAGES);
    this.remeasure();
    const p0 = Math.floor(addr / PAGE_SIZE);
    setBitRangeAtomic(this.hdr, this.commitBitmap, p0, Math.ceil(end / PAGE_SIZE) - p0);
  }

  /**
   * The arena's contract: the whole pages inside [addr, addr + size) go back to the OS (natively) and are no
   * longer committed; the range must be committed again before use. Returns the bytes given back to the OS.
   * @throws RangeError for a bad range; HeapError `NOT_RESERVED` if the range is not reserved.
   */
  decommit(addr: number, size: number): number {
    return this.returnWholePages(addr, size, true);
  }

  /**
   * The classic pool's contract: the whole pages inside [addr, addr + size) go back to the OS (natively) but
   * stay committed and usable; their contents are undefined. Returns the bytes given back to the OS.
   * @throws RangeError for a bad range; HeapError `NOT_RESERVED` if the range is not reserved.
   */
  discard(addr: number, size: number): number {
    return this.returnWholePages(addr, size, false);
  }

  /** Whether every page touching [addr, addr + size) is committed. */
  isCommitted(addr: number, size: number): boolean {
    this.checkRange(addr, size);
    const p0 = Math.floor(addr / PAGE_SIZE);
    return allBitsSet(this.hdr, this.commitBitmap, p0, Math.ceil((addr + size) / PAGE_SIZE) - p0);
  }

  /**
   * Whether the page at `addr` is reserved and committed, read plainly from the two bitmaps: no range check, no
   * refresh, for a free's test of a header it is about to read. `addr` must be an integer in [0, maxBytes).
   */
  holdsPage(addr: number): boolean {
    const g = addr >>> GRANULE_SHIFT;
    const p = addr >>> PAGE_SHIFT;
    const hdr = this.hdr;
    return (hdr[this.reserveBitmap + (g >>> 5)]! & (1 << (g & 31))) !== 0 && (hdr[this.commitBitmap + (p >>> 5)]! & (1 << (p & 31))) !== 0;
  }

  /** Whether every granule touching [addr, addr + size) is reserved. */
  isReserved(addr: number, size: number): boolean {
    this.checkRange(addr, size);
    const g0 = Math.floor(addr / GRANULE);
    return allBitsSet(this.hdr, this.reserveBitmap, g0, Math.ceil((addr + size) / GRANULE) - g0);
  }

  // ---- internals ---------------------------------------------------------------------------------

  private firstUsableGranule(): number {
    return (this.base + this.headerBytes) / GRANULE;
  }

  /**
   * Decommit (`uncommit`) and discard: checks the range, then the whole pages inside it leave the commit
   * bitmap (decommit only) and go back to the OS. Returns the bytes given back to the OS.
   */
  private returnWholePages(addr: number, size: number, uncommit: boolean): number {
    this.checkRange(addr, size);
    this.requireReserved(addr, size);
    const p0 = Math.ceil(addr / PAGE_SIZE);
    const p1 = Math.floor((addr + size) / PAGE_SIZE);
    if (p1 <= p0) return 0;
    if (uncommit) clearBitRangeAtomic(this.hdr, this.commitBitmap, p0, p1 - p0);
    return this.returnPages(p0 * PAGE_SIZE, p1 * PAGE_SIZE);
  }

  private returnPages(start: number, end: number): number {
    if (!this.native) return 0;
    this.covers(end);
    const stop = Math.min(end, this.viewBytes);
    if (stop <= start) return 0;
    return this.native.discard(this.u8, start, stop - start);
  }

  private checkRange(addr: number, size: number): void {
    if (typeof addr !== 'number' || !Number.isInteger(addr) || addr < 0 || addr >= this.maxBytes) {
      throw new RangeError(`address ${describeValue(addr)} is outside the space [0, ${formatBytes(this.maxBytes)})`);
    }
    checkSize('size', size, this.maxBytes);
    if (addr + size > this.maxBytes) {
      throw new RangeError(`range ${formatAddress(addr)} + ${size} ends past maxBytes ${formatBytes(this.maxBytes)}`);
    }
  }

  private requireReserved(addr: number, size: number): void {
    if (!this.isReserved(addr, size)) {
      throw new HeapError('NOT_RESERVED', `range ${formatAddress(addr)} + ${size} is not (wholly) reserved`, addr);
    }
  }
}

function checkSize(name: string, size: unknown, max: number): void {
  if (typeof size !== 'number' || !Number.isInteger(size) || size <= 0) {
    throw new RangeError(`${name} must be a positive integer, got ${describeValue(size)}`);
  }
  if (size > max) throw new RangeError(`${name} ${formatBytes(size)} is larger than the space (maxBytes ${formatBytes(max)})`);
}

function checkRoot(index: number): number {
  if (!Number.isInteger(index) || index < 0 || index >= ROOT_COUNT) {
    throw new RangeError(`root index must be an integer from 0 to ${ROOT_COUNT - 1}, got ${describeValue(index)}`);
  }
  return index;
}
