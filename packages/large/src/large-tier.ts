/**
 * One agent's large and oversized tier, and its retention ledger: which freed large blocks stay parked whole
 * (found again by span), and the stash of freed oversized mappings (kept in the agent area, found again by
 * reservation size).
 *
 * An oversized mapping is a range of its own, outside every region, with its header in its first page and its
 * payload 16 KiB in: mapping.ts lays it out and holds what any agent reads of it.
 */
import {
  G_STASH_COUNT,
  KIND_MAPPING,
  largeBytes,
  MAPPING_MAGIC,
  MAPPING_OFFSET,
  MAX_CLASS_SIZE,
  MP_BASE,
  MP_KIB,
  MP_MAKING,
  MP_MOVING,
  STASH_CAPACITY,
  STASH_OFFSET,
  UNIT,
  UNIT_SHIFT,
  unparkRun,
  type ArenaHeap,
  type SpanRetention,
} from '@paddock/arena';
import { GRANULE, HeapError, PAGE_SIZE, describeValue, formatAddress, formatBytes, type AddressSpace } from '@paddock/platform';
import {
  LIVE,
  MAPPING_HEADER_BYTES,
  M_AGENT,
  M_BYTES,
  M_KIND,
  M_MAGIC,
  M_RESERVED_KIB,
  M_SELF,
  M_STATE,
  STASHED,
  checkStash,
  locateMapping,
  pickStashed,
  committedBytes,
  readStash,
  reapStash,
  releaseLiveOf,
  releaseMapping,
  setPayload,
  spanTable,
  writeMappingHeader,
} from './mapping.js';

/** A realloc that shrinks a mapping gives its tail granules back when they are at least this share (1/4) of its reservation. */
const SHRINK_RELEASE_SHIFT = 2;
/** At most this many freed large blocks stay parked (their units also count against the budget). */
export const PARK_CAPACITY = 16;

/** What {@link LargeTier.stats} reports. */
export interface LargeStats {
  budgetBytes: number;
  /** Bytes on the ledger: retained large units (parked blocks included) plus committed bytes of stashed mappings. */
  ledgerBytes: number;
  /** Units of freed large blocks kept committed, in bytes: free retained units and parked blocks. */
  retainedBytes: number;
  /** Freed large blocks parked whole. */
  parkedBlocks: number;
  stashEntries: number;
  stashBytes: number;
  /** Committed bytes over the ledger's count: the newest stashed mapping's pages past its cut, not yet decommitted. */
  uncutBytes: number;
  /** Oversized mappings this agent handed out and has not seen freed. */
  mappingsAllocated: number;
}

export class LargeTier implements SpanRetention {
  readonly space: AddressSpace;
  readonly arena: ArenaHeap;
  /** The profile's large-retention budget in bytes. */
  budgetBytes: number;
  private ledger = 0;
  /** Bytes of free retained units (parked blocks are in {@link parkedBytes}). */
  private retained = 0;
  /** Parked large blocks, oldest first: address and span. A reaper finds them in the arena (empty large blocks). */
  private readonly parkedAt = new Uint32Array(PARK_CAPACITY);
  private readonly parkedSpan = new Int32Array(PARK_CAPACITY);
  private parkedCount = 0;
  private parkedBytes = 0;
  /** Mappings in the stash (kept in the agent area, oldest first, where a reaper can find it). */
  private stashCount = 0;
  private stashBytes = 0;
  /**
   * The stashed mapping whose payload is still to be cut to {@link cutPayload} bytes (0: none). The ledger
   * already counts it cut; until then its committed bytes run over the budget by less than half of it.
   */
  private cutBase = 0;
  private cutPayload = 0;
  private allocated = 0;
  /** Per span (units): 1 when large blocks of that span are served from arena units, 0 when from a mapping. */
  private readonly spanInArena: Uint8Array;
  /** The region map ({@link ArenaHeap.regionMap}): a mapping is never in a region. */
  private readonly regionMap: number;
  private readonly regionShift: number;
  /** The space's 64 KiB granules (`maxBytes / GRANULE`). */
  private readonly spaceGranules: number;
  /** {@link AddressSpace.reserveBitsIndex} and {@link AddressSpace.commitBitsIndex}. */
  private readonly reserveBits: number;
  private readonly commitBits: number;
  /** Word indexes of the stash's first entry and of its count in the agent area. */
  private readonly stashAt: number;
  private readonly stashCountAt: number;
  /** Word index of the mapping-in-progress record in the agent area (MAPPING_OFFSET). */
  private readonly progressAt: number;

