/**
 * One agent's large and oversized tier, and its retention ledger: which freed large blocks stay parked whole
 * (found again by span), and the stash of freed oversized mappings (kept in the agent area, found again by
 * reservation size).
 *
 * An oversized mapping is a range of its own of exactly `size + 16 KiB` rounded up to 64 KiB (the address space's
 * granule), at 64 KiB alignment, outside every region. Its header is in its first page and the payload starts
 * 16 KiB in, so a free finds the header at `p - 16 KiB` once the heap's region map says `p` is in no region.
 * Header Int32 words: 0 kind (2, no owner), 1 magic 'PMAP', 2 reservation in KiB, 3 payload bytes, 4 state
 * (1 live, 2 stashed; changed by CAS, so two agents freeing one mapping cannot both win), 5 the mapping's own
 * base address (a header found at `p - 16 KiB` must name itself), 6 the agent id that allocated it (a reap with
 * `releaseLive` releases a dead agent's live mappings).
 */
import {
  G_STASH_COUNT,
  KIND_MAPPING,
  LARGE_ROUND,
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
  unparkRun,
  type ArenaHeap,
  type SpanRetention,
} from '@paddock/arena';
import { GRANULE, HeapError, PAGE_SIZE, describeValue, formatAddress, formatBytes, type AddressSpace } from '@paddock/platform';

/** The payload of an oversized mapping starts this far into it (so payloads stay 16 KiB aligned). */
export const MAPPING_HEADER_BYTES = 16 * 1024;
const M_KIND = 0;
const M_MAGIC = 1;
const M_RESERVED_KIB = 2;
const M_BYTES = 3;
const M_STATE = 4;
const M_SELF = 5;
const M_AGENT = 6;
const LIVE = 1;
const STASHED = 2;
/**
 * A large span is served from arena units only when the arena holds whole blocks of it in at least this share of
 * its usable units (in sixteenths: 15/16); a span that packs worse (a 1.5 MiB block is 96 units: one per 126-unit
 * arena, 76%) is served as an oversized mapping of its exact size instead.
 */
const PACK_SIXTEENTHS = 15;
/** A stashed mapping serves a malloc that needs at least half its reservation. */
const STASH_REUSE_FACTOR = 2;
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

/** One stashed mapping, as a reaper reads it: words [base, reservation in KiB, committed bytes] in the agent area. */
interface StashEntry {
  base: number;
  reservation: number;
  committed: number;
}

/** Reads the stash kept in the agent area at `area` (oldest first). */
function readStash(space: AddressSpace, area: number): StashEntry[] {
  const u32 = space.u32;
  const n = Math.min(STASH_CAPACITY, u32[(area >>> 2) + G_STASH_COUNT]!);
  const out: StashEntry[] = [];
  for (let i = 0; i < n; i++) {
    const w = ((area + STASH_OFFSET) >>> 2) + 3 * i;
    out.push({ base: u32[w]!, reservation: u32[w + 1]! * 1024, committed: u32[w + 2]! });
  }
  return out;
}

/** An oversized mapping as a heap snapshot shows it. */
export interface MappingPicture {
  base: number;
  /** Bytes reserved for it (64 KiB granules: its payload plus 16 KiB, rounded up, or more after a stash reuse). */
  reservation: number;
  /** Bytes of its payload (what was asked for, rounded to pages). */
  payloadBytes: number;
  /** `live`: handed out; `stashed`: freed and kept in an agent's stash for reuse. */
  state: 'live' | 'stashed';
}

/**
 * Every oversized mapping in the heap, found by its header: each 64 KiB-aligned address outside the regions (whose
 * bases and size are given) that is reserved, has its header page committed and carries a mapping header naming
 * itself; the walk steps over each mapping found, so its payload is never read as a header. Any agent may call it;
 * nothing is written. A mapping being created, resized or released at that moment may be missed.
 */
