/**
 * Regions: aligned runs of 32 arena slots, carved with one CAS on a 32-bit bitmap, on one global list.
 *
 * Heap header (one reserved granule, first page committed; its address is root word 0), Int32 words:
 *
 *   0 magic 'PDRH'   1 version   2 regionBytes   3 arenaBytes   4 unitBytes   5 unitsPerArena
 *   6 maxBytes of the space in granules   7 region list head (newest region, 0 = none)
 *   8 regions pushed   9 regions being opened now   10..31 reserved (0)   32..63 user words ({@link Regions.userWord})
 *   64..191 the region map: one word per region-sized range of the space, 1 once a region there is (about to be)
 *   on the list, else 0 ({@link Regions.regionMapIndex}; regions are never released, so an entry never clears)
 *
 * Region header (at the region's base, inside slot 0; first page committed), Int32 words:
 *
 *   0 magic 'PDRG'   1 slot bitmap (bit i = slot i carved; bit 0, the header, always set)
 *   2 next region (older; 0 ends the list)   3 regionBytes
 *
 * Carve: lowest clear bit of the bitmap, set with one `Atomics.compareExchange`, retry on failure.
 * Claim order: this agent's current region, every region on the list, a new region (which its creator
 * publishes with its first arena already claimed), one more walk, then `OUT_OF_MEMORY`. A new region is
 * pushed with one CAS on the list head; regions are never released, so a walker never meets one that is
 * gone and only pushes ever touch the head (no ABA). Release: decommit the arena, then clear its bit, so a
 * later carver gets the same addresses with no resident pages. See docs/design/region.md.
 */
import { GRANULE, HeapError, PAGE_SIZE, agentCanBlock, checkAddressSpace, claimFirstClearBit, clearBitRangeAtomic, describeValue, formatAddress, formatBytes, now, type AddressSpace } from '@paddock/platform';
import { HEAP_HEADER_BYTES, HEAP_MAGIC, H_ARENA_BYTES, H_LIST_HEAD, H_MAGIC, H_OPENING, H_REGION_BYTES, H_REGION_COUNT, H_REGION_MAP, H_SPACE_GRANULES, H_UNITS_PER_ARENA, H_UNIT_BYTES, H_USER, H_VERSION, REGIONS_ROOT, REGION_HEADER_BYTES, REGION_MAGIC, R_BITMAP, R_MAGIC, R_NEXT, R_REGION_BYTES, USER_WORDS, VERSION } from './header-layout.js';
import { SLOTS_PER_REGION, USABLE_SLOTS_PER_REGION, checkGeometry, chooseGeometry, type Geometry } from './geometry.js';

/** The end of the largest space, 4 GiB: no arena may end there (see `heldOutBit`). */
const TOP = 2 ** 32;
/**
 * How long the last carve keeps looking while other agents are still opening regions, before it says out of
 * memory (ms). Opening takes microseconds, but an opener descheduled between its reserve and its push (a loaded
 * machine) holds the last free range for a time slice or more.
 */
const OPENING_PATIENCE_MS = 200;
let pauseWord: Int32Array | null = null;
/** A word nobody notifies, for the carve's short pauses. */
function pause(): Int32Array {
  pauseWord ??= new Int32Array(new SharedArrayBuffer(4));
  return pauseWord;
}
/** Options for {@link Regions.create}. */
export interface RegionsOptions {
  /** Overrides {@link chooseGeometry}: one of the two standard geometries, or a consistent test geometry. */
  geometry?: Geometry;
}

/** One agent's handle on a heap's regions. */
export class Regions {
  /** The address space the heap lives in. */
  readonly space: AddressSpace;
  /** This heap's geometry, as recorded in its header. */
  readonly geometry: Geometry;
  /** Byte address of the heap header. */
  readonly headerAddress: number;
  /**
   * Int32/Uint32 index of the region map's first word, in the heap header: word `regionMapIndex + (p >>> regionShift)`
   * is 1 when `p` lies in a region (listed, or about to be: the word is set before the region is pushed), 0 when it
   * does not (an oversized mapping, the heap header, the registry, or nothing). Regions are never released, so a 1
   * never goes back to 0. A pointer handed out from a region's arena always reads 1: the region was pushed, after
   * the word was set, before its arena could be carved. Read it with a plain load on the free's fast path.
   */
  readonly regionMapIndex: number;
  /** log2 of `regionBytes`: `p >>> regionShift` is the region map entry of `p`. */
  readonly regionShift: number;