  constructor(space: AddressSpace, arena: ArenaHeap, budgetBytes: number) {
    this.space = space;
    this.arena = arena;
    this.budgetBytes = budgetBytes;
    this.spanInArena = spanTable(arena.usableUnits);
    this.regionMap = arena.regionMap;
    this.regionShift = arena.regionShift;
    this.spaceGranules = space.maxBytes / GRANULE;
    this.reserveBits = space.reserveBitsIndex;
    this.commitBits = space.commitBitsIndex;
    this.stashAt = (arena.agentArea + STASH_OFFSET) >>> 2;
    this.stashCountAt = (arena.agentArea >>> 2) + G_STASH_COUNT;
    this.progressAt = (arena.agentArea + MAPPING_OFFSET) >>> 2;
    arena.retention = this;
  }

  // ---- the ledger (SpanRetention) ----------------------------------------------------------------

  admitUnits(units: number): boolean {
    const bytes = units * UNIT;
    if (this.ledger + bytes > this.budgetBytes) return false;
    this.ledger += bytes;
    this.retained += bytes;
    return true;
  }

  unitsTaken(units: number): void {
    this.ledger -= units * UNIT;
    this.retained -= units * UNIT;
  }

  parkRun(s: number, span: number): boolean {
    const bytes = span * UNIT;
    if (this.parkedCount === PARK_CAPACITY || this.ledger + bytes > this.budgetBytes) return false;
    this.parkedAt[this.parkedCount] = s;
    this.parkedSpan[this.parkedCount] = span;
    this.parkedCount++;
    this.parkedBytes += bytes;
    this.ledger += bytes;
    return true;
  }

  takeParked(span: number): number {
    let larger = -1;
    for (let i = this.parkedCount - 1; i >= 0; i--) {
      const k = this.parkedSpan[i]!;
      if (k === span) {
        const s = this.parkedAt[i]!;
        this.unlistParked(i);
        return s;
      }
      if (k > span && larger < 0) larger = i;
    }
    // None of this span: a larger one goes back to its units, retained, for the carve to take.
    if (larger >= 0) this.unpark(larger);
    return 0;
  }

  releaseParked(): number {
    const n = this.parkedCount;
    while (this.parkedCount !== 0) this.unpark(this.parkedCount - 1);
    return n;
  }

  /** Takes parked block `i` off the list and the ledger. */
  private unlistParked(i: number): void {
    const bytes = this.parkedSpan[i]! * UNIT;
    this.parkedBytes -= bytes;
    this.ledger -= bytes;
    const n = --this.parkedCount;
    for (let k = i; k < n; k++) {
      this.parkedAt[k] = this.parkedAt[k + 1]!;
      this.parkedSpan[k] = this.parkedSpan[k + 1]!;
    }
  }

  /** Releases parked block `i`: off the list and the ledger, then its units go free (retained if admitted). */
  private unpark(i: number): void {
    const s = this.parkedAt[i]!;
    this.unlistParked(i);
    unparkRun(this.arena, s);
  }

  // ---- oversized ---------------------------------------------------------------------------------

  /** Reservation size for an oversized payload of `size` bytes: `size + 16 KiB`, rounded up to 64 KiB. */
  reservationFor(size: number): number {
    // Integer arithmetic below 4 GiB - 80 KiB (a division and `Math.ceil` cost the same-size churn 10% of a step).
    return size < 0xfffec000 ? ((size + 0x13fff) >>> 16) * 0x10000 : Math.ceil((size + MAPPING_HEADER_BYTES) / GRANULE) * GRANULE;
  }

  /**
   * Whether a block of `size` bytes (above 1 MiB) is served from arena units: it fits an arena (the arena's
   * `largeMax`) and its span packs one well (whole blocks of it fill at least 15/16 of the usable
   * units). Every other size above 1 MiB gets an oversized mapping of its exact size.
   */
  inArena(size: number): boolean {
    return size <= this.arena.largeMax && this.spanInArena[(largeBytes(size) + UNIT - 1) >>> UNIT_SHIFT] === 1;
  }

