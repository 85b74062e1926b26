/**
 * The address space: one shared buffer, its header, and the ranges agents reserve and commit in it.
 *
 * Layout. The header sits at `base` (0 for a buffer Paddock created; the end of the caller's data for a
 * wasm memory that already holds some). Below and including the header, every granule is marked reserved,
 * so address 0 is never handed out. The header holds, as Int32 words:
 *
 *   magic, version, maxBytes in granules, backing kind, header bytes, base granule,
 *   (unused), reserved granules, agents opened, wasm grow target (pages), 8 root words,
 *   then the reservation bitmap (one bit per 64 KiB granule of [0, maxBytes)),
 *   then the commit bitmap (one bit per 4 KiB page of [0, maxBytes)).
 *
 * Reserve finds a run of clear granule bits at the requested alignment and claims it word by word with
 * `Atomics.compareExchange`; if another agent took a bit in the run first, it rolls back the words it had
 * claimed and searches on. Nothing ever waits. Commit grows the buffer to cover a range and sets its page
 * bits; decommit clears them and, with the native addon, returns the pages to the OS (`madvise`);
 * discard returns pages but leaves the range committed (its contents become undefined).
 *
 * Every agent keeps its own fixed-length views (length-tracking views over a growable buffer are several
 * times slower); `refresh()` rebuilds them when the buffer has grown, and `covers(end)` does so lazily.
 */
import { FixedBacking, GrowableBacking, WASM_PAGE, WasmBacking, type Backing, type BackingKind } from './backing.js';
import { allBitsSet, claimBitRange, clearBitRangeAtomic, countSetBits, firstSetBit, setBitRange, setBitRangeAtomic } from './bitmap.js';
import { HeapError, describeValue, formatAddress, formatBytes } from './errors.js';
import { loadNativePageReturn, nativePageReturnError, type NativePageReturn } from './host.js';

/** Reservation granularity: every reserved range starts and ends on a 64 KiB boundary. */
export const GRANULE = WASM_PAGE;
/** Commit granularity, the OS page. */
export const PAGE_SIZE = 4096;
/** The largest space: Node 20 caps a growable SharedArrayBuffer at 4 GiB, which fits uint32 pointers. */
export const MAX_SPACE_BYTES = 2 ** 32;
/** The smallest space worth making. */
export const MIN_SPACE_BYTES = 1 << 20;
/** Number of root words upper layers may use to find their own structures. */
export const ROOT_COUNT = 8;

const MAGIC = 0x4b434450; // 'PDCK'
const VERSION = 1;
const H_MAGIC = 0;
const H_VERSION = 1;
const H_GRANULES = 2;
const H_BACKING = 3;
const H_HEADER_BYTES = 4;
const H_BASE_GRANULE = 5;
/** The buffer's length in pages as the agents that grew or measured it have published it (never lowered). */
const H_BUFFER_PAGES = 6;
const H_RESERVED_GRANULES = 7;
const H_AGENTS = 8;
const H_GROW_PAGES = 9;
const H_ROOTS = 16;
const H_BITMAPS = 64; // first word of the reservation bitmap

const BACKING_CODES: Record<BackingKind, number> = { growable: 1, wasm: 2, fixed: 3 };

/** How decommit and discard reach the OS: `'native'` returns pages, `'none'` is bookkeeping only. */
export type PageReturnMode = 'native' | 'none';

/** Options for {@link createAddressSpace}. */
export interface AddressSpaceOptions {
  /** Upper bound of the space in bytes, up to 4 GiB; rounded up to 64 KiB. Required unless `memory` is a SharedArrayBuffer. */
  maxBytes?: number;
  /** `'growable'` (default), `'wasm'` or `'fixed'`. Ignored when `memory` is given. */
  backing?: BackingKind;
  /** An existing shared `WebAssembly.Memory` or `SharedArrayBuffer` to build the space in. */
  memory?: WebAssembly.Memory | SharedArrayBuffer;
  /** `'auto'` (default): native page return when the addon loads; `'native'`: require it; `'none'`: never. */
  pageReturn?: 'auto' | PageReturnMode;
}

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

/** Options for {@link openAddressSpace}. */
export interface OpenOptions {
  pageReturn?: 'auto' | PageReturnMode;
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

  private readonly backing: Backing;
  private readonly hdr: Int32Array;
  private readonly granules: number;
  private readonly reserveWords: number;
  private readonly commitWords: number;
  private readonly native: NativePageReturn | null;