  private readonly regionBytes: number;
  private readonly arenaBytes: number;
  private readonly arenaShift: number;
  private readonly arenaMask: number;
  private readonly regionMask: number;
  /** Int32 index of the heap header. */
  private readonly hw: number;
  /** Most regions the space can hold: bounds every walk, so a corrupted cycle cannot spin forever. */
  private readonly maxRegions: number;
  /**
   * Byte address of an Int32 word (0: none) where this agent records the region it is opening, from its
   * reservation until it is on the list: if the agent dies in between, a reaper finds it there and
   * {@link recoverRegion} lists or releases it. Set by the layer that keeps per-agent state in the buffer.
   */
  progressWord = 0;
  /** This agent's current region (0 = none yet). */
  private current = 0;
  /** Per region index (`base / regionBytes`): 1 once this agent has seen that region on the list. */
  private readonly known: Uint8Array;

  private constructor(space: AddressSpace, headerAddress: number, geometry: Geometry) {
    this.space = space;
    this.headerAddress = headerAddress;
    this.geometry = Object.freeze(geometry);
    this.regionBytes = geometry.regionBytes;
    this.arenaBytes = geometry.arenaBytes;
    this.arenaShift = 31 - Math.clz32(geometry.arenaBytes);
    this.arenaMask = ~(geometry.arenaBytes - 1);
    this.regionMask = ~(geometry.regionBytes - 1);
    this.hw = headerAddress >>> 2;
    this.regionMapIndex = this.hw + H_REGION_MAP;
    this.regionShift = 31 - Math.clz32(geometry.regionBytes);
    this.maxRegions = Math.floor(space.maxBytes / geometry.regionBytes);
    this.known = new Uint8Array(this.maxRegions);
  }

  /**
   * First agent: chooses the geometry (or takes `options.geometry`), reserves and commits the heap header,
   * writes the geometry there and publishes its address in root word 0.
   * @throws RangeError for a bad geometry or a space too small for two regions (the lowest region-sized
   * range holds the space's own header); HeapError `BAD_HANDLE` if the space already has a region heap.
   */
  static create(space: AddressSpace, options: RegionsOptions = {}): Regions {
    checkAddressSpace(space);
    if (options === null || typeof options !== 'object') throw new TypeError('Regions.create options must be an object');
    if (space.root(REGIONS_ROOT) !== 0) {
      throw new HeapError('BAD_HANDLE', `this address space already has a region heap at ${formatAddress(space.root(REGIONS_ROOT))}: open it with Regions.open(space)`);
    }
    const geometry = options.geometry === undefined ? chooseGeometry(space.maxBytes) : checkGeometry(options.geometry);
    if (space.maxBytes < 2 * geometry.regionBytes) {
      throw new RangeError(
        `maxBytes ${formatBytes(space.maxBytes)} is too small for ${formatBytes(geometry.regionBytes)} regions: ` +
          `the lowest ${formatBytes(geometry.regionBytes)} hold the space's header, so at least ${formatBytes(2 * geometry.regionBytes)} is needed`,
      );
    }
    const addr = space.reserve(HEAP_HEADER_BYTES);
    space.commit(addr, PAGE_SIZE);
    space.u8.fill(0, addr, addr + PAGE_SIZE); // without native page return a reused range keeps old bytes
    const i32 = space.i32;
    const h = addr >>> 2;
    i32[h + H_VERSION] = VERSION;
    i32[h + H_REGION_BYTES] = geometry.regionBytes;
    i32[h + H_ARENA_BYTES] = geometry.arenaBytes;
    i32[h + H_UNIT_BYTES] = geometry.unitBytes;
    i32[h + H_UNITS_PER_ARENA] = geometry.unitsPerArena;
    i32[h + H_SPACE_GRANULES] = space.maxBytes / GRANULE;
    Atomics.store(i32, h + H_MAGIC, HEAP_MAGIC);
    // Publishing the address is the seq-cst write that makes the header above visible to openers.
    const seen = space.casRoot(REGIONS_ROOT, 0, addr);
    if (seen !== 0) {
      space.release(addr, HEAP_HEADER_BYTES);
      throw new HeapError('BAD_HANDLE', `another agent created a region heap at ${formatAddress(seen)} first: open it with Regions.open(space)`);
    }
    return new Regions(space, addr, geometry);
  }