  /**
   * Allocates an oversized object of `size` bytes (above 1 MiB): from this agent's stash when a mapping there has
   * a reservation from what it needs up to twice that (the same reservation first, newest first; its commit grown
   * or shrunk to fit), else a new range of its exact reservation from the address space. When the space has no
   * room, the stash is released and the reservation tried once more.
   * @throws RangeError for a bad size; HeapError OUT_OF_MEMORY when the space has no room.
   */
  mallocOversized(size: number): number {
    if (typeof size !== 'number' || !Number.isInteger(size) || size <= MAX_CLASS_SIZE || size > this.space.maxBytes) {
      throw new RangeError(`oversized size must be an integer above ${MAX_CLASS_SIZE} up to maxBytes ${this.space.maxBytes}, got ${describeValue(size)}`);
    }
    const reservation = this.reservationFor(size);
    if (reservation > this.space.maxBytes) {
      throw new HeapError(
        'OUT_OF_MEMORY',
        `out of memory: an oversized block of ${formatBytes(size)} takes a reservation of ${formatBytes(reservation)}, ` +
          `more than the heap's maxBytes ${formatBytes(this.space.maxBytes)}`,
      );
    }
    const kib = reservation / 1024;
    if (this.stashCount !== 0) {
      const u32 = this.space.u32;
      const at = this.stashAt;
      const best = pickStashed(u32, at, this.stashCount, kib);
      if (best >= 0) {
        const base = u32[at + 3 * best]!;
        // Off the stash and not yet live: a reaper of this agent releases it (plain stores: only a reaper, once this
        // agent is dead, reads the word).
        u32[this.progressAt + MP_BASE] = base | MP_MOVING;
        this.unlistStashed(best);
        if (base === this.cutBase) this.cutBase = 0; // taken back before its cut: nothing to decommit
        else if (this.cutBase !== 0) this.cutPending();
        if (u32[(base >>> 2) + M_BYTES] !== size) setPayload(this.space, base, size);
        // Plain stores: the pointer reaches another agent (whose free's CAS must see it live) only through
        // something that orders it after this.
        this.space.i32[(base >>> 2) + M_AGENT] = this.space.agentId;
        this.space.i32[(base >>> 2) + M_STATE] = LIVE;
        this.space.u32[this.progressAt + MP_BASE] = 0;
        this.allocated++;
        return base + MAPPING_HEADER_BYTES;
      }
    }
    if (this.cutBase !== 0) this.cutPending();
    const base = this.reserveMapping(reservation);
    this.space.u32[this.progressAt + MP_KIB] = kib;
    Atomics.store(this.space.u32, this.progressAt + MP_BASE, base | MP_MAKING); // until its header is whole: a reaper releases it
    this.space.commit(base, PAGE_SIZE);
    writeMappingHeader(this.space, base, kib);
    const i32 = this.space.i32;
    const hw = base >>> 2;
    setPayload(this.space, base, size);
    Atomics.store(i32, hw + M_STATE, LIVE);
    Atomics.store(i32, hw + M_MAGIC, MAPPING_MAGIC);
    this.space.u32[this.progressAt + MP_BASE] = 0;
    this.allocated++;
    return base + MAPPING_HEADER_BYTES;
  }

  /** Reserves `reservation` bytes at 64 KiB alignment; on no room, releases the stash and tries once more. */
  private reserveMapping(reservation: number): number {
    if (reservation > this.space.maxBytes) {
      throw new HeapError('OUT_OF_MEMORY', `out of address space: an oversized block needs ${reservation} bytes, more than maxBytes ${this.space.maxBytes}`);
    }
    try {
      return this.space.reserve(reservation, GRANULE);
    } catch (err) {
      if (!(err instanceof HeapError) || err.code !== 'OUT_OF_MEMORY' || this.stashCount === 0) throw err;
    }
    this.releaseStash();
    return this.space.reserve(reservation, GRANULE);
  }