  /** @internal use {@link createAddressSpace} or {@link openAddressSpace}. */
  constructor(backing: Backing, base: number, maxBytes: number, hdr: Int32Array, handle: AddressSpaceHandle, pageReturn: 'auto' | PageReturnMode | undefined) {
    this.backing = backing;
    this.base = base;
    this.maxBytes = maxBytes;
    this.hdr = hdr;
    this.handle = handle;
    this.granules = maxBytes / GRANULE;
    this.reserveWords = H_BITMAPS;
    this.commitWords = H_BITMAPS + this.granules / 32;
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
    return countSetBits(this.hdr, this.commitWords, 0, this.maxBytes / PAGE_SIZE) * PAGE_SIZE;
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
      const taken = firstSetBit(this.hdr, this.reserveWords, s, n);
      if (taken < 0) {
        const conflict = claimBitRange(this.hdr, this.reserveWords, s, n);
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
    clearBitRangeAtomic(this.hdr, this.reserveWords, g, n);
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
    setBitRangeAtomic(this.hdr, this.commitWords, p0, Math.ceil(end / PAGE_SIZE) - p0);
  }

  /**
   * The arena's contract: the whole pages inside [addr, addr + size) go back to the OS (natively) and are no
   * longer committed; the range must be committed again before use. Returns the bytes given back to the OS.
   * @throws RangeError for a bad range; HeapError `NOT_RESERVED` if the range is not reserved.
   */
  decommit(addr: number, size: number): number {
    this.checkRange(addr, size);
    this.requireReserved(addr, size);
    const p0 = Math.ceil(addr / PAGE_SIZE);
    const p1 = Math.floor((addr + size) / PAGE_SIZE);
    if (p1 <= p0) return 0;
    clearBitRangeAtomic(this.hdr, this.commitWords, p0, p1 - p0);
    return this.returnPages(p0 * PAGE_SIZE, p1 * PAGE_SIZE);
  }

  /**
   * The classic pool's contract: the whole pages inside [addr, addr + size) go back to the OS (natively) but
   * stay committed and usable; their contents are undefined. Returns the bytes given back to the OS.
   * @throws RangeError for a bad range; HeapError `NOT_RESERVED` if the range is not reserved.
   */
  discard(addr: number, size: number): number {
    this.checkRange(addr, size);
    this.requireReserved(addr, size);
    const p0 = Math.ceil(addr / PAGE_SIZE);
    const p1 = Math.floor((addr + size) / PAGE_SIZE);
    if (p1 <= p0) return 0;
    return this.returnPages(p0 * PAGE_SIZE, p1 * PAGE_SIZE);
  }

  /** Whether every page touching [addr, addr + size) is committed. */
  isCommitted(addr: number, size: number): boolean {
    this.checkRange(addr, size);
    const p0 = Math.floor(addr / PAGE_SIZE);
    return allBitsSet(this.hdr, this.commitWords, p0, Math.ceil((addr + size) / PAGE_SIZE) - p0);
  }

  /** Whether every granule touching [addr, addr + size) is reserved. */
  isReserved(addr: number, size: number): boolean {
    this.checkRange(addr, size);
    const g0 = Math.floor(addr / GRANULE);
    return allBitsSet(this.hdr, this.reserveWords, g0, Math.ceil((addr + size) / GRANULE) - g0);
  }

  // ---- internals ---------------------------------------------------------------------------------

  private firstUsableGranule(): number {
    return (this.base + this.headerBytes) / GRANULE;
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

/** Creates a new address space (the first agent). */
export function createAddressSpace(options: AddressSpaceOptions = {}): AddressSpace {
  if (options === null || typeof options !== 'object') throw new TypeError('createAddressSpace options must be an object');
  const { memory } = options;
  let backing: Backing;
  let maxBytes: number;
  let base = 0;
  let handleFields: { buffer?: SharedArrayBuffer; memory?: WebAssembly.Memory };

  if (memory !== undefined) {
    if (memory instanceof WebAssembly.Memory) {
      if (!isShared(memory.buffer)) {
        throw new TypeError('memory must be a shared WebAssembly.Memory (created with shared: true)');
      }
      if (options.maxBytes === undefined) {
        throw new RangeError('maxBytes is required with a wasm memory: its maximum cannot be read from JavaScript');
      }
      maxBytes = checkMaxBytes(options.maxBytes);
      base = Math.ceil(memory.buffer.byteLength / GRANULE) * GRANULE;
      backing = new WasmBacking(memory, maxBytes);
      handleFields = { memory };
    } else if (memory instanceof SharedArrayBuffer) {
      if (memory.growable) {
        maxBytes = checkMaxBytes(options.maxBytes ?? memory.maxByteLength);
        if (maxBytes > memory.maxByteLength) throw new RangeError(`maxBytes ${formatBytes(maxBytes)} exceeds the buffer's maxByteLength ${memory.maxByteLength}`);
        backing = new GrowableBacking(memory, maxBytes);
      } else {
        maxBytes = checkMaxBytes(options.maxBytes ?? Math.floor(memory.byteLength / GRANULE) * GRANULE);
        if (maxBytes > memory.byteLength) throw new RangeError(`maxBytes ${formatBytes(maxBytes)} exceeds the buffer's length ${memory.byteLength}`);
        backing = new FixedBacking(memory);
      }
      if (new Int32Array(memory, 0, Math.min(memory.byteLength, 4) >>> 2)[0] === MAGIC) {
        throw new HeapError('BAD_HANDLE', 'this buffer already holds a Paddock address space: open it with openAddressSpace(handle)');
      }
      handleFields = { buffer: memory };
    } else {
      throw new TypeError(`memory must be a shared WebAssembly.Memory or a SharedArrayBuffer, got ${describeValue(memory)}`);
    }
  } else {
    maxBytes = checkMaxBytes(options.maxBytes);
    const kind = options.backing ?? 'growable';
    const header = headerBytesFor(maxBytes);
    if (kind === 'growable') {
      const sab = new SharedArrayBuffer(header, { maxByteLength: maxBytes });
      backing = new GrowableBacking(sab, maxBytes);
      handleFields = { buffer: sab };
    } else if (kind === 'fixed') {
      const sab = new SharedArrayBuffer(maxBytes);
      backing = new FixedBacking(sab);
      handleFields = { buffer: sab };
    } else if (kind === 'wasm') {
      const mem = new WebAssembly.Memory({ initial: header / WASM_PAGE, maximum: maxBytes / WASM_PAGE, shared: true });
      backing = new WasmBacking(mem, maxBytes);
      handleFields = { memory: mem };
    } else {
      throw new RangeError(`backing must be 'growable', 'wasm' or 'fixed', got ${describeValue(kind)}`);
    }
  }

  const headerBytes = headerBytesFor(maxBytes);
  if (base + headerBytes > maxBytes) {
    throw new RangeError(`maxBytes ${formatBytes(maxBytes)} leaves no room after the header at ${formatAddress(base)}`);
  }
  // The header must be usable before any bookkeeping exists: grow straight to it.
  const growWord = new Int32Array(1);
  growWord[0] = Math.ceil(backing.byteLength() / WASM_PAGE);
  backing.ensure(base + headerBytes, growWord, 0);
  const hdr = new Int32Array(backing.buffer(), base, headerBytes >>> 2);
  hdr.fill(0);
  hdr[H_VERSION] = VERSION;
  hdr[H_GRANULES] = maxBytes / GRANULE;
  hdr[H_BACKING] = BACKING_CODES[backing.kind];
  hdr[H_HEADER_BYTES] = headerBytes;
  hdr[H_BASE_GRANULE] = base / GRANULE;
  hdr[H_GROW_PAGES] = Math.ceil(backing.byteLength() / WASM_PAGE);
  // Everything below the end of the header is taken: foreign data, the header, and address 0.
  const taken = (base + headerBytes) / GRANULE;
  setBitRange(hdr, H_BITMAPS, 0, taken);
  hdr[H_RESERVED_GRANULES] = taken;
  const commitAt = H_BITMAPS + maxBytes / GRANULE / 32;
  const firstPage = base / PAGE_SIZE;
  setBitRange(hdr, commitAt, firstPage, (base + headerBytes) / PAGE_SIZE - firstPage);
  hdr[H_BUFFER_PAGES] = 0;
  Atomics.store(hdr, H_MAGIC, MAGIC);

  const handle: AddressSpaceHandle = {
    kind: 'paddock-address-space',
    version: VERSION,
    backing: backing.kind,
    ...handleFields,
    base,
    maxBytes,
  };
  return new AddressSpace(backing, base, maxBytes, hdr, handle, options.pageReturn);
}

/**
 * Opens, in this agent, a space another agent created, from its handle.
 * @throws HeapError `BAD_HANDLE` when the handle is not a Paddock address space handle or its header does not match.
 */
export function openAddressSpace(handle: AddressSpaceHandle, options: OpenOptions = {}): AddressSpace {
  const bad = (why: string): never => {
    throw new HeapError('BAD_HANDLE', `not a Paddock address space handle: ${why}`);
  };
  if (handle === null || typeof handle !== 'object') bad(`got ${describeValue(handle)}`);
  if (handle.kind !== 'paddock-address-space') bad(`kind is ${describeValue(handle.kind)}`);
  if (handle.version !== VERSION) bad(`version ${describeValue(handle.version)}, this build reads ${VERSION}`);
  const { base, maxBytes } = handle;
  if (!Number.isInteger(maxBytes) || maxBytes < MIN_SPACE_BYTES || maxBytes > MAX_SPACE_BYTES || maxBytes % GRANULE !== 0) {
    bad(`maxBytes ${describeValue(maxBytes)}`);
  }
  if (!Number.isInteger(base) || base < 0 || base % GRANULE !== 0 || base >= maxBytes) bad(`base ${describeValue(base)}`);
  let backing: Backing;
  if (handle.backing === 'wasm') {
    if (!(handle.memory instanceof WebAssembly.Memory) || !isShared(handle.memory.buffer)) bad('memory is not a shared WebAssembly.Memory');
    backing = new WasmBacking(handle.memory!, maxBytes);
  } else if (handle.backing === 'growable') {
    if (!(handle.buffer instanceof SharedArrayBuffer) || !handle.buffer.growable) bad('buffer is not a growable SharedArrayBuffer');
    backing = new GrowableBacking(handle.buffer!, maxBytes);
  } else if (handle.backing === 'fixed') {
    if (!(handle.buffer instanceof SharedArrayBuffer) || handle.buffer.growable) bad('buffer is not a fixed SharedArrayBuffer');
    backing = new FixedBacking(handle.buffer!);
  } else {
    return bad(`backing ${describeValue(handle.backing)}`);
  }
  if (backing.byteLength() < base + 256) bad('the buffer is shorter than its header');
  const probe = new Int32Array(backing.buffer(), base, 64);
  if (Atomics.load(probe, H_MAGIC) !== MAGIC) bad('no Paddock header at its base');
  if (probe[H_GRANULES] !== maxBytes / GRANULE || probe[H_BACKING] !== BACKING_CODES[backing.kind] || probe[H_BASE_GRANULE] !== base / GRANULE) {
    bad('the header does not match the handle');
  }
  const headerBytes = probe[H_HEADER_BYTES]!;
  if (headerBytes !== headerBytesFor(maxBytes) || backing.byteLength() < base + headerBytes) bad('the header size does not match');
  const hdr = new Int32Array(backing.buffer(), base, headerBytes >>> 2);
  return new AddressSpace(backing, base, maxBytes, hdr, handle, options.pageReturn);
}

/** Header bytes for a space of `maxBytes`: fixed words plus both bitmaps, rounded up to a granule. */
export function headerBytesFor(maxBytes: number): number {
  const words = H_BITMAPS + maxBytes / GRANULE / 32 + maxBytes / PAGE_SIZE / 32;
  return Math.ceil((words * 4) / GRANULE) * GRANULE;
}

function choosePageReturn(mode: 'auto' | PageReturnMode | undefined): NativePageReturn | null {
  if (mode === undefined || mode === 'auto') return loadNativePageReturn();
  if (mode === 'none') return null;
  if (mode === 'native') {
    const n = loadNativePageReturn();
    if (!n) throw new HeapError('NATIVE_UNAVAILABLE', `native page return is not available: ${nativePageReturnError()}`);
    return n;
  }
  throw new RangeError(`pageReturn must be 'auto', 'native' or 'none', got ${describeValue(mode)}`);
}

function checkMaxBytes(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < MIN_SPACE_BYTES || value > MAX_SPACE_BYTES) {
    throw new RangeError(
      `maxBytes must be an integer from ${formatBytes(MIN_SPACE_BYTES)} to ${formatBytes(MAX_SPACE_BYTES)}, got ${describeValue(value)}`,
    );
  }
  return Math.ceil(value / GRANULE) * GRANULE;
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

function isShared(buffer: unknown): boolean {
  return Object.prototype.toString.call(buffer) === '[object SharedArrayBuffer]';
}