  /**
   * Other agents: reads root word 0 and checks the heap header there.
   * @throws HeapError `BAD_HANDLE` when there is no region heap or its header is not one.
   */
  static open(space: AddressSpace): Regions {
    checkAddressSpace(space);
    const addr = space.root(REGIONS_ROOT) >>> 0;
    const bad = (why: string): never => {
      throw new HeapError('BAD_HANDLE', `no region heap in this address space: ${why}`, addr);
    };
    if (addr === 0) bad('root word 0 is empty (create it with Regions.create)');
    if (addr % GRANULE !== 0 || addr + PAGE_SIZE > space.maxBytes) bad(`root word 0 holds ${formatAddress(addr)}, not a header address`);
    if (!space.covers(addr + PAGE_SIZE) || !space.isCommitted(addr, PAGE_SIZE)) bad(`the header at ${formatAddress(addr)} is not committed`);
    const i32 = space.i32;
    const h = addr >>> 2;
    if (Atomics.load(i32, h + H_MAGIC) !== HEAP_MAGIC) bad(`no heap header magic at ${formatAddress(addr)}`);
    if (i32[h + H_VERSION] !== VERSION) bad(`header version ${i32[h + H_VERSION]}, this build reads ${VERSION}`);
    if (i32[h + H_SPACE_GRANULES] !== space.maxBytes / GRANULE) bad('the header was written for a space of another size');
    let geometry: Geometry;
    try {
      geometry = checkGeometry({
        regionBytes: i32[h + H_REGION_BYTES]!,
        arenaBytes: i32[h + H_ARENA_BYTES]!,
        unitBytes: i32[h + H_UNIT_BYTES] as 16384,
        unitsPerArena: i32[h + H_UNITS_PER_ARENA]!,
      });
    } catch (err) {
      return bad(`its geometry is corrupt (${(err as Error).message})`);
    }
    return new Regions(space, addr, geometry);
  }

  /**
   * Carves a fresh arena: `arenaBytes` aligned to `arenaBytes`, reserved but not committed (the arena
   * layer commits what it uses). Claim order: this agent's current region, every region on the list, a
   * new region, one more walk of the list. Lock-free: one CAS per attempt; only a carve that finds no room
   * while another agent is opening a region waits for it (walking again, for at most 200 ms).
   * @throws HeapError `OUT_OF_MEMORY` naming the heap's maxBytes when every slot is carved and no region fits.
   */
  carveArena(): number {
    const current = this.current;
    let arena = current !== 0 ? this.claimSlot(current) : 0;
    if (arena !== 0) return arena;
    arena = this.walkAndClaim(current);
    if (arena !== 0) return arena;
    arena = this.openRegion();
    if (arena !== 0) return arena;
    arena = this.walkAndClaim(0); // a slot may have been released while we looked for room
    if (arena !== 0) return arena;
    // Another agent may hold the last free range, reserved but not yet listed: its region will be there in a
    // moment, so keep walking while any region is being opened (bounded in time, pausing a tenth of a
    // millisecond between walks where this thread may block) before saying there is no room.
    const started = now();
    while (Atomics.load(this.space.i32, this.hw + H_OPENING) > 0 && now() - started < OPENING_PATIENCE_MS) {
      arena = this.walkAndClaim(0);
      if (arena !== 0) return arena;
      if (agentCanBlock()) Atomics.wait(pause(), 0, 0, 0.1);
    }
    arena = this.walkAndClaim(0);
    if (arena !== 0) return arena;
    throw this.outOfMemory();
  }