  /**
   * Frees an oversized object (any agent may): into this agent's stash if the ledger admits its committed
   * bytes (after at most the one eviction the rule allows), else its range goes back at once. A sized free's
   * size must be above 1 MiB, at most the payload's bytes and need as many 64 KiB granules as the payload does.
   * @throws HeapError BAD_POINTER / DOUBLE_FREE / WRONG_SIZE before anything changes.
   */
  freeOversized(p: number, size?: number): void {
    const base = locateMapping(this, this.space, p, 'free');
    const i32 = this.space.i32;
    const hw = base >>> 2;
    const reservation = i32[hw + M_RESERVED_KIB]! * 1024;
    const bytes = this.space.u32[hw + M_BYTES]!;
    if (size !== undefined && ((size >>> 0) !== size || size <= MAX_CLASS_SIZE || size > bytes || this.reservationFor(size) !== this.reservationFor(bytes))) {
      throw new HeapError('WRONG_SIZE', `free of ${formatAddress(p)} with size ${describeValue(size)}: the mapping holds ${bytes} bytes`, p);
    }
    const progress = this.progressAt;
    this.space.u32[progress + MP_BASE] = base | MP_MOVING; // from its CAS until it is stashed or released (read by a reaper)
    if (Atomics.compareExchange(i32, hw + M_STATE, LIVE, STASHED) !== LIVE) {
      this.space.u32[progress + MP_BASE] = 0;
      throw new HeapError('DOUBLE_FREE', `double free of the oversized block at ${formatAddress(p)}`, p);
    }
    this.allocated = Math.max(0, this.allocated - 1);
    if (this.cutBase !== 0) this.cutPending();
    let committed = committedBytes(bytes);
    if (this.ledger + committed > this.budgetBytes && this.stashCount > 0) {
      const u32 = this.space.u32;
      const at = this.stashAt;
      const oldBase = u32[at]!;
      const oldReservation = u32[at + 1]! * 1024;
      if (oldReservation !== reservation && this.ledger - u32[at + 2]! + committed <= this.budgetBytes) {
        this.unlistStashed(0);
        releaseMapping(this.space, oldBase, oldReservation);
      }
    }
    const room = this.budgetBytes - this.ledger;
    if (committed > room && 2 * room >= committed && this.stashCount < STASH_CAPACITY) {
      // At least half of it fits: stashed with its payload to be cut to what fits, the cut put off until the
      // next operation that does not take it back (see cutPending), so that a free followed by a malloc of its
      // size costs no system call.
      this.cutPayload = Math.floor(room / PAGE_SIZE) * PAGE_SIZE - PAGE_SIZE;
      this.cutBase = base;
      committed = committedBytes(this.cutPayload);
    }
    if (committed <= room && this.stashCount < STASH_CAPACITY) {
      const u32 = this.space.u32;
      const w = this.stashAt + 3 * this.stashCount;
      u32[w] = base;
      u32[w + 1] = reservation / 1024;
      u32[w + 2] = committed;
      this.stashCount++;
      u32[this.stashCountAt] = this.stashCount; // read by a reaper, once this agent is gone
      this.stashBytes += committed;
      this.ledger += committed;
    } else {
      releaseMapping(this.space, base, reservation);
    }
    this.space.u32[progress + MP_BASE] = 0;
  }

  /** Makes the cut put off by the last free (see {@link cutBase}): the mapping's payload pages past it are decommitted. */
  private cutPending(): void {
    const base = this.cutBase;
    this.cutBase = 0;
    setPayload(this.space, base, this.cutPayload);
  }

  /** Takes stash entry `i` off the stash (in the agent area) and its committed bytes off the ledger. */
  private unlistStashed(i: number): void {
    const u32 = this.space.u32;
    const at = this.stashAt;
    const committed = u32[at + 3 * i + 2]!;
    this.stashBytes -= committed;
    this.ledger -= committed;
    const n = --this.stashCount;
    for (let w = at + 3 * i; w < at + 3 * n; w++) u32[w] = u32[w + 3]!;
    u32[this.stashCountAt] = this.stashCount;
  }

  /** Payload bytes of the oversized object at `p`. */
  usableSize(p: number): number {
    const base = locateMapping(this, this.space, p, 'usableSize'); // first: it may grow the views
    return this.space.u32[(base >>> 2) + M_BYTES]!;
  }

  /**
   * Resizes an oversized object in place to `size` bytes (above 1 MiB); returns whether it did. A size its
   * reservation holds only moves the commit; a larger one claims the granules right after the reservation when
   * they are free ({@link AddressSpace.extend}); a smaller one whose reservation is a quarter or more too large
   * gives the tail granules back. Otherwise (the next granules taken, or past maxBytes) nothing changes and the
   * caller moves the block.
   */
  resizeInPlace(p: number, size: number): boolean {
    const base = locateMapping(this, this.space, p, 'realloc');
    if ((size >>> 0) !== size || size <= MAX_CLASS_SIZE) return false;
    const u32 = this.space.u32;
    const hw = base >>> 2;
    const have = u32[hw + M_RESERVED_KIB]! * 1024;
    const need = this.reservationFor(size);
    if (need > have) {
      if (!this.space.extend(base, have, need)) return false;
      u32[hw + M_RESERVED_KIB] = need / 1024;
      setPayload(this.space, base, size);
    } else if (have - need >= have >>> SHRINK_RELEASE_SHIFT) {
      setPayload(this.space, base, size);
      u32[hw + M_RESERVED_KIB] = need / 1024;
      this.space.release(base + need, have - need);
    } else {
      setPayload(this.space, base, size);
    }
    return true;
  }