export function mappingPictures(space: AddressSpace, regions: readonly number[], regionBytes: number): MappingPicture[] {
  const out: MappingPicture[] = [];
  space.refresh();
  const end = Math.min(space.u8.length, space.maxBytes);
  const sorted = [...regions].sort((a, b) => a - b);
  let next = 0; // the first region at or above `base`
  for (let base = GRANULE; base + PAGE_SIZE <= end; base += GRANULE) {
    while (next < sorted.length && sorted[next]! + regionBytes <= base) next++;
    if (next < sorted.length && base >= sorted[next]!) {
      base = sorted[next]! + regionBytes - GRANULE; // past the region
      continue;
    }
    if (!space.holdsPage(base)) continue;
    const w = base >>> 2;
    const i32 = space.i32;
    if (i32[w + M_MAGIC] !== MAPPING_MAGIC || i32[w + M_KIND] !== KIND_MAPPING || space.u32[w + M_SELF] !== base) continue;
    const reservation = space.u32[w + M_RESERVED_KIB]! * 1024;
    const state = Atomics.load(i32, w + M_STATE);
    if (reservation < GRANULE || reservation % GRANULE !== 0 || (state !== LIVE && state !== STASHED)) continue;
    out.push({ base, reservation, payloadBytes: space.u32[w + M_BYTES]!, state: state === LIVE ? 'live' : 'stashed' });
    base += reservation - GRANULE;
  }
  return out;
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
    return size <= this.arena.largeMax && this.spanInArena[Math.ceil(Math.ceil(size / LARGE_ROUND) * LARGE_ROUND / UNIT)] === 1;
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
      let best = -1;
      let bestKib = 0;
      for (let i = this.stashCount - 1; i >= 0; i--) {
        const k = u32[at + 3 * i + 1]!;
        if (k === kib) {
          best = i;
          break;
        }
        if (k > kib && k <= STASH_REUSE_FACTOR * kib && (best < 0 || k < bestKib)) {
          best = i;
          bestKib = k;
        }
      }
      if (best >= 0) {
        const base = u32[at + 3 * best]!;
        // Off the stash and not yet live: a reaper of this agent releases it (plain stores: only a reaper, once this
        // agent is dead, reads the word).
        u32[this.progressAt + MP_BASE] = base | MP_MOVING;
        this.unlistStashed(best);
        if (base === this.cutBase) this.cutBase = 0; // taken back before its cut: nothing to decommit
        else if (this.cutBase !== 0) this.cutPending();
        if (u32[(base >>> 2) + M_BYTES] !== size) this.setPayload(base, size);
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
    const i32 = this.space.i32;
    const hw = base >>> 2;
    i32[hw + M_KIND] = KIND_MAPPING;
    i32[hw + M_RESERVED_KIB] = kib;
    i32[hw + M_BYTES] = 0;
    i32[hw + M_SELF] = base | 0;
    i32[hw + M_AGENT] = this.space.agentId;
    this.setPayload(base, size);
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
    const base = this.locateMapping(p, 'free');
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
        this.releaseMapping(oldBase, oldReservation);
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
      this.releaseMapping(base, reservation);
    }
    this.space.u32[progress + MP_BASE] = 0;
  }

  /** Makes the cut put off by the last free (see {@link cutBase}): the mapping's payload pages past it are decommitted. */
  private cutPending(): void {
    const base = this.cutBase;
    this.cutBase = 0;
    this.setPayload(base, this.cutPayload);
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
    const base = this.locateMapping(p, 'usableSize'); // first: it may grow the views
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
    const base = this.locateMapping(p, 'realloc');
    if ((size >>> 0) !== size || size <= MAX_CLASS_SIZE) return false;
    const u32 = this.space.u32;
    const hw = base >>> 2;
    const have = u32[hw + M_RESERVED_KIB]! * 1024;
    const need = this.reservationFor(size);
    if (need > have) {
      if (!this.space.extend(base, have, need)) return false;
      u32[hw + M_RESERVED_KIB] = need / 1024;
      this.setPayload(base, size);
    } else if (have - need >= have >>> SHRINK_RELEASE_SHIFT) {
      this.setPayload(base, size);
      u32[hw + M_RESERVED_KIB] = need / 1024;
      this.space.release(base + need, have - need);
    } else {
      this.setPayload(base, size);
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
      this.releaseMapping(base, reservation);
    }
    return bytes;
  }

  /**
   * Releases every mapping stashed by the dead agent whose area is at `area` (its ledger died with it).
   * A mapping whose header is not a stashed mapping is left alone (counted as skipped).
   */
  reapStash(area: number): { released: number; skipped: number } {
    let released = 0;
    let skipped = 0;
    const stash = readStash(this.space, area);
    // A mapping the dead agent was making (reserved, header not whole: nobody else can have it) or freeing (taken
    // from live, then neither stashed nor released: nobody else will free it).
    const pw = (area + MAPPING_OFFSET) >>> 2;
    const u32 = this.space.u32;
    const word = Atomics.load(u32, pw + MP_BASE);
    if (word !== 0) {
      const pBase = (word & ~(GRANULE - 1)) >>> 0;
      const what = word & (GRANULE - 1);
      const size = u32[pw + MP_KIB]! * 1024;
      const hw = pBase >>> 2;
      if (what === MP_MAKING && size > 0 && pBase % GRANULE === 0 && pBase + size <= this.space.maxBytes && this.space.isReserved(pBase, size)) {
        if (this.space.covers(pBase + PAGE_SIZE) && this.space.isCommitted(pBase, PAGE_SIZE) && this.space.i32[hw + M_MAGIC] === MAPPING_MAGIC) {
          skipped++; // its header was whole: a live mapping (a reap with releaseLive finds it by its owner word)
        } else {
          if (this.space.isCommitted(pBase, PAGE_SIZE) && this.space.covers(pBase + PAGE_SIZE)) {
            this.space.i32[hw + M_MAGIC] = 0;
            this.space.i32[hw + M_SELF] = 0;
          }
          this.space.release(pBase, size);
          released++;
        }
      } else if (
        what === MP_MOVING && this.isMapping(pBase + MAPPING_HEADER_BYTES) && !stash.some((e) => e.base === pBase) &&
        Atomics.compareExchange(this.space.i32, hw + M_STATE, STASHED, 0) === STASHED
      ) {
        this.releaseMapping(pBase, this.space.u32[hw + M_RESERVED_KIB]! * 1024);
        released++;
      }
      Atomics.store(u32, pw + MP_BASE, 0);
    }
    for (const e of stash) {
      const hw = e.base >>> 2;
      if (
        !this.isMapping(e.base + MAPPING_HEADER_BYTES) || this.space.i32[hw + M_RESERVED_KIB]! * 1024 !== e.reservation ||
        Atomics.compareExchange(this.space.i32, hw + M_STATE, STASHED, 0) !== STASHED
      ) {
        skipped++;
        continue;
      }
      this.releaseMapping(e.base, e.reservation);
      released++;
    }
    Atomics.store(this.space.u32, (area >>> 2) + G_STASH_COUNT, 0);
    return { released, skipped };
  }

  /**
   * Releases every live mapping that the agent `agentId` allocated (for a reap with `releaseLive`: that agent is
   * dead and shared nothing still in use). Each is found by a walk of the address space outside the regions, taken
   * from live with the free's CAS (so a racing free of it by another agent loses with DOUBLE_FREE) and released.
   * Returns how many.
   */
  releaseLiveOf(agentId: number): number {
    let n = 0;
    const regions = this.arena.regions.regionList();
    for (const m of mappingPictures(this.space, regions, this.arena.regions.geometry.regionBytes)) {
      const hw = m.base >>> 2;
      if (m.state !== 'live' || this.space.i32[hw + M_AGENT] !== agentId) continue;
      if (Atomics.compareExchange(this.space.i32, hw + M_STATE, LIVE, 0) !== LIVE) continue;
      this.releaseMapping(m.base, m.reservation);
      n++;
    }
    return n;
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
    let stashBytes = 0;
    const i32 = this.space.i32;
    const stash = readStash(this.space, this.arena.agentArea);
    if (stash.length !== this.stashCount) throw new HeapError('CORRUPTION', `stash holds ${stash.length} mappings, counted ${this.stashCount}`);
    if (this.cutBase !== 0 && !stash.some((e) => e.base === this.cutBase)) {
      throw new HeapError('CORRUPTION', `the mapping at ${formatAddress(this.cutBase)} waits for its cut but is not stashed`, this.cutBase);
    }
    for (const e of stash) {
      const hw = e.base >>> 2;
      if (!this.isMapping(e.base + MAPPING_HEADER_BYTES) || i32[hw + M_STATE] !== STASHED || i32[hw + M_RESERVED_KIB]! * 1024 !== e.reservation) {
        throw new HeapError('CORRUPTION', `stashed mapping at ${formatAddress(e.base)} has a bad header`, e.base);
      }
      stashBytes += e.committed;
    }
    if (stashBytes !== this.stashBytes || this.ledger !== this.retained + parkedBytes + stashBytes || this.ledger < 0 || this.ledger > this.budgetBytes) {
      throw new HeapError(
        'CORRUPTION',
        `retention ledger ${this.ledger} != retained ${this.retained} + parked ${parkedBytes} + stashed ${stashBytes} (budget ${this.budgetBytes})`,
      );
    }
  }

  // ---- internals ---------------------------------------------------------------------------------

  private locateMapping(p: number, what: string): number {
    if (typeof p !== 'number' || (p >>> 0) !== p) throw new HeapError('BAD_POINTER', `${what}: ${String(p)} is not a pointer`);
    const base = p - MAPPING_HEADER_BYTES;
    if (!this.isMapping(p)) {
      throw new HeapError('BAD_POINTER', `${what}: ${formatAddress(p)} is not the start of an oversized block`, p);
    }
    const state = Atomics.load(this.space.i32, (base >>> 2) + M_STATE);
    if (state !== LIVE) throw new HeapError('DOUBLE_FREE', `${what}: the oversized block at ${formatAddress(p)} has been freed`, p);
    return base;
  }

  /** Sets a mapping's payload to `size` bytes: commits what it now needs, decommits what it no longer does. */
  private setPayload(base: number, size: number): void {
    const space = this.space;
    const old = space.u32[(base >>> 2) + M_BYTES]!;
    const start = base + MAPPING_HEADER_BYTES;
    const need = roundPage(size);
    const had = roundPage(old);
    if (need > had) space.commit(start + had, need - had);
    else if (need < had) space.decommit(start + need, had - need);
    space.u32[(base >>> 2) + M_BYTES] = size;
  }


  private releaseMapping(base: number, reservation: number): void {
    const i32 = this.space.i32;
    Atomics.store(i32, (base >>> 2) + M_MAGIC, 0);
    i32[(base >>> 2) + M_KIND] = 0;
    i32[(base >>> 2) + M_SELF] = 0;
    i32[(base >>> 2) + M_AGENT] = 0;
    this.space.release(base, reservation);
  }
}

function roundPage(n: number): number {
  return n <= 0xfffff000 ? ((n + 0xfff) >>> 12) * 0x1000 : Math.ceil(n / PAGE_SIZE) * PAGE_SIZE; // integer arithmetic below 4 GiB
}

/** Committed bytes of a mapping holding `bytes`: its header page plus the payload's pages. */
function committedBytes(bytes: number): number {
  return PAGE_SIZE + roundPage(bytes);
}

/**
 * Per span of large units (index 0 to `usableUnits`): 1 when whole blocks of that span fill at least 15/16 of an
 * arena's usable units, so that blocks of it are served there; 0 when the span packs worse.
 */
function spanTable(usableUnits: number): Uint8Array {
  const t = new Uint8Array(usableUnits + 1);
  for (let span = 1; span <= usableUnits; span++) {
    if (16 * Math.floor(usableUnits / span) * span >= PACK_SIXTEENTHS * usableUnits) t[span] = 1;
  }
  return t;
}