  /**
   * Releases a carved arena: decommits all of it (pages go back to the OS with native page return), then
   * clears its slot bit. A later carve may hand the same addresses out again.
   * @throws RangeError for a non-integer; HeapError `BAD_POINTER` / `MISALIGNED` for an address that is not
   * an arena slot of a region, `DOUBLE_FREE` when the slot is not carved (checked before anything changes).
   */
  releaseArena(arena: number): void {
    const region = this.regionOfArena(arena, 'release');
    const slot = (arena - region) >>> this.arenaShift;
    const w = (region >>> 2) + R_BITMAP;
    if ((Atomics.load(this.space.i32, w) & (1 << slot)) === 0) {
      throw new HeapError('DOUBLE_FREE', `cannot release arena ${formatAddress(arena)}: it is not carved`, arena);
    }
    this.space.decommit(arena, this.arenaBytes);
    // Only a second release racing this one finds the bit clear; the range was decommitted twice, nothing else.
    if (clearBitRangeAtomic(this.space.i32, w, slot, 1) === 0) {
      throw new HeapError('DOUBLE_FREE', `arena ${formatAddress(arena)} was released twice at once`, arena);
    }
  }

  /** Whether `arena` is an arena slot of a region and is carved now. */
  isCarved(arena: number): boolean {
    checkAddressNumber(arena);
    if (arena <= 0 || arena >= this.space.maxBytes || (arena & (this.arenaBytes - 1)) !== 0) return false;
    const region = (arena & this.regionMask) >>> 0;
    if (region === arena || !this.isRegion(region)) return false;
    const bit = 1 << ((arena - region) >>> this.arenaShift);
    return (bit & this.heldOutBit(region)) === 0 && (Atomics.load(this.space.i32, (region >>> 2) + R_BITMAP) & bit) !== 0;
  }

  /** The arena an address inside it belongs to: `(ptr & ~(arenaBytes - 1)) >>> 0`, no memory read. */
  arenaBase(ptr: number): number {
    return (ptr & this.arenaMask) >>> 0;
  }

  /** Addresses of all regions, newest first (list order). */
  regionList(): number[] {
    const out: number[] = [];
    let r = this.listHead();
    for (let n = 0; r !== 0; n++) {
      this.checkRegion(r, n);
      out.push(r);
      r = this.nextRegion(r);
    }
    return out;
  }

  /** Every arena carved now, by any agent, in address order. */
  carvedArenas(): number[] {
    const out: number[] = [];
    for (const r of this.regionList()) {
      const bits = Atomics.load(this.space.i32, (r >>> 2) + R_BITMAP) & ~this.heldOutBit(r); // the walk may have refreshed the views
      for (let slot = 1; slot < SLOTS_PER_REGION; slot++) {
        if ((bits & (1 << slot)) !== 0) out.push(r + slot * this.arenaBytes);
      }
    }
    return out.sort((a, b) => a - b);
  }

  /** Regions pushed onto the list so far (all agents). */
  regionCount(): number {
    return Atomics.load(this.space.i32, this.hw + H_REGION_COUNT);
  }

  /**
   * Byte address of user word `index` (0-31) in the heap header: Int32 words, zero at creation, that no
   * code in this layer touches. Upper layers keep their own shared words there (read and write them with
   * `Atomics` on `space.i32[addr >>> 2]`).
   * @throws RangeError for an index outside 0-31.
   */
  userWord(index: number): number {
    if (!Number.isInteger(index) || index < 0 || index >= USER_WORDS) {
      throw new RangeError(`user word index must be an integer from 0 to ${USER_WORDS - 1}, got ${describeValue(index)}`);
    }
    return this.headerAddress + (H_USER + index) * 4;
  }

  // ---- internals ---------------------------------------------------------------------------------

  /** Claims the lowest clear slot of region `r`; returns the arena's address, or 0 when the region is full. */
  private claimSlot(r: number): number {
    const slot = claimFirstClearBit(this.space.i32, (r >>> 2) + R_BITMAP, 0, SLOTS_PER_REGION);
    return slot < 0 ? 0 : (r + slot * this.arenaBytes) >>> 0;
  }

  /** Walks the list, skipping `skip`; claims the first free slot found and makes its region current. */
  private walkAndClaim(skip: number): number {
    let r = this.listHead();
    for (let n = 0; r !== 0; n++) {
      this.checkRegion(r, n);
      if (r !== skip) {
        const arena = this.claimSlot(r);
        if (arena !== 0) {
          this.current = r;
          return arena;
        }
      }
      r = this.nextRegion(r);
    }
    return 0;
  }