  /**
   * Whether `p` is where an oversized mapping's payload starts: in no region (the region map), 16 KiB past a
   * 64 KiB-aligned base whose page is reserved and committed and holds a mapping header naming that base. The
   * mapping may be live or stashed. Nothing else is checked; nothing is read at `p`'s arena mask.
   */
  isMapping(p: number): boolean {
    if (typeof p !== 'number' || (p >>> 0) !== p) return false;
    const base = p - MAPPING_HEADER_BYTES;
    // In granules, a small integer: `maxBytes` from 2 GiB up is a heap number, a slower compare.
    if (base <= 0 || (base & 0xffff) !== 0 || base >>> 16 >= this.spaceGranules) return false;
    const space = this.space;
    let i32 = space.i32;
    if (i32[this.regionMap + (p >>> this.regionShift)] !== 0) return false;
    // Its header page reserved and committed (`space.holdsPage`, read inline: the call cost the same-size churn 8%).
    const g = base >>> 16;
    const pg = base >>> 12;
    if ((i32[this.reserveBits + (g >>> 5)]! & (1 << (g & 31))) === 0 || (i32[this.commitBits + (pg >>> 5)]! & (1 << (pg & 31))) === 0) return false;
    if (!space.covers(base + PAGE_SIZE)) return false;
    i32 = space.i32;
    const hw = base >>> 2;
    return i32[hw + M_MAGIC] === MAPPING_MAGIC && i32[hw + M_KIND] === KIND_MAPPING && space.u32[hw + M_SELF] === base;
  }

  // ---- purge and inspection ----------------------------------------------------------------------

  /**
   * Returns every parked block, retained unit and stashed mapping to the OS; the ledger ends at 0. Returns the
   * bytes.
   */
  purge(): number {
    this.releaseParked(); // their units become retained units, decommitted next
    let bytes = this.arena.purgeRetained() * UNIT;
    this.ledger -= this.retained;
    this.retained = 0;
    return bytes + this.releaseStash();
  }

  /** Releases every stashed mapping (a cut put off included); returns their committed bytes. */
  private releaseStash(): number {
    let bytes = 0;
    this.cutBase = 0; // released whole below
    while (this.stashCount !== 0) {
      const u32 = this.space.u32;
      const at = this.stashAt;
      const base = u32[at]!;
      const reservation = u32[at + 1]! * 1024;
      bytes += u32[at + 2]!;
      this.unlistStashed(0);
      releaseMapping(this.space, base, reservation);
    }
    return bytes;
  }

  /** Releases the dead agent's stashed mappings and the one it was making or freeing (see mapping.ts). */
  reapStash(area: number): { released: number; skipped: number } {
    return reapStash(this, this.space, area);
  }

  /** Releases every live mapping that agent `agentId` allocated (a reap with `releaseLive`; see mapping.ts). */
  releaseLiveOf(agentId: number): number {
    return releaseLiveOf(this.space, this.arena.regions.regionList(), this.arena.regions.geometry.regionBytes, agentId);
  }

  stats(): LargeStats {
    return {
      budgetBytes: this.budgetBytes,
      ledgerBytes: this.ledger,
      retainedBytes: this.retained + this.parkedBytes,
      parkedBlocks: this.parkedCount,
      stashEntries: this.stashCount,
      stashBytes: this.stashBytes,
      uncutBytes: this.cutBase === 0 ? 0 : committedBytes(this.space.u32[(this.cutBase >>> 2) + M_BYTES]!) - committedBytes(this.cutPayload),
      mappingsAllocated: this.allocated,
    };
  }

  /** Stashed mappings, oldest first (addresses of their payloads). */
  stashed(): number[] {
    return readStash(this.space, this.arena.agentArea).map((e) => e.base + MAPPING_HEADER_BYTES);
  }

  /** Parked large blocks, oldest first (their addresses). */
  parked(): number[] {
    return Array.from(this.parkedAt.subarray(0, this.parkedCount));
  }

  /**
   * Validates the ledger, the parked blocks' bytes, every stashed mapping and the one waiting for its cut.
   * @throws HeapError CORRUPTION.
   */
  check(): void {
    let parkedBytes = 0;
    for (let i = 0; i < this.parkedCount; i++) parkedBytes += this.parkedSpan[i]! * UNIT;
    if (parkedBytes !== this.parkedBytes) throw new HeapError('CORRUPTION', `parked blocks hold ${parkedBytes} bytes, counted ${this.parkedBytes}`);
    const stashBytes = checkStash(this, this.space, this.arena.agentArea, this.stashCount, this.cutBase);
    if (stashBytes !== this.stashBytes || this.ledger !== this.retained + parkedBytes + stashBytes || this.ledger < 0 || this.ledger > this.budgetBytes) {
      throw new HeapError(
        'CORRUPTION',
        `retention ledger ${this.ledger} != retained ${this.retained} + parked ${parkedBytes} + stashed ${stashBytes} (budget ${this.budgetBytes})`,
      );
    }
  }
}