  /**
   * Reserves a new region, writes its header with slot 1 already claimed for this agent, and pushes it
   * onto the list with one CAS. Returns slot 1's arena, or 0 when no aligned range is left.
   */
  private openRegion(): number {
    const space = this.space;
    let r: number;
    Atomics.add(space.i32, this.hw + H_OPENING, 1);
    try {
      r = space.reserve(this.regionBytes, this.regionBytes);
    } catch (err) {
      Atomics.sub(space.i32, this.hw + H_OPENING, 1);
      if (err instanceof HeapError && err.code === 'OUT_OF_MEMORY') return 0;
      throw err;
    }
    if (this.progressWord !== 0) Atomics.store(space.i32, this.progressWord >>> 2, r | 0);
    try {
      space.commit(r, PAGE_SIZE);
    } catch (err) {
      space.release(r, this.regionBytes);
      if (this.progressWord !== 0) Atomics.store(space.i32, this.progressWord >>> 2, 0);
      Atomics.sub(space.i32, this.hw + H_OPENING, 1);
      throw err;
    }
    const i32 = space.i32;
    const b = r >>> 2;
    i32[b + R_MAGIC] = REGION_MAGIC;
    i32[b + R_BITMAP] = 0b11 | this.heldOutBit(r); // header + the arena we return (+ a slot ending at 2^32)
    i32[b + R_REGION_BYTES] = this.regionBytes;
    // Mapped before it is listed (and only once its header is whole: a reaper that finds the header pushes it, so a
    // range mapped here always becomes a region and its entry may never clear).
    this.mapRegion(r);
    this.pushRegion(r);
    if (this.progressWord !== 0) Atomics.store(space.i32, this.progressWord >>> 2, 0);
    Atomics.sub(i32, this.hw + H_OPENING, 1);
    this.current = r;
    return (r + this.arenaBytes) >>> 0;
  }

  /**
   * The bitmap bit of the slot of region `r` that ends at 2^32, or 0. That slot is never carved: it is marked
   * taken when the region is written. An arena records the ends of its slabs (a bump, a slab's end) as uint32
   * words, and an end of 2^32 would read back as 0; so no arena may end at the top of a 4 GiB space.
   */
  private heldOutBit(r: number): number {
    return r + this.regionBytes === TOP ? 1 << (SLOTS_PER_REGION - 1) : 0;
  }

  /** Whether `p` lies in a region (the region map's entry for it: one read, no walk). */
  inRegion(p: number): boolean {
    return this.space.i32[this.regionMapIndex + ((p >>> 0) >>> this.regionShift)] !== 0;
  }

  /** Sets the region map's entry of the region at `r` (before it is pushed). */
  private mapRegion(r: number): void {
    Atomics.store(this.space.i32, this.regionMapIndex + (r >>> this.regionShift), 1);
  }

  /** Pushes the region at `r` (its header written) onto the shared list with one CAS, and counts it. */
  private pushRegion(r: number): void {
    const i32 = this.space.i32;
    const head = this.hw + H_LIST_HEAD;
    for (;;) {
      const old = Atomics.load(i32, head);
      Atomics.store(i32, (r >>> 2) + R_NEXT, old);
      // Only pushes touch the head and regions never leave, so a CAS that sees `old` is never stale (no ABA).
      if (Atomics.compareExchange(i32, head, old, r | 0) === old) break;
    }
    Atomics.add(i32, this.hw + H_REGION_COUNT, 1);
    this.known[r / this.regionBytes] = 1;
  }

  /**
   * For a reaper: the region at `r` that a dead agent was opening (read from its progress word). If it is
   * on the list, nothing is done. If its header was written, it is pushed onto the list (its slot 1 stays
   * claimed: the caller releases that arena if the dead agent never laid it out). Otherwise its range is
   * released. Never call this for an agent that may still be running.
   */
  recoverRegion(r: number): 'listed' | 'pushed' | 'released' | 'none' {
    const space = this.space;
    if (!Number.isInteger(r) || r <= 0 || r % this.regionBytes !== 0 || r + this.regionBytes > space.maxBytes) return 'none';
    if (this.regionList().includes(r)) return 'listed';
    // The dead agent counted itself as opening a region and never got to uncount itself.
    if (Atomics.load(space.i32, this.hw + H_OPENING) > 0) Atomics.sub(space.i32, this.hw + H_OPENING, 1);
    if (!space.isReserved(r, this.regionBytes)) return 'none';
    const b = r >>> 2;
    if (space.isCommitted(r, PAGE_SIZE) && space.covers(r + PAGE_SIZE) && space.i32[b + R_MAGIC] === REGION_MAGIC && space.i32[b + R_REGION_BYTES] === this.regionBytes) {
      this.mapRegion(r);
      this.pushRegion(r);
      return 'pushed';
    }
    space.release(r, this.regionBytes);
    return 'released';
  }

  private listHead(): number {
    return Atomics.load(this.space.i32, this.hw + H_LIST_HEAD) >>> 0;
  }

  private nextRegion(r: number): number {
    return Atomics.load(this.space.i32, (r >>> 2) + R_NEXT) >>> 0;
  }

  /** Checks that list entry number `n` at `r` is a region whose header this agent's views reach. */
  private checkRegion(r: number, n: number): void {
    if (n >= this.maxRegions || (r & (this.regionBytes - 1)) !== 0 || r >= this.space.maxBytes || !this.space.covers(r + REGION_HEADER_BYTES)) {
      throw new HeapError('CORRUPTION', `region list entry ${n} is ${formatAddress(r)}, not a region`, r);
    }
    if (this.known[r / this.regionBytes] === 0) {
      if (Atomics.load(this.space.i32, (r >>> 2) + R_MAGIC) !== REGION_MAGIC) {
        throw new HeapError('CORRUPTION', `region list entry ${n} at ${formatAddress(r)} has no region header`, r);
      }
      this.known[r / this.regionBytes] = 1;
    }
  }

  /** Whether `r` is on the region list (seen before, or found by walking it now). */
  private isRegion(r: number): boolean {
    if (this.known[r / this.regionBytes] === 1) return true;
    let q = this.listHead();
    for (let n = 0; q !== 0; n++) {
      this.checkRegion(q, n);
      if (q === r) return true;
      q = this.nextRegion(q);
    }
    return false;
  }

  /** Validates an arena address for `what`; returns its region. Reads only, changes nothing. */
  private regionOfArena(arena: number, what: string): number {
    checkAddressNumber(arena);
    if (arena <= 0 || arena >= this.space.maxBytes) {
      throw new HeapError('BAD_POINTER', `cannot ${what} arena ${formatAddress(arena)}: outside the heap [0, ${formatBytes(this.space.maxBytes)})`, arena);
    }
    if ((arena & (this.arenaBytes - 1)) !== 0) {
      throw new HeapError('MISALIGNED', `cannot ${what} arena ${formatAddress(arena)}: not aligned to the arena size ${formatBytes(this.arenaBytes)}`, arena);
    }
    const region = (arena & this.regionMask) >>> 0;
    if (region === arena) {
      throw new HeapError('BAD_POINTER', `cannot ${what} arena ${formatAddress(arena)}: it is slot 0 of its range, which holds a region header`, arena);
    }
    if (!this.isRegion(region)) {
      throw new HeapError('BAD_POINTER', `cannot ${what} arena ${formatAddress(arena)}: ${formatAddress(region)} is not a region of this heap`, arena);
    }
    if (arena + this.arenaBytes === TOP) {
      throw new HeapError('BAD_POINTER', `cannot ${what} arena ${formatAddress(arena)}: the slot that ends at 4 GiB is never an arena`, arena);
    }
    return region;
  }

  private outOfMemory(): HeapError {
    const regions = this.regionList();
    const slots = regions.length * USABLE_SLOTS_PER_REGION - regions.filter((r) => this.heldOutBit(r) !== 0).length;
    return new HeapError(
      'OUT_OF_MEMORY',
      `out of memory: the heap's maxBytes ${formatBytes(this.space.maxBytes)} is used up; its ${regions.length} regions of ` +
        `${formatBytes(this.regionBytes)} have all ${slots} arena slots of ${formatBytes(this.arenaBytes)} carved, ` +
        `and no ${formatBytes(this.regionBytes)}-aligned range is free for another region`,
    );
  }
}

function checkAddressNumber(p: number): void {
  if (typeof p !== 'number' || !Number.isInteger(p)) throw new RangeError(`an address must be an integer, got ${describeValue(p)}`);
}
