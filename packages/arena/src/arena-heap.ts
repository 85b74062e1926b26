/**
 * One agent's arena allocator: owner allocation and free over size-class slabs, batched cross-agent
 * frees (chains flushed as runs onto the owner's inbox), and drain with every check always on.
 *
 * Hot paths are plain integer code over the space's typed views: the current slab of a class serves
 * from its free list, then by bumping; everything else (a new current slab, a drain, a new arena) is the
 * slow path. Owner-only fields (free list, bump, live count, partial links) are written only by the
 * owning agent, so they need no atomics; other agents reach an owner only through its inbox, one CAS per
 * batch. See docs/design/arena.md for the invariants.
 */
import { GRANULE, HeapError, bitMask, formatAddress, popcount32, threadKey, type AddressSpace } from '@paddock/platform';
import type { ResolvedProfile } from '@paddock/profile';
import type { Regions } from '@paddock/region';
import type { Registry } from '@paddock/registry';
import {
  A_CARVER,
  A_DIRTY_BITS,
  A_DIRTY_UNITS,
  A_FREE_UNITS,
  A_HINT,
  A_KIND_OWNER,
  A_MAGIC,
  A_PARTIAL,
  A_RETAINED_BITS,
  A_RETAINED_UNITS,
  A_RUN_BOUND,
  A_UNITS,
  A_UNIT_BITS,
  ARENA_MAGIC,
  CLASS_MASK,
  CLASS_SHIFT,
  FLAG_CURRENT,
  FLAG_PARTIAL,
  FLAG_QUARANTINE,
  FREED_MARK,
  HEADER_UNITS,
  KIND_ARENA,
  KIND_MAPPING,
  LARGE_CLASS,
  MAPPING_MAGIC,
  IN_MAPPING,
  NOT_FREEABLE,
  R_BUMP,
  RECORD_BYTES,
  R_FREE,
  R_INFO,
  R_LIVE,
  R_PNEXT,
  R_PPREV,
  R_SIZE,
  R_SPAN,
  STATE_CONT,
  STATE_FREE,
  STATE_HEAD,
  STATE_MASK,
  UNIT,
  UNIT_SHIFT,
  recordIndex,
} from './layout.js';
import { CLASS_COUNT, MAX_CLASS_SIZE, classIndex } from './size-class.js';
import {
  AGENT_CRASHED,
  AGENT_DETACHED,
  AGENT_LIVE,
  AGENT_REAPED,
  AGENT_AREA_COMMIT,
  CACHE_STACKS_OFFSET,
  CACHE_STRIDE,
  DRAIN_OFFSET,
  D_CUR,
  D_RUN,
  FLUSH_CAPACITY,
  FLUSH_OFFSET,
  G_CACHE_COUNT,
  G_CACHE_DEPTH,
  G_FLUSH_COUNT,
  G_FLUSH_OWNER,
  G_FLUSH_PHASE,
  G_MAP_ADDR,
  G_MAP_CAP,
  G_OPENING_ARENA,
  G_OPENING_REGION,
  G_OWNER_SLOT,
  G_ROUTING,
  G_AGENT_ID,
  G_STATE,
  G_THREAD,
  INLINE_MAP_OFFSET,
  INLINE_MAP_OWNERS,
  agentAreas,
  createAgentArea,
  findAgentArea,
  vacateAgentArea,
} from './agent-area.js';

/** Owner-slot states (the registry's state word). */
export const SLOT_LIVE = 0;
export const SLOT_DETACHED = 1;
/** Its agent died without detaching (its thread crashed): it must be reaped (checked), not just adopted. */
export const SLOT_ORPHANED = 2;
/** Adopted: `SLOT_ADOPTED | adopter slot << 8`. */
export const SLOT_ADOPTED = 4;

/** What {@link ArenaHeap.reapAgent} recovered. */
export interface ReapReport {
  agentId: number;
  ownerSlot: number;
  arenasAdopted: number;
  cacheBlocks: number;
  chainObjects: number;
  /** Blocks found in the dead agent's cache or chains that failed a check and were left alone. */
  lostBlocks: number;
  /** Bytes of slabs left half-updated, kept out of use for good. */
  quarantinedBytes: number;
  /** Live blocks of the arenas the dead agent carved, released with `releaseLive`. */
  liveBlocksReleased: number;
  /** Objects of a drain the dead agent was in the middle of, reclaimed by the reaper. */
  drainedObjects: number;
}

/** The region layer's user word that holds the head of the agent-area list. */
export const AGENT_LIST_WORD = 2;
/**
 * An arena whose dirty units reach the sweep threshold is swept once it has stayed there this long: units
 * released and soon carved again (a producer whose slabs its consumers keep emptying) are then never
 * decommitted and faulted back in between. The idle tick and the idle return sweep whatever is due.
 */
export const SWEEP_DELAY_MS = 10;

/** A chain for one owner is flushed to its inbox when it holds this many objects. */
export const CHAIN_FLUSH = 32;
/** Slots the chain map starts with; it doubles to fit the largest owner slot seen. */
export const CHAIN_MAP_INITIAL = INLINE_MAP_OWNERS;
/** Classes whose slab is one unit; higher classes span 2-64 units and hold one object. */
const LAST_UNIT_CLASS = 9;

/**
 * How a large block's units may stay committed after it is freed (the large tier's retention ledger).
 * Admission is all or nothing.
 */
export interface SpanRetention {
  /** Whether `units` units of a freed large block may be kept committed; if so they are on the ledger. */
  admitUnits(units: number): boolean;
  /** `units` retained units left the ledger (carved again, or their arena was released). */
  unitsTaken(units: number): void;
}

/** Large objects are rounded up to this (1 KiB). */
export const LARGE_ROUND = 1024;

/** Per-class figures of {@link ArenaHeap.stats}. */
export interface ClassStats {
  size: number;
  slabs: number;
  live: number;
  free: number;
}

/** What {@link ArenaHeap.stats} reports for this agent's arenas. */
export interface ArenaStats {
  ownerSlot: number;
  arenas: number;
  liveBytes: number;
  usedUnits: number;
  dirtyUnits: number;
  retainedUnits: number;
  largeObjects: number;
  largeBytes: number;
  pendingChainObjects: number;
  quarantinedBytes: number;
  perClass: ClassStats[];
}

/** Units a slab of class `cls` spans. */
export function spanOf(cls: number): number {
  return cls <= LAST_UNIT_CLASS ? 1 : 1 << (cls - LAST_UNIT_CLASS);
}

export class ArenaHeap {
  readonly space: AddressSpace;
  readonly regions: Regions;
  readonly registry: Registry;
  /** Bytes per arena (a power of two). */
  readonly arenaBytes: number;
  /** Units per arena, header units included. */
  readonly units: number;
  /** Units a slab may use: `units - 2`. */
  readonly usableUnits: number;
  /** A released class slab of at least this many units is decommitted at once. */
  decommitSpan: number;
  /** Dirty units in an arena that trigger a sweep. */
  sweepThreshold: number;
  /** This agent's owner slot; 0 until it carves its first arena. */
  slot = 0;
  /** Keeps freed large units committed within a budget (set by the large tier); null retains nothing. */
  retention: SpanRetention | null = null;
  /** Largest large object: every usable unit of an arena. */
  readonly largeMax: number;
  /** Int32 index of this agent's inbox head word (valid once `slot` is set). */
  private inbox = 0;
  /** This agent's views of the buffer, kept here so the hot paths load them with one read. */
  /** @internal this agent's Int32 view (refreshed through `cover`); for the layers above. */
  i32: Int32Array;
  /** @internal this agent's Uint32 view. */
  u32: Uint32Array;
  /** Bytes the views above reach; an address past them goes through {@link cover}. */
  private viewBytes = 0;

  /** `p & arenaMask` is the base of the arena holding `p` (before `>>> 0`). */
  readonly arenaMask: number;
  private readonly current = new Uint32Array(CLASS_COUNT);
  /** This agent's arenas, oldest first; new slabs come from the newest. */
  private readonly arenas: number[] = [];
  /** This agent's area in the buffer (cache, chain map, stash: what a reaper must reach). */
  readonly agentArea: number;
  /** Int32 index of the chain map: entry for owner o is [head, count] at mapWord + 2 o. */
  private mapWord = 0;
  /** Owners the chain map holds. */
  private mapCap = 0;
  /** Owner slots this agent adopted: their inboxes are drained with its own. */
  private readonly adopted: number[] = [];
  /** Bytes of quarantined slabs in this agent's arenas. */
  quarantinedBytes = 0;
  /** Set once the agent has detached: it may no longer take memory. */
  detached = false;
  /** Arenas whose dirty units reached the sweep threshold, with the time they did (ms). */
  private readonly sweepsDue = new Map<number, number>();
  /**
   * Arenas this agent adopted from an agent that left and has not allocated from since: a slab released in
   * one is decommitted at once and the arena goes back to its region as soon as it is empty, because nobody
   * is about to reuse them (the sweep delay is for an owner's own churn).
   */
  private readonly inherited: Set<number>;
  /**
   * Per owner slot (indexed like the chain map): 1 + the departure count at which that owner was last seen live.
   * An owner leaves by marking its slot and then counting the departure, so while the count is unchanged the
   * owner is still live, or has only just marked itself and will read its inbox after counting (and so find a
   * batch pushed now): a flush then needs no look at the slot's state.
   */
  private liveSeen: Int32Array;
  /** The registry's departure count when this agent last looked for owners to take over. */
  private seenDepartures: number;
  /**
   * Called with a dead agent's area once {@link reapAgent} has recovered its arenas, cache and chains (the
   * large tier releases its stashed mappings); set by the layer above.
   */
  onReaped: ((area: number) => void) | null;
  private pendingOwners = new Int32Array(16);
  private pendingCount = 0;
  private readonly scratch = new Float64Array(CHAIN_FLUSH);

  constructor(space: AddressSpace, regions: Regions, registry: Registry, profile: ResolvedProfile) {
    this.space = space;
    this.regions = regions;
    this.registry = registry;
    this.arenaBytes = regions.geometry.arenaBytes;
    this.units = this.arenaBytes >>> UNIT_SHIFT;
    this.usableUnits = this.units - HEADER_UNITS;
    this.arenaMask = ~(this.arenaBytes - 1);
    this.largeMax = this.usableUnits << UNIT_SHIFT;
    if (profile.unitsPerArena !== this.units) {
      throw new RangeError(`profile resolved for ${profile.unitsPerArena} units per arena, the heap has ${this.units}`);
    }
    this.decommitSpan = profile.decommitSpan;
    this.sweepThreshold = profile.sweepThreshold;
    this.i32 = space.i32;
    this.u32 = space.u32;
    this.viewBytes = space.viewBytes;
    this.agentArea = createAgentArea(space, regions.userWord(AGENT_LIST_WORD), space.agentId, threadKey());
    this.sync();
    regions.progressWord = this.agentArea + G_OPENING_REGION * 4;
    this.mapWord = this.u32[(this.agentArea >>> 2) + G_MAP_ADDR]! >>> 2;
    this.mapCap = this.i32[(this.agentArea >>> 2) + G_MAP_CAP]!;
    // Assigned last, and without initializers: V8 lays fields out in the order they are first assigned, and
    // these are not read on any hot path (the fields before them are laid out as they were without them).
    this.inherited = new Set<number>();
    this.liveSeen = new Int32Array(this.mapCap);
    this.seenDepartures = 0;
    this.onReaped = null;
  }

  /** Takes the space's current views (after a commit, which may grow the buffer). */
  sync(): void {
    const space = this.space;
    this.i32 = space.i32;
    this.u32 = space.u32;
    this.viewBytes = space.viewBytes;
  }

  /** Whether this agent's views reach byte `end`, refreshing them if another agent grew the buffer. */
  cover(end: number): boolean {
    if (end <= this.viewBytes) return true;
    this.space.covers(end);
    this.sync();
    return end <= this.viewBytes;
  }

  /** Arenas this agent owns, oldest first. */
  ownArenas(): readonly number[] {
    return this.arenas;
  }

  // ---- allocation --------------------------------------------------------------------------------

  /**
   * Allocates `size` bytes (0 to 1 MiB) and returns a pointer aligned to the object size (at least 32).
   * @throws RangeError for a size that is negative, not an integer, or above 1 MiB.
   */
  malloc(size: number): number {
    if ((size >>> 0) !== size || size > MAX_CLASS_SIZE) throw badSize(size);
    return this.allocClass(classIndex(size));
  }

  /** Allocates one object of class `cls` (the size is trusted). */
  allocClass(cls: number): number {
    const s = this.current[cls]!;
    if (s !== 0) {
      const u32 = this.u32;
      const base = (s & this.arenaMask) >>> 0;
      const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT);
      const p = u32[ri + R_FREE]!;
      const size = 32 << cls;
      if (p !== 0) {
        const next = u32[p >>> 2]!;
        if (next !== 0 && ((next - s) >>> 0 >= (u32[ri + R_BUMP]! - s) >>> 0 || (next & (size - 1)) !== 0)) {
          this.corruptLink(p, next, s);
        }
        u32[ri + R_FREE] = next;
        u32[ri + R_LIVE]++;
        u32[(p >>> 2) + 1] = 0;
        return p;
      }
      const b = u32[ri + R_BUMP]!;
      if (b + size <= s + (u32[ri + R_SPAN]! << UNIT_SHIFT)) {
        u32[ri + R_BUMP] = b + size;
        u32[ri + R_LIVE]++;
        u32[(b >>> 2) + 1] = 0;
        return b;
      }
    }
    return this.allocSlow(cls);
  }

  private allocSlow(cls: number): number {
    if (this.detached) throw new HeapError('DETACHED', 'this agent has detached from the heap');
    const old = this.current[cls]!;
    if (old !== 0) {
      this.setFlags(old, 0, FLAG_CURRENT);
      this.current[cls] = 0;
    }
    // Frees delivered by other agents may have refilled a slab of this class.
    if (this.slot !== 0 && Atomics.load(this.i32, this.inbox) !== 0) {
      this.drain();
      if (this.current[cls] !== 0) return this.allocClass(cls);
    }
    if (this.sweepsDue.size !== 0) this.sweepDue(false);
    let slab = this.popPartial(cls);
    if (slab === 0) slab = this.reserveSlab(cls);
    this.setFlags(slab, FLAG_CURRENT, 0);
    this.current[cls] = slab;
    return this.allocClass(cls);
  }

  private popPartial(cls: number): number {
    const u32 = this.u32;
    for (let i = this.arenas.length - 1; i >= 0; i--) {
      const base = this.arenas[i]!;
      const s = u32[(base >>> 2) + A_PARTIAL + cls]!;
      if (s !== 0) {
        this.unlinkPartial(base, s, cls);
        return s;
      }
    }
    return 0;
  }

  /**
   * Allocates a large object: above 1 MiB up to {@link largeMax}, rounded up to 1 KiB, one object on its own
   * run of units. Frees delivered by other agents are drained first, so their units (often still retained,
   * committed) serve this request.
   * @throws RangeError for a size outside (1 MiB, largeMax].
   */
  allocLarge(size: number): number {
    if ((size >>> 0) !== size || size <= MAX_CLASS_SIZE || size > this.largeMax) {
      throw new RangeError(`large size must be an integer above ${MAX_CLASS_SIZE} up to ${this.largeMax} bytes, got ${String(size)}`);
    }
    if (this.detached) throw new HeapError('DETACHED', 'this agent has detached from the heap');
    if (this.slot !== 0 && Atomics.load(this.i32, this.inbox) !== 0) this.drain();
    const bytes = Math.ceil(size / LARGE_ROUND) * LARGE_ROUND;
    const s = this.reserveSpan(Math.ceil(bytes / UNIT), LARGE_CLASS);
    const base = (s & this.arenaMask) >>> 0;
    const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT);
    this.u32[ri + R_SIZE] = bytes;
    this.u32[ri + R_BUMP] = s + bytes;
    this.i32[ri + R_LIVE] = 1;
    this.i32[(s >>> 2) + 1] = 0;
    return s;
  }

  /** Finds units for a new slab of class `cls` in this agent's arenas (newest first), or a new arena. */
  private reserveSlab(cls: number): number {
    return this.reserveSpan(spanOf(cls), cls);
  }

  private reserveSpan(span: number, cls: number): number {
    const i32 = this.i32;
    for (let i = this.arenas.length - 1; i >= 0; i--) {
      const base = this.arenas[i]!;
      const hb = base >>> 2;
      if (i32[hb + A_FREE_UNITS]! < span || i32[hb + A_RUN_BOUND]! < span) continue;
      const u = span === 1 ? this.findUnit(base) : this.findRun(base, span);
      if (u >= 0) return this.initSlab(base, u, span, cls);
    }
    // Before carving: owners that left may have arenas with room (and frees waiting for someone to take them).
    if (this.registry.departures() !== this.seenDepartures && this.adoptOrphans() !== 0) return this.reserveSpan(span, cls);
    const base = this.newArena();
    const u = span === 1 ? this.findUnit(base) : this.findRun(base, span);
    return this.initSlab(base, u, span, cls);
  }

  /** First free unit at or above the arena's hint (first-fit upward); -1 when none. */
  private findUnit(base: number): number {
    const i32 = this.i32;
    const hb = base >>> 2;
    const units = this.units;
    for (let u = i32[hb + A_HINT]!; u < units; ) {
      const word = i32[hb + A_UNIT_BITS + (u >>> 5)]! | ((1 << (u & 31)) - 1);
      if (word === -1) {
        u = (u | 31) + 1;
        continue;
      }
      const free = ~word & (word + 1); // lowest clear bit
      const found = (u & ~31) + (31 - Math.clz32(free));
      i32[hb + A_HINT] = found + 1;
      return found;
    }
    i32[hb + A_HINT] = units;
    return -1;
  }

  /** Highest run of `span` free units, scanning down from the top; lowers the run bound when none. */
  private findRun(base: number, span: number): number {
    const i32 = this.i32;
    const hb = base >>> 2;
    let run = 0; // free units directly above u
    let longest = 0;
    let u = this.units - 1;
    while (u >= HEADER_UNITS) {
      if ((u & 31) === 31 && u - 31 >= HEADER_UNITS) {
        // A whole bitmap word at once when it is all free or all used.
        const w = i32[hb + A_UNIT_BITS + (u >>> 5)]!;
        if (w === 0) {
          if (run + 32 >= span) return u + run - span + 1;
          run += 32;
          if (run > longest) longest = run;
          u -= 32;
          continue;
        }
        if (w === -1) {
          run = 0;
          u -= 32;
          continue;
        }
      }
      if ((i32[hb + A_UNIT_BITS + (u >>> 5)]! & (1 << (u & 31))) === 0) {
        if (++run === span) return u;
        if (run > longest) longest = run;
      } else {
        run = 0;
      }
      u--;
    }
    i32[hb + A_RUN_BOUND] = longest;
    return -1;
  }

  private initSlab(base: number, u: number, span: number, cls: number): number {
    const hb = base >>> 2;
    if (this.inherited.size !== 0) this.inherited.delete(base); // allocated from: a working arena again
    let i32 = this.i32;
    let clean = 0;
    let taken = 0;
    // Word at a time: mark the units used; dirty ones need no commit, retained ones leave the ledger.
    setBitRange(i32, hb + A_UNIT_BITS, u, span);
    const dirtyHit = clearBitRange(i32, hb + A_DIRTY_BITS, u, span);
    taken = clearBitRange(i32, hb + A_RETAINED_BITS, u, span);
    clean = span - dirtyHit - taken;
    if (dirtyHit !== 0) i32[hb + A_DIRTY_UNITS] -= dirtyHit;
    i32[hb + A_FREE_UNITS] -= span;
    if (taken !== 0) {
      i32[hb + A_RETAINED_UNITS] -= taken;
      if (this.retention) this.retention.unitsTaken(taken);
    }
    const s = base + (u << UNIT_SHIFT);
    if (clean !== 0) {
      this.space.commit(s, span << UNIT_SHIFT);
      this.sync();
      i32 = this.i32;
    }
    const u32 = this.u32;
    const ri = recordIndex(base, u);
    u32[ri + R_FREE] = 0;
    u32[ri + R_BUMP] = s;
    i32[ri + R_LIVE] = 0;
    i32[ri + R_INFO] = STATE_HEAD | (cls << CLASS_SHIFT);
    i32[ri + R_SPAN] = span;
    u32[ri + R_PNEXT] = 0;
    u32[ri + R_PPREV] = 0;
    u32[ri + R_SIZE] = 0;
    for (let k = 1; k < span; k++) {
      const rk = recordIndex(base, u + k);
      i32[rk + R_INFO] = STATE_CONT;
      i32[rk + R_SPAN] = k;
    }
    return s;
  }

  /** Carves a new arena for this agent (taking an owner slot on the first) and lays out its header. */
  private newArena(): number {
    const base = this.regions.carveArena();
    Atomics.store(this.i32, (this.agentArea >>> 2) + G_OPENING_ARENA, base | 0); // for a reaper, until the magic
    if (this.slot === 0) {
      this.slot = this.registry.takeOwnerSlot();
      this.inbox = this.registry.inboxAddress(this.slot) >>> 2;
      Atomics.store(this.i32, (this.agentArea >>> 2) + G_OWNER_SLOT, this.slot);
    }
    const space = this.space;
    space.commit(base, HEADER_UNITS << UNIT_SHIFT);
    this.sync();
    space.u8.fill(0, base, base + (HEADER_UNITS << UNIT_SHIFT)); // contents of a re-carved range are undefined
    const i32 = this.i32;
    const hb = base >>> 2;
    i32[hb + A_KIND_OWNER] = KIND_ARENA | (this.slot << 8);
    i32[hb + A_CARVER] = this.slot;
    i32[hb + A_FREE_UNITS] = this.usableUnits;
    i32[hb + A_RUN_BOUND] = this.usableUnits;
    i32[hb + A_HINT] = HEADER_UNITS;
    i32[hb + A_UNITS] = this.units;
    i32[hb + A_UNIT_BITS] = (1 << HEADER_UNITS) - 1;
    Atomics.store(i32, hb + A_MAGIC, ARENA_MAGIC);
    Atomics.store(i32, (this.agentArea >>> 2) + G_OPENING_ARENA, 0);
    this.arenas.push(base);
    return base;
  }

  // ---- free --------------------------------------------------------------------------------------

  /**
   * Frees `p`. With `size`, also checks that it names the block's class (a sized free).
   * On the owner the object goes onto its slab's free list; elsewhere it joins the chain for its owner.
   * @throws HeapError (BAD_POINTER, MISALIGNED, DOUBLE_FREE, WRONG_SIZE) before anything changes.
   */
  free(p: number, size?: number): void {
    if (p === 0) return;
    if (this.validateFree(p, size) < 0) this.refuse(p, size);
    this.freeValidated(p);
  }

  /**
   * Checks a free of `p` (and its size, if given) without changing anything. Returns the object's class
   * (0-15, or 16 for a large object), or -1 when `p` lies in an oversized mapping (whose tier checks it).
   * @throws HeapError (BAD_POINTER, MISALIGNED, DOUBLE_FREE, WRONG_SIZE) for anything else.
   */
  validateFree(p: number, size: number | undefined): number {
    let cls = freeableClass(this.u32, this.arenaMask, p);
    // The views may be older than the buffer (another agent grew it): refresh them and look again.
    if (cls === NOT_FREEABLE && typeof p === 'number' && p + 8 > this.viewBytes && this.cover(p + 8)) {
      cls = freeableClass(this.u32, this.arenaMask, p);
    }
    if (cls === IN_MAPPING) return -1;
    if (cls >= 0) {
      if (size === undefined) return cls;
      const base = (p & this.arenaMask) >>> 0;
      const ri = recordIndex(base, (p - base) >>> UNIT_SHIFT);
      if (sizeMatches(size, this.i32[ri + R_INFO]!, this.u32[ri + R_SIZE]!)) return cls;
    }
    return this.refuse(p, size);
  }

  /** Frees `p`, already checked by {@link validateFree}: onto its slab's free list here, or its owner's chain. */
  freeValidated(p: number): void {
    const base = (p & this.arenaMask) >>> 0;
    const ri = recordIndex(base, (p - base) >>> UNIT_SHIFT);
    const owner = this.i32[base >>> 2]! >>> 8;
    const info = this.i32[ri + R_INFO]!;
    if ((info & FLAG_QUARANTINE) !== 0) return; // its slab is out of use for good
    if (owner === this.slot) this.freeLocal(p, ri, info);
    else this.freeForeign(p, owner);
  }

  /** Writes the freed mark into `p` (a block held freed outside any list, e.g. in a cache). */
  markFreed(p: number): void {
    this.i32[(p >>> 2) + 1] = FREED_MARK ^ p;
  }

  /** Clears the freed mark of `p` (it is handed out again). */
  clearMark(p: number): void {
    this.i32[(p >>> 2) + 1] = 0;
  }

  /** The slow path of a refused free: finds the exact reason and throws it. */
  private refuse(p: number, size: number | undefined): never {
    const ri = this.locate(p, 'free');
    if (size !== undefined && !sizeMatches(size, this.i32[ri + R_INFO]!, this.u32[ri + R_SIZE]!)) {
      if ((size >>> 0) !== size) throw badSize(size);
      throw new HeapError('WRONG_SIZE', `free of ${formatAddress(p)} with size ${size}: the block holds ${this.objectSize(ri)} bytes`, p);
    }
    throw new HeapError('DOUBLE_FREE', `double free of ${formatAddress(p)}`, p);
  }

  /**
   * Checks that `p` is an object some arena handed out and returns its record index.
   * `what` names the operation in messages.
   */
  locate(p: number, what: string): number {
    if (typeof p !== 'number' || (p >>> 0) !== p) {
      throw new HeapError('BAD_POINTER', `${what}: ${String(p)} is not a pointer (a uint32 byte offset)`);
    }
    if ((p & 31) !== 0) throw new HeapError('MISALIGNED', `${what}: ${formatAddress(p)} is not aligned to 32 bytes`, p);
    if (!this.cover(p + 8)) {
      throw new HeapError('BAD_POINTER', `${what}: ${formatAddress(p)} lies outside the heap's memory`, p);
    }
    const base = (p & this.arenaMask) >>> 0;
    const i32 = this.i32;
    const hb = base >>> 2;
    if (i32[hb + A_MAGIC] !== ARENA_MAGIC || (i32[hb + A_KIND_OWNER]! & 255) !== KIND_ARENA) {
      throw new HeapError('BAD_POINTER', `${what}: no arena owns ${formatAddress(p)}`, p);
    }
    const u = (p - base) >>> UNIT_SHIFT;
    if (u < HEADER_UNITS) throw new HeapError('BAD_POINTER', `${what}: ${formatAddress(p)} is inside an arena header`, p);
    const ri = recordIndex(base, u);
    const info = i32[ri + R_INFO]!;
    const state = info & STATE_MASK;
    if (state === STATE_CONT) {
      throw new HeapError('BAD_POINTER', `${what}: ${formatAddress(p)} is an interior address of a block`, p);
    }
    if (state !== STATE_HEAD) throw new HeapError('DOUBLE_FREE', `${what}: ${formatAddress(p)} lies in a free unit`, p);
    const size = 32 << ((info >>> CLASS_SHIFT) & CLASS_MASK);
    const s = base + (u << UNIT_SHIFT);
    if (((p - s) & (size - 1)) !== 0) {
      throw new HeapError('MISALIGNED', `${what}: ${formatAddress(p)} is not aligned to its ${size}-byte class`, p);
    }
    if (i32[ri + R_LIVE]! <= 0) throw new HeapError('DOUBLE_FREE', `${what}: ${formatAddress(p)}: its slab has no live objects`, p);
    if (p >= this.u32[ri + R_BUMP]!) throw new HeapError('BAD_POINTER', `${what}: ${formatAddress(p)} was never handed out`, p);
    return ri;
  }

  /** Usable bytes of the object at `p` (its class size). */
  usableSize(p: number): number {
    const ri = this.locate(p, 'usableSize');
    const i32 = this.i32;
    if (i32[(p >>> 2) + 1] === (FREED_MARK ^ p)) {
      throw new HeapError('DOUBLE_FREE', `usableSize: ${formatAddress(p)} has been freed`, p);
    }
    return this.objectSize(ri);
  }

  /** Bytes of one object of the slab whose record is at `ri`. */
  private objectSize(ri: number): number {
    const cls = (this.i32[ri + R_INFO]! >>> CLASS_SHIFT) & CLASS_MASK;
    return cls === LARGE_CLASS ? this.u32[ri + R_SIZE]! : 32 << cls;
  }

  private freeLocal(p: number, ri: number, info: number): void {
    const u32 = this.u32;
    const i32 = this.i32;
    u32[p >>> 2] = u32[ri + R_FREE]!;
    i32[(p >>> 2) + 1] = FREED_MARK ^ p;
    u32[ri + R_FREE] = p;
    const live = i32[ri + R_LIVE]! - 1;
    i32[ri + R_LIVE] = live;
    if ((info & FLAG_CURRENT) !== 0 && live !== 0) return;
    this.slabFreed(p, ri, info, live);
  }

  /** State changes after frees lowered a slab's live count to `live` (not the plain current-slab case). */
  private slabFreed(p: number, ri: number, info: number, live: number): void {
    const base = (p & this.arenaMask) >>> 0;
    const u = (p - base) >>> UNIT_SHIFT;
    const s = base + (u << UNIT_SHIFT);
    const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
    if (live === 0) {
      if ((info & FLAG_CURRENT) !== 0) {
        // Reset in place: every object is free, so forget the list and bump from the start again.
        this.u32[ri + R_FREE] = 0;
        this.u32[ri + R_BUMP] = s;
        return;
      }
      if ((info & FLAG_PARTIAL) !== 0) this.unlinkPartial(base, s, cls);
      this.releaseSlab(base, u, this.i32[ri + R_SPAN]!, cls === LARGE_CLASS);
    } else if ((info & (FLAG_CURRENT | FLAG_PARTIAL)) === 0) {
      this.pushPartial(base, s, cls);
    }
  }

  private freeForeign(p: number, owner: number): void {
    this.i32[(p >>> 2) + 1] = FREED_MARK ^ p;
    if (owner >= this.mapCap) this.growChains(owner);
    const e = this.mapWord + 2 * owner;
    const u32 = this.u32;
    u32[p >>> 2] = u32[e]!;
    u32[e] = p;
    const n = u32[e + 1]! + 1;
    u32[e + 1] = n;
    if (n === 1) this.notePending(owner);
    if (n >= CHAIN_FLUSH) this.flushChain(owner);
  }

  /**
   * Grows the chain map by doubling until `owner` fits: a new range is reserved and filled, then published in
   * the agent area (address, then capacity); pending chains are kept. The old map is released unless it is
   * the inline one.
   */
  private growChains(owner: number): void {
    let cap = this.mapCap;
    while (cap <= owner) cap *= 2;
    const bytes = Math.ceil((cap * 8) / GRANULE) * GRANULE;
    const map = this.space.reserve(bytes);
    this.space.commit(map, cap * 8);
    this.sync();
    const u32 = this.u32;
    const oldWord = this.mapWord;
    const oldCap = this.mapCap;
    u32.copyWithin(map >>> 2, oldWord, oldWord + 2 * oldCap);
    u32.fill(0, (map >>> 2) + 2 * oldCap, (map >>> 2) + 2 * cap);
    const aw = this.agentArea >>> 2;
    Atomics.store(u32, aw + G_MAP_ADDR, map);
    Atomics.store(this.i32, aw + G_MAP_CAP, cap);
    this.mapWord = map >>> 2;
    this.mapCap = cap;
    const seen = new Int32Array(cap);
    seen.set(this.liveSeen);
    this.liveSeen = seen;
    const old = oldWord << 2;
    if (old !== this.agentArea + INLINE_MAP_OFFSET) this.space.release(old, Math.ceil((oldCap * 8) / GRANULE) * GRANULE);
  }

  /** Capacity of the chain map (for tests and stats). */
  get chainMapSize(): number {
    return this.mapCap;
  }

  private notePending(owner: number): void {
    if (this.pendingCount === this.pendingOwners.length) {
      const grown = new Int32Array(this.pendingOwners.length * 2);
      grown.set(this.pendingOwners);
      this.pendingOwners = grown;
    }
    this.pendingOwners[this.pendingCount++] = owner;
  }

  /** Flushes every pending chain to its owner's inbox. Returns the objects sent. */
  flushChains(): number {
    let sent = 0;
    // Taken from the end one at a time: a flush that takes a departed owner over may free (and note) more.
    while (this.pendingCount > 0) {
      const owner = this.pendingOwners[--this.pendingCount]!;
      if (this.u32[this.mapWord + 2 * owner + 1]! > 0) sent += this.flushChain(owner);
    }
    return sent;
  }

  /**
   * Sends the chain for `owner` home: groups its objects by slab, writes one run per slab (members linked
   * through word 0; the tail holds next run, first member, length), links the runs tail to tail and pushes
   * the whole list onto the owner's inbox with one CAS.
   */
  private flushChain(owner: number): number {
    // First, where the batch goes: taking a departed owner over may itself flush and drain, so it happens
    // before this chain is read (it may have been sent meanwhile).
    const departed = this.registry.departures();
    const home = this.liveSeen[owner] === departed + 1 ? owner : this.homeOf(owner);
    const u32 = this.u32;
    const list = this.scratch;
    let n = 0;
    const e = this.mapWord + 2 * owner;
    if (u32[e] === 0) return 0;
    const aw = this.agentArea >>> 2;
    const sw = (this.agentArea + FLUSH_OFFSET) >>> 2;
    for (let p = u32[e]!; p !== 0 && n < CHAIN_FLUSH; p = u32[p >>> 2]!) {
      list[n] = p;
      u32[sw + n] = p; // the scratch a reaper reads if this agent dies before the push
      n++;
    }
    this.i32[aw + G_FLUSH_COUNT] = n;
    this.i32[aw + G_FLUSH_OWNER] = owner;
    Atomics.store(this.i32, aw + G_FLUSH_PHASE, 1);
    u32[e] = 0;
    u32[e + 1] = 0;
    // Insertion sort by address: members of one slab become adjacent (n <= 32).
    for (let i = 1; i < n; i++) {
      const v = list[i]!;
      let j = i - 1;
      while (j >= 0 && list[j]! > v) {
        list[j + 1] = list[j]!;
        j--;
      }
      list[j + 1] = v;
    }
    let firstTail = 0;
    let prevTail = 0;
    let i = 0;
    while (i < n) {
      const first = list[i]!;
      const key = first >>> UNIT_SHIFT;
      let j = i;
      while (j + 1 < n && list[j + 1]! >>> UNIT_SHIFT === key) {
        u32[list[j]! >>> 2] = list[j + 1]!;
        j++;
      }
      const tail = list[j]!;
      const tw = tail >>> 2;
      u32[tw + 1] = first;
      u32[tw + 2] = j - i + 1;
      if (prevTail !== 0) u32[prevTail >>> 2] = tail;
      else firstTail = tail;
      prevTail = tail;
      i = j + 1;
    }
    this.registry.pushInbox(home, firstTail, prevTail);
    Atomics.store(this.i32, aw + G_FLUSH_PHASE, 0);
    // Ours now (we just took the owner over): reclaim at once. Otherwise, if anyone left since we looked, look
    // again: an owner that left after we read its state is taken over here, so a batch never waits in the
    // inbox of an owner that is gone (an owner marks itself, then counts the departure, then reads its inbox).
    if (home === this.slot) this.drain();
    else if (this.registry.departures() !== departed) this.homeOf(home);
    return n;
  }

  /**
   * The owner slot whose inbox takes frees meant for `owner`: `owner` while it lives; the agent that took it
   * over if it left (followed through takeovers of takeovers); this agent's own slot when `owner` had left
   * and nobody had taken it over yet, because then this agent takes it over here (one CAS decides who: see
   * docs/design/arena.md, "Agents that leave").
   */
  private homeOf(owner: number): number {
    let slot = owner;
    for (let hops = 0; hops < 1024; hops++) {
      if (slot === this.slot) return slot;
      const departed = this.registry.departures(); // read before the state: see liveSeen
      const state = this.registry.slotState(slot);
      if (state === SLOT_LIVE) {
        if (slot === owner && owner < this.liveSeen.length) this.liveSeen[owner] = departed + 1;
        return slot;
      }
      if ((state & SLOT_ADOPTED) !== 0) {
        slot = state >>> 8;
      } else if (state === SLOT_DETACHED) {
        if (this.adoptSlot(slot, state)) return this.slot;
      } else if (state === SLOT_ORPHANED) {
        // Its agent crashed: reaped here, or (another agent is reaping it) the batch waits in its inbox, which
        // the reaper drains once it has taken the slot over.
        if (!this.reapOwner(slot)) return slot;
      } else {
        return slot;
      }
    }
    throw new HeapError('CORRUPTION', `owner slot ${owner}: its takeovers do not end in a live owner`);
  }

  // ---- drain -------------------------------------------------------------------------------------

  /**
   * Takes this agent's inbox with one exchange and splices every run onto its slab's free list, after
   * checking it (see docs/design/arena.md, "Drain and its checks"). Returns the objects reclaimed.
   * @throws HeapError CORRUPTION for a run that fails a check; runs before it are already reclaimed.
   */
  drain(): number {
    if (this.slot === 0) return 0;
    let reclaimed = this.drainSlot(this.slot);
    for (let i = 0; i < this.adopted.length; i++) reclaimed += this.drainSlot(this.adopted[i]!);
    return reclaimed;
  }

  private drainSlot(slot: number): number {
    let run = this.registry.takeInbox(slot) >>> 0;
    // The list is named in the agent area as it goes, so that a reaper finishes it if this agent is stopped half
    // way (see resumeDrain): the first run not begun, and the run being spliced. The exchange and this store
    // follow each other with no point between where an agent can be stopped.
    const dw = (this.agentArea + DRAIN_OFFSET) >>> 2;
    Atomics.store(this.i32, dw + D_RUN, run);
    let reclaimed = 0;
    while (run !== 0) {
      // The run may lie past this agent's views (another agent grew the buffer): reach it before reading it.
      if (!this.cover(run + 12)) badRun(run, 'the tail lies outside the heap');
      const next = this.u32[run >>> 2]!;
      // Plain stores: only a reaper reads them, once this agent's thread has stopped.
      this.i32[dw + D_CUR] = run;
      this.i32[dw + D_RUN] = next;
      reclaimed += this.reclaimRun(run), run = next;
    }
    this.i32[dw + D_CUR] = 0;
    return reclaimed;
  }

  /**
   * Finishes the drain a dead agent was in (its area at `area`); the runs' arenas are this agent's by now.
   * The run it was splicing is reclaimed if it still looks untouched: its tail a live object that does not carry
   * the freed mark (a run's tail holds its first member there until the splice, which marks it; a splice that
   * emptied the slab released it, so it is no longer a live object). A splice cut short after it marked the tail
   * loses that run (its slab is consistent; at most 32 blocks stay live) or left the slab inconsistent, and the
   * repair before this quarantined it. Then every run from the first not begun.
   * Returns the objects reclaimed.
   */
  private resumeDrain(area: number): number {
    const dw = (area + DRAIN_OFFSET) >>> 2;
    const cur = Atomics.load(this.i32, dw + D_CUR) >>> 0;
    let run = Atomics.load(this.i32, dw + D_RUN) >>> 0;
    let drained = 0;
    if (cur !== 0 && cur !== run && this.isLiveObject(cur) && this.i32[(cur >>> 2) + 1] !== (FREED_MARK ^ cur)) drained += this.reclaimRun(cur);
    while (run !== 0) {
      if (!this.cover(run + 12)) badRun(run, 'the tail lies outside the heap');
      const next = this.u32[run >>> 2]!;
      drained += this.reclaimRun(run);
      run = next;
    }
    Atomics.store(this.i32, dw + D_RUN, 0);
    Atomics.store(this.i32, dw + D_CUR, 0);
    return drained;
  }

  private reclaimRun(tail: number): number {
    if ((tail & 31) !== 0) badRun(tail, 'the tail is not aligned to 32 bytes');
    if (!this.cover(tail + 12)) badRun(tail, 'the tail lies outside the heap');
    const base = (tail & this.arenaMask) >>> 0;
    const i32 = this.i32;
    const u32 = this.u32;
    const hb = base >>> 2;
    if (i32[hb + A_MAGIC] !== ARENA_MAGIC || (i32[hb + A_KIND_OWNER]! & 255) !== KIND_ARENA) badRun(tail, 'it is not in an arena');
    if (i32[hb + A_KIND_OWNER]! >>> 8 !== this.slot) badRun(tail, `its arena belongs to owner ${i32[hb + A_KIND_OWNER]! >>> 8}, not ${this.slot}`);
    const u = (tail - base) >>> UNIT_SHIFT;
    if (u < HEADER_UNITS) badRun(tail, 'the tail lies in the arena header');
    const ri = recordIndex(base, u);
    const info = i32[ri + R_INFO]!;
    if ((info & STATE_MASK) !== STATE_HEAD) badRun(tail, 'the tail does not sit in a head unit');
    const size = this.objectSize(ri);
    const s = base + (u << UNIT_SHIFT);
    const bump = u32[ri + R_BUMP]!;
    const capacity = ((info >>> CLASS_SHIFT) & CLASS_MASK) === LARGE_CLASS ? 1 : (i32[ri + R_SPAN]! << UNIT_SHIFT) / size;
    const first = u32[(tail >>> 2) + 1]!;
    const length = i32[(tail >>> 2) + 2]!;
    if (capacity === 1 && (length !== 1 || first !== s)) badRun(tail, 'a block run must have length 1 and start at the block');
    if (length < 1 || length > capacity) badRun(tail, `its length ${length} is not 1..${capacity}`);
    if (i32[ri + R_LIVE]! < length) badRun(tail, `its length ${length} is above the slab's live count ${i32[ri + R_LIVE]}`);
    let m = first;
    for (let k = 1; ; k++) {
      if ((m - s) >>> 0 >= (bump - s) >>> 0 || (capacity === 1 ? m !== s : ((m - s) & (size - 1)) !== 0)) {
        badRun(tail, `member ${formatAddress(m)} is outside its slab or misaligned for the ${size}-byte class`);
      }
      if (k === length) break;
      m = u32[m >>> 2]!;
    }
    if (m !== tail) badRun(tail, 'its chain does not end at the tail');
    if ((info & FLAG_QUARANTINE) !== 0) return length; // delivered to a quarantined slab: dropped
    // Checked: splice [first .. tail] onto the free list.
    u32[tail >>> 2] = u32[ri + R_FREE]!;
    i32[(tail >>> 2) + 1] = FREED_MARK ^ tail;
    u32[ri + R_FREE] = first;
    const live = i32[ri + R_LIVE]! - length;
    i32[ri + R_LIVE] = live;
    if ((info & FLAG_CURRENT) === 0 || live === 0) this.slabFreed(tail, ri, info, live);
    return length;
  }

  // ---- slab and arena release --------------------------------------------------------------------

  private releaseSlab(base: number, u: number, span: number, large: boolean): void {
    const i32 = this.i32;
    const hb = base >>> 2;
    for (let k = u; k < u + span; k++) {
      const rk = recordIndex(base, k);
      i32[rk + R_INFO] = STATE_FREE;
      i32[rk + R_SPAN] = 0;
    }
    clearBitRange(i32, hb + A_UNIT_BITS, u, span);
    const free = i32[hb + A_FREE_UNITS]! + span;
    i32[hb + A_FREE_UNITS] = free;
    if (u < i32[hb + A_HINT]!) i32[hb + A_HINT] = u;
    const run = this.runAround(base, u, span);
    if (run > i32[hb + A_RUN_BOUND]!) i32[hb + A_RUN_BOUND] = run;
    if (large && this.retention !== null && this.retention.admitUnits(span)) {
      // Retained: the units stay committed for the next large block; the sweep leaves them alone.
      setBitRange(i32, hb + A_RETAINED_BITS, u, span);
      i32[hb + A_RETAINED_UNITS] += span;
    } else if (span >= this.decommitSpan || (this.inherited.size !== 0 && this.inherited.has(base))) {
      this.space.decommit(base + (u << UNIT_SHIFT), span << UNIT_SHIFT);
    } else {
      setBitRange(i32, hb + A_DIRTY_BITS, u, span);
      i32[hb + A_DIRTY_UNITS] += span;
      if (i32[hb + A_DIRTY_UNITS]! >= this.sweepThreshold && !this.sweepsDue.has(base)) this.sweepsDue.set(base, performance.now());
    }
    if (free === this.usableUnits) this.arenaEmptied(base);
  }

  /** Length of the free run that holds units [u, u + span). */
  private runAround(base: number, u: number, span: number): number {
    const i32 = this.i32;
    const bits = (base >>> 2) + A_UNIT_BITS;
    let lo = u;
    while (lo > HEADER_UNITS) {
      if ((lo & 31) === 0 && lo - 32 >= HEADER_UNITS && i32[bits + ((lo - 1) >>> 5)] === 0) lo -= 32;
      else if ((i32[bits + ((lo - 1) >>> 5)]! & (1 << ((lo - 1) & 31))) === 0) lo--;
      else break;
    }
    let hi = u + span;
    while (hi < this.units) {
      if ((hi & 31) === 0 && hi + 32 <= this.units && i32[bits + (hi >>> 5)] === 0) hi += 32;
      else if ((i32[bits + (hi >>> 5)]! & (1 << (hi & 31))) === 0) hi++;
      else break;
    }
    return hi - lo;
  }

  /**
   * Sweeps the arenas whose dirty units have stayed at or above the threshold for {@link SWEEP_DELAY_MS}
   * (all of them with `force`); an arena whose dirty units were carved again below it is let off.
   * Returns the units decommitted.
   */
  sweepDue(force: boolean): number {
    let swept = 0;
    const now = force ? 0 : performance.now();
    for (const [base, since] of this.sweepsDue) {
      const hb = base >>> 2;
      const empty = this.i32[hb + A_FREE_UNITS] === this.usableUnits;
      if (!this.arenas.includes(base) || (!empty && this.i32[hb + A_DIRTY_UNITS]! < this.sweepThreshold)) {
        this.sweepsDue.delete(base);
      } else if (force || now - since >= SWEEP_DELAY_MS) {
        this.sweepsDue.delete(base);
        // An arena still empty goes back to its region unless it is the agent's only empty one (the spare).
        if (empty && this.emptyArenas() > 1) this.releaseArena(base);
        else swept += this.sweep(base);
      }
    }
    return swept;
  }

  /** How many of this agent's arenas hold no slab. */
  private emptyArenas(): number {
    let n = 0;
    for (const a of this.arenas) if (this.i32[(a >>> 2) + A_FREE_UNITS] === this.usableUnits) n++;
    return n;
  }

  /** Decommits every dirty unit of the arena, run by run. Returns the units decommitted. */
  sweep(base: number): number {
    const swept = this.decommitMarked(base, A_DIRTY_BITS);
    this.i32[(base >>> 2) + A_DIRTY_UNITS] = 0;
    this.sweepsDue.delete(base);
    return swept;
  }

  /**
   * Decommits every run of units whose bit is set in the arena's bitmap at word `bits` (the dirty or the
   * retained one) and clears those bits. Returns the units decommitted.
   */
  private decommitMarked(base: number, bits: number): number {
    const i32 = this.i32;
    const at = (base >>> 2) + bits;
    let done = 0;
    let u = HEADER_UNITS;
    while (u < this.units) {
      if ((i32[at + (u >>> 5)]! & (1 << (u & 31))) === 0) {
        u++;
        continue;
      }
      const start = u;
      while (u < this.units && (i32[at + (u >>> 5)]! & (1 << (u & 31))) !== 0) u++;
      clearBitRange(i32, at, start, u - start);
      this.space.decommit(base + (start << UNIT_SHIFT), (u - start) << UNIT_SHIFT);
      done += u - start;
    }
    return done;
  }

  /**
   * An arena of this agent has no slab left. It is released (or kept as the one spare, dirty units swept)
   * {@link SWEEP_DELAY_MS} later by {@link sweepDue}, if it is still empty then: an agent whose blocks all come
   * home together (a producer whose consumer frees everything it sent) empties its arena and carves the same
   * units again at once, and releasing or sweeping here made every one of them fault back in (measured on the
   * bench's producer-consumer: 248,006 page faults in one run, 265-306 arenas released per producer; docs/design/arena.md).
   */
  private arenaEmptied(base: number): void {
    if (this.inherited.size !== 0 && this.inherited.delete(base)) this.releaseArena(base);
    else this.sweepsDue.set(base, performance.now());
  }

  /** Gives an empty arena back to its region: its magic is cleared first so stale pointers are refused. */
  private releaseArena(base: number): void {
    const at = this.arenas.indexOf(base);
    if (at >= 0) this.arenas.splice(at, 1);
    const retained = this.i32[(base >>> 2) + A_RETAINED_UNITS]!;
    if (retained !== 0 && this.retention !== null) this.retention.unitsTaken(retained);
    Atomics.store(this.i32, (base >>> 2) + A_MAGIC, 0);
    this.regions.releaseArena(base);
  }

  // ---- idle return, detach, adoption, reap -------------------------------------------------------

  /**
   * What an idle agent gives back of its arenas: current slabs with nothing live are released, every dirty
   * unit is decommitted, and empty arenas go back to their regions but one spare (header pages only), or
   * all of them when `keepSpare` is false (an agent that leaves).
   */
  releaseIdle(keepSpare = true): void {
    for (let cls = 0; cls < CLASS_COUNT; cls++) {
      const s = this.current[cls]!;
      if (s === 0) continue;
      const base = (s & this.arenaMask) >>> 0;
      const u = (s - base) >>> UNIT_SHIFT;
      const ri = recordIndex(base, u);
      if (this.i32[ri + R_LIVE] !== 0) continue;
      this.current[cls] = 0;
      this.i32[ri + R_INFO] &= ~FLAG_CURRENT;
      this.releaseSlab(base, u, this.i32[ri + R_SPAN]!, false);
    }
    for (const base of [...this.arenas]) if (this.arenas.includes(base)) this.sweep(base);
    const i32 = this.i32;
    const empty = this.arenas.filter((a) => i32[(a >>> 2) + A_FREE_UNITS] === this.usableUnits);
    for (let i = keepSpare ? 1 : 0; i < empty.length; i++) this.releaseArena(empty[i]!);
  }

  /**
   * Hands this agent's arenas over for adoption: its current slabs stop being current (empty ones are
   * released, ones with room go onto their partial lists), and its owner slot and agent area are marked
   * detached. Chains, cache and inbox must already be flushed and drained by the caller.
   *
   * A free may reach an inbox of this agent (its own, or one of a slot it took over) after the last drain and
   * before the slot reads detached. So after marking it, the inboxes are read once more: if one holds a batch,
   * the slot is taken back (a CAS from detached to live; failing it means another agent has already taken the
   * slot over, and with it the batch), drained, and marked again. A flusher reads the state after its push,
   * so every batch is seen by this agent or by the one that takes the slot over (docs/design/arena.md).
   */
  detachOwner(): void {
    for (let cls = 0; cls < CLASS_COUNT; cls++) {
      const s = this.current[cls]!;
      if (s === 0) continue;
      this.current[cls] = 0;
      const base = (s & this.arenaMask) >>> 0;
      const u = (s - base) >>> UNIT_SHIFT;
      const ri = recordIndex(base, u);
      this.i32[ri + R_INFO] &= ~FLAG_CURRENT;
      const live = this.i32[ri + R_LIVE]!;
      if (live === 0) this.releaseSlab(base, u, this.i32[ri + R_SPAN]!, false);
      else if (this.u32[ri + R_FREE] !== 0 || this.u32[ri + R_BUMP]! + (32 << cls) <= s + (this.i32[ri + R_SPAN]! << UNIT_SHIFT)) {
        this.pushPartial(base, s, cls);
      }
    }
    Atomics.store(this.i32, (this.agentArea >>> 2) + G_STATE, AGENT_DETACHED);
    while (this.slot !== 0) {
      this.registry.setSlotState(this.slot, SLOT_DETACHED);
      this.registry.noteDeparture();
      if (!this.inboxesHoldBatches()) break;
      if (this.registry.casSlotState(this.slot, SLOT_DETACHED, SLOT_LIVE) !== SLOT_DETACHED) break; // taken over
      this.drain();
      this.releaseIdle(false);
    }
    // Nothing of the area is needed any more (cache, chains and stash are empty): a grown chain map goes back,
    // and the area is left for the next agent that attaches.
    const map = this.mapWord << 2;
    if (map !== this.agentArea + INLINE_MAP_OFFSET) this.space.release(map, Math.ceil((this.mapCap * 8) / GRANULE) * GRANULE);
    vacateAgentArea(this.space, this.agentArea);
  }

  /**
   * Marks this agent as crashed (its thread is ending by an exception nobody caught, so its state may be
   * half-updated): it does not detach; any agent's idle visit, the next agent that needs memory or frees to
   * it, or the parent's `watch`, reaps it with every check. Nothing is called on it afterwards.
   */
  markCrashed(): void {
    this.detached = true;
    if (Atomics.compareExchange(this.i32, (this.agentArea >>> 2) + G_STATE, AGENT_LIVE, AGENT_CRASHED) !== AGENT_LIVE) return;
    if (this.slot !== 0) this.registry.casSlotState(this.slot, SLOT_LIVE, SLOT_ORPHANED);
    this.registry.noteDeparture();
  }

  /**
   * Agent ids of the agents that ran on the thread whose key is `thread` (see the platform's `threadKey`)
   * and have not left: live ones, and crashed ones not reaped yet.
   */
  agentsOnThread(thread: number): number[] {
    const ids: number[] = [];
    if (thread === 0) return ids;
    for (const area of agentAreas(this.space, this.regions.userWord(AGENT_LIST_WORD))) {
      const w = area >>> 2;
      const state = Atomics.load(this.i32, w + G_STATE);
      if (this.i32[w + G_THREAD] === thread && (state === AGENT_LIVE || state === AGENT_CRASHED)) ids.push(this.i32[w + G_AGENT_ID]!);
    }
    return ids;
  }

  /** Whether this agent's inbox, or that of a slot it took over, holds a batch. */
  private inboxesHoldBatches(): boolean {
    if (Atomics.load(this.i32, this.inbox) !== 0) return true;
    for (let i = 0; i < this.adopted.length; i++) {
      if (Atomics.load(this.i32, this.registry.inboxAddress(this.adopted[i]!) >>> 2) !== 0) return true;
    }
    return false;
  }

  /**
   * Adopts every owner slot that is detached or orphaned (its agent reaped): one CAS on the slot's state
   * claims it, then its arenas take this agent as owner and its inbox is drained with this agent's from now
   * on. Returns the slots adopted.
   */
  adoptOrphans(): number {
    const departures = this.registry.departures();
    if (departures === this.seenDepartures) return 0;
    this.seenDepartures = departures; // read first: a departure counted from here on is seen next time
    let adopted = 0;
    // Agents whose thread crashed: reaped (checked), whether or not they ever owned an arena.
    for (const area of agentAreas(this.space, this.regions.userWord(AGENT_LIST_WORD))) {
      if (area !== this.agentArea && Atomics.load(this.i32, (area >>> 2) + G_STATE) === AGENT_CRASHED) {
        if (this.reapArea(area)) adopted++;
      }
    }
    const count = this.registry.ownerCount();
    for (let slot = 1; slot <= count; slot++) {
      if (slot === this.slot) continue;
      const state = this.registry.slotState(slot);
      if (state === SLOT_DETACHED && this.adoptSlot(slot, state)) adopted++;
    }
    return adopted;
  }

  /**
   * Takes over owner slot `slot`, which left (state `state`, detached): one CAS on its state claims it,
   * then its arenas name this agent as owner, the slots it had taken over become this agent's, and its inbox
   * is drained with this agent's from now on. Arenas that are or become empty go back to their regions at
   * once. Returns false when another agent claimed it first.
   */
  private adoptSlot(slot: number, state: number): boolean {
    if (this.slot === 0) this.takeSlot();
    if (this.registry.casSlotState(slot, state, SLOT_ADOPTED | (this.slot << 8)) !== state) return false;
    this.adoptArenas(slot);
    this.adopted.push(slot);
    this.takeOverAdoptees(slot);
    this.drain();
    this.releaseInherited();
    return true;
  }

  /** Reaps the crashed agent whose area is `area` (see {@link reapAgent}); false when another agent got to it first. */
  private reapArea(area: number): boolean {
    const id = this.i32[(area >>> 2) + G_AGENT_ID]!;
    try {
      this.reapAgent(id);
      return true;
    } catch (err) {
      if (err instanceof RangeError) return false; // reaped meanwhile by another agent
      throw err;
    }
  }

  /**
   * Reaps the crashed agent that holds owner slot `slot`. Returns false when another agent is reaping it (or
   * has): the slot's state then moves on without this agent.
   */
  private reapOwner(slot: number): boolean {
    for (const area of agentAreas(this.space, this.regions.userWord(AGENT_LIST_WORD))) {
      if (this.i32[(area >>> 2) + G_OWNER_SLOT] === slot && area !== this.agentArea) {
        return Atomics.load(this.i32, (area >>> 2) + G_STATE) === AGENT_CRASHED && this.reapArea(area);
      }
    }
    return false;
  }

  /** Releases the inherited arenas that are empty now and sweeps the dirty units of the others. */
  private releaseInherited(): void {
    for (const base of [...this.inherited]) {
      if (!this.arenas.includes(base)) this.inherited.delete(base);
      else if (this.i32[(base >>> 2) + A_FREE_UNITS] === this.usableUnits) {
        this.inherited.delete(base);
        this.releaseArena(base);
      } else if (this.i32[(base >>> 2) + A_DIRTY_UNITS] !== 0) this.sweep(base);
    }
  }

  /**
   * The owner slot of the arena holding `p` (0: not in a laid-out arena). A block an agent was handed from
   * its thread cache may lie in another agent's arena: this names whose arena it is now.
   */
  arenaOwnerOf(p: number): number {
    if ((p >>> 0) !== p || !this.cover(p + 1)) return 0;
    const hb = ((p & this.arenaMask) >>> 0) >>> 2;
    if (Atomics.load(this.i32, hb + A_MAGIC) !== ARENA_MAGIC || (this.i32[hb + A_KIND_OWNER]! & 255) !== KIND_ARENA) return 0;
    return this.i32[hb + A_KIND_OWNER]! >>> 8;
  }

  /** The agent area of agent `agentId`, or 0. */
  areaOf(agentId: number): number {
    return findAgentArea(this.space, this.regions.userWord(AGENT_LIST_WORD), agentId);
  }

  /**
   * Takes over the slots that `from` had adopted (it is gone now): their inboxes may still receive frees
   * that other agents chained to those owners before any adoption, so someone live must keep draining
   * them. Their arenas already name `from`, and were rewritten with its own.
   */
  private takeOverAdoptees(from: number): void {
    const count = this.registry.ownerCount();
    const theirs = SLOT_ADOPTED | (from << 8);
    for (let slot = 1; slot <= count; slot++) {
      if (slot === this.slot || this.registry.slotState(slot) !== theirs) continue;
      if (this.registry.casSlotState(slot, theirs, SLOT_ADOPTED | (this.slot << 8)) === theirs) this.adopted.push(slot);
    }
  }

  /** Owner slots this agent adopted. */
  adoptedSlots(): readonly number[] {
    return this.adopted;
  }

  private takeSlot(): void {
    this.slot = this.registry.takeOwnerSlot();
    this.inbox = this.registry.inboxAddress(this.slot) >>> 2;
    Atomics.store(this.i32, (this.agentArea >>> 2) + G_OWNER_SLOT, this.slot);
  }

  /**
   * Takes over every arena owned by `slot`: retained units are decommitted (their ledger is gone). They are
   * inherited (see {@link inherited}) until this agent allocates from them.
   */
  private adoptArenas(slot: number): number {
    let n = 0;
    for (const base of this.regions.carvedArenas()) {
      if (!this.cover(base + (HEADER_UNITS << UNIT_SHIFT))) continue;
      const hb = base >>> 2;
      if (Atomics.load(this.i32, hb + A_MAGIC) !== ARENA_MAGIC || this.i32[hb + A_KIND_OWNER] !== (KIND_ARENA | (slot << 8))) continue;
      Atomics.store(this.i32, hb + A_KIND_OWNER, KIND_ARENA | (this.slot << 8));
      this.dropRetained(base);
      this.arenas.push(base);
      this.inherited.add(base);
      n++;
    }
    return n;
  }

  /** Decommits the arena's retained units and zeroes their count; returns how many there were. */
  private dropRetained(base: number): number {
    if (this.i32[(base >>> 2) + A_RETAINED_UNITS] === 0) return 0;
    const dropped = this.decommitMarked(base, A_RETAINED_BITS);
    this.i32[(base >>> 2) + A_RETAINED_UNITS] = 0;
    return dropped;
  }

  /**
   * Recovers an agent that died without detaching (a terminated or crashed worker), found by its agent id:
   * its arenas are checked slab by slab (a slab it left half-updated is quarantined, never trusted), then
   * adopted; the blocks in its thread cache and its pending chains are checked and sent home; its inbox
   * is drained with this agent's from now on. Its stashed mappings are the large tier's to release.
   * @throws RangeError when no such agent exists, it is this agent, or it was already detached or reaped.
   */
  reapAgent(agentId: number, releaseLive = false): ReapReport {
    const listHead = this.regions.userWord(AGENT_LIST_WORD);
    const area = findAgentArea(this.space, listHead, agentId);
    if (area === 0) throw new RangeError(`no agent ${agentId} has attached to this heap`);
    if (area === this.agentArea) throw new RangeError('an agent cannot reap itself');
    this.sync();
    const aw = area >>> 2;
    const was = Atomics.load(this.i32, aw + G_STATE);
    if ((was !== AGENT_LIVE && was !== AGENT_CRASHED) || Atomics.compareExchange(this.i32, aw + G_STATE, was, AGENT_REAPED) !== was) {
      throw new RangeError(`agent ${agentId} is not live (it detached or was reaped already)`);
    }
    if (this.slot === 0) this.takeSlot();
    const report: ReapReport = {
      agentId,
      ownerSlot: 0,
      arenasAdopted: 0,
      cacheBlocks: 0,
      chainObjects: 0,
      lostBlocks: 0,
      quarantinedBytes: 0,
      liveBlocksReleased: 0,
      drainedObjects: 0,
    };
    // A region it was opening, or an arena it was laying out, when it died: list or release them.
    const opening = this.u32[aw + G_OPENING_REGION]!;
    if (opening !== 0 && this.regions.recoverRegion(opening) === 'pushed') this.releaseUnlaidArena(opening + this.arenaBytes);
    const openingArena = this.u32[aw + G_OPENING_ARENA]!;
    if (openingArena !== 0) this.releaseUnlaidArena(openingArena);
    this.u32[aw + G_OPENING_REGION] = 0;
    this.u32[aw + G_OPENING_ARENA] = 0;
    const dead = this.i32[aw + G_OWNER_SLOT]!;
    const quarantinedBefore = this.quarantinedBytes;
    let adoptedNow: number[] = [];
    let tookSlot = false;
    if (dead !== 0 && dead !== this.slot && dead <= this.registry.ownerCount()) {
      report.ownerSlot = dead;
      for (const base of this.regions.carvedArenas()) {
        if (!this.cover(base + (HEADER_UNITS << UNIT_SHIFT))) continue;
        const hb = base >>> 2;
        if (Atomics.load(this.i32, hb + A_MAGIC) === ARENA_MAGIC && this.i32[hb + A_KIND_OWNER] === (KIND_ARENA | (dead << 8))) {
          this.repairArena(base);
        }
      }
      const slotWas = this.registry.slotState(dead); // live, or orphaned when its thread crashed
      if ((slotWas === SLOT_LIVE || slotWas === SLOT_ORPHANED) && this.registry.casSlotState(dead, slotWas, SLOT_ADOPTED | (this.slot << 8)) === slotWas) {
        const before = new Set(this.arenas);
        report.arenasAdopted = this.adoptArenas(dead);
        this.adopted.push(dead);
        this.takeOverAdoptees(dead);
        tookSlot = true;
        this.registry.noteDeparture(); // its slot is no longer live: flushers look at it again
        // Only the arenas it carved: those it had taken over from agents that left hold blocks others may hold.
        if (releaseLive) adoptedNow = this.arenas.filter((a) => !before.has(a) && this.i32[(a >>> 2) + A_CARVER] === dead);
      }
      for (const s of this.repairedEmpties) {
        const base = (s & this.arenaMask) >>> 0;
        const u = (s - base) >>> UNIT_SHIFT;
        const ri = recordIndex(base, u);
        const info = this.i32[ri + R_INFO]!;
        if (!this.arenas.includes(base) || this.i32[ri + R_LIVE] !== 0 || (info & (FLAG_QUARANTINE | FLAG_CURRENT | FLAG_PARTIAL)) !== 0) continue;
        this.releaseSlab(base, u, this.i32[ri + R_SPAN]!, ((info >>> CLASS_SHIFT) & CLASS_MASK) === LARGE_CLASS);
      }
      this.repairedEmpties = [];
      // A drain it was in the middle of: the runs it had taken from its inbox and not reclaimed yet.
      if (tookSlot) report.drainedObjects = this.resumeDrain(area);
    }
    // The cache: every entry must still look like a freed block, or it is left alone.
    for (let c = 0; c < CLASS_COUNT; c++) {
      const n = Math.min(this.u32[aw + G_CACHE_COUNT + c]!, this.u32[aw + G_CACHE_DEPTH + c]!, CACHE_STRIDE);
      for (let i = 0; i < n; i++) {
        const p = this.u32[((area + CACHE_STACKS_OFFSET) >>> 2) + c * CACHE_STRIDE + i]!;
        if (this.isHeldFreed(p)) {
          this.freeValidated(p);
          report.cacheBlocks++;
        } else report.lostBlocks++;
      }
      this.u32[aw + G_CACHE_COUNT + c] = 0;
    }
    // A chain it was flushing when it died: its objects are in the scratch, the runs not pushed (the push
    // and the phase reset follow each other with no point between where an agent can be stopped).
    const flushing = Atomics.load(this.i32, aw + G_FLUSH_PHASE) === 1;
    const flushOwner = this.i32[aw + G_FLUSH_OWNER]!;
    const held: number[] = [];
    if (flushing) {
      const n = Math.min(this.i32[aw + G_FLUSH_COUNT]!, FLUSH_CAPACITY);
      for (let i = 0; i < n; i++) {
        const p = this.u32[((area + FLUSH_OFFSET) >>> 2) + i]!;
        // Its words may already hold run links: only its slab is checked, not its freed mark.
        if (this.isLiveObject(p)) held.push(p);
        else report.lostBlocks++;
      }
    }
    // The chains: walk each to its end (the count may lag the head by one), stopping at the first node
    // that fails a check. The chain being flushed is in the scratch instead.
    const mapCap = this.i32[aw + G_MAP_CAP]!;
    const map = this.u32[aw + G_MAP_ADDR]!;
    if (mapCap >= INLINE_MAP_OWNERS && mapCap <= 1 << 24 && this.cover(map + mapCap * 8)) {
      for (let o = 1; o < mapCap; o++) {
        const e = (map >>> 2) + 2 * o;
        let p = this.u32[e]!;
        if (!(flushing && o === flushOwner)) {
          for (let k = 0; k <= CHAIN_FLUSH && p !== 0; k++) {
            if (!this.isHeldFreed(p)) {
              report.lostBlocks++;
              break;
            }
            const next = this.u32[p >>> 2]!;
            held.push(p);
            p = next;
          }
        }
        this.u32[e] = 0;
        this.u32[e + 1] = 0;
      }
      if (map !== area + INLINE_MAP_OFFSET && map % GRANULE === 0 && this.space.isReserved(map, mapCap * 8)) {
        this.space.release(map, Math.ceil((mapCap * 8) / GRANULE) * GRANULE); // its grown chain map
      }
    }
    if (adoptedNow.length !== 0) {
      // Its cache and chains went home first (into these very arenas, mostly); now drop what is still live.
      for (const base of adoptedNow) if (this.arenas.includes(base)) report.liveBlocksReleased += this.releaseEverything(base);
    }
    // A cached block it was sending home when it died: off the cache, maybe not yet on a chain or free list.
    const routing = this.u32[aw + G_ROUTING]!;
    if (routing !== 0 && !held.includes(routing) && this.isHeldFreed(routing) && !this.onFreeList(routing)) held.push(routing);
    this.u32[aw + G_ROUTING] = 0;
    for (const p of held) this.freeValidated(p);
    report.chainObjects = held.length;
    this.flushChains();
    this.drain();
    if (this.onReaped !== null) this.onReaped(area);
    // Whatever of its arenas is empty now goes back to the regions; the rest goes as its blocks are freed.
    this.releaseInherited();
    // The dead agent's area keeps its header page (the agent list runs through it); the rest goes back, and a
    // new agent may lay it out again.
    vacateAgentArea(this.space, area);
    report.quarantinedBytes = this.quarantinedBytes - quarantinedBefore;
    return report;
  }

  /**
   * Releases every slab of an adopted arena that is not quarantined, live objects included; the arena goes
   * back to its region when nothing is quarantined in it. Returns the live objects dropped.
   */
  private releaseEverything(base: number): number {
    const i32 = this.i32;
    let dropped = 0;
    let quarantined = false;
    for (let u = HEADER_UNITS; u < this.units; ) {
      if (this.arenas.indexOf(base) < 0) break; // the arena itself went back with its last slab
      const ri = recordIndex(base, u);
      const info = i32[ri + R_INFO]!;
      if ((info & STATE_MASK) !== STATE_HEAD) {
        u++;
        continue;
      }
      const span = i32[ri + R_SPAN]!;
      if ((info & FLAG_QUARANTINE) !== 0) {
        quarantined = true;
        u += span;
        continue;
      }
      dropped += i32[ri + R_LIVE]!;
      const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
      if ((info & FLAG_PARTIAL) !== 0) this.unlinkPartial(base, base + (u << UNIT_SHIFT), cls);
      i32[ri + R_LIVE] = 0;
      this.releaseSlab(base, u, span, false);
      u += span;
    }
    return dropped;
  }

  /** Releases a carved arena that nobody laid out (no magic): a dead agent carved it and died. */
  private releaseUnlaidArena(base: number): void {
    if (base % this.arenaBytes !== 0 || !this.regions.isCarved(base)) return;
    if (this.cover(base + 16) && Atomics.load(this.i32, (base >>> 2) + A_MAGIC) === ARENA_MAGIC) return;
    this.regions.releaseArena(base);
  }

  /** Whether `p` is on its slab's free list (a bounded walk). */
  private onFreeList(p: number): boolean {
    const base = (p & this.arenaMask) >>> 0;
    const ri = recordIndex(base, (p - base) >>> UNIT_SHIFT);
    let steps = 0;
    for (let q = this.u32[ri + R_FREE]!; q !== 0 && steps < 1024; q = this.u32[q >>> 2]!, steps++) if (q === p) return true;
    return false;
  }

  /** Whether `p` looks like a block held freed (in a cache or chain): in a live slab, aligned, marked. */
  private isHeldFreed(p: number): boolean {
    return this.isLiveObject(p) && this.i32[(p >>> 2) + 1] === (FREED_MARK ^ p);
  }

  /** Whether `p` is an object of a slab (small or large) with live objects: in an arena, in a head unit, aligned, below the bump. */
  private isLiveObject(p: number): boolean {
    if ((p >>> 0) !== p || (p & 31) !== 0 || p === 0 || !this.cover(p + 8)) return false;
    const base = (p & this.arenaMask) >>> 0;
    const hb = base >>> 2;
    const u = (p - base) >>> UNIT_SHIFT;
    if (this.i32[hb + A_MAGIC] !== ARENA_MAGIC || (this.i32[hb]! & 255) !== KIND_ARENA || u < HEADER_UNITS) return false;
    const ri = recordIndex(base, u);
    const info = this.i32[ri + R_INFO]!;
    const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
    return (
      (info & STATE_MASK) === STATE_HEAD &&
      (cls < CLASS_COUNT || cls === LARGE_CLASS) &&
      ((p - base - (u << UNIT_SHIFT)) & ((32 << cls) - 1)) === 0 &&
      this.i32[ri + R_LIVE]! > 0 &&
      p < this.u32[ri + R_BUMP]!
    );
  }

  /**
   * Makes a dead agent's arena trustworthy before adoption. The bitmaps are the truth for which units are
   * used. Every slab is checked as `check()` would; one that fails (or a used unit with no head) is
   * quarantined: flagged, kept out of every list, never allocated from or released. Then the header's
   * counts, hint and run bound are recomputed, current flags cleared, partial lists rebuilt, and healthy
   * slabs with nothing live released.
   */
  private repairArena(base: number): void {
    const i32 = this.i32;
    const u32 = this.u32;
    const hb = base >>> 2;
    for (let cls = 0; cls < CLASS_COUNT; cls++) u32[hb + A_PARTIAL + cls] = 0;
    const empties: number[] = [];
    let quarantinedArena = false;
    for (let u = HEADER_UNITS; u < this.units; ) {
      const used = (i32[hb + A_UNIT_BITS + (u >>> 5)]! & (1 << (u & 31))) !== 0;
      const ri = recordIndex(base, u);
      if (!used || (i32[ri + R_INFO]! & STATE_MASK) === STATE_FREE) {
        // A used bit with a free record: a slab reservation cut short before it handed anything out. The
        // unit may already be committed, so it is freed as dirty (the next sweep decommits it).
        if (used) {
          i32[hb + A_UNIT_BITS + (u >>> 5)] &= ~(1 << (u & 31));
          i32[hb + A_DIRTY_BITS + (u >>> 5)] |= 1 << (u & 31);
        }
        i32[ri + R_INFO] = STATE_FREE;
        u++;
        continue;
      }
      const span = this.slabSpanIfHealthy(base, u);
      if (span === 0) {
        // A used unit that does not start a consistent slab: quarantine it alone.
        i32[ri + R_INFO] = STATE_HEAD | FLAG_QUARANTINE;
        i32[ri + R_SPAN] = 1;
        u32[ri + R_PNEXT] = 0;
        u32[ri + R_PPREV] = 0;
        // The arena's header stays committed for as long as anything in it is quarantined: count it once.
        if (!quarantinedArena) this.quarantinedBytes += HEADER_UNITS << UNIT_SHIFT;
        quarantinedArena = true;
        this.quarantinedBytes += UNIT;
        u++;
        continue;
      }
      const info = (i32[ri + R_INFO]! & ~(FLAG_CURRENT | FLAG_PARTIAL)) >>> 0;
      i32[ri + R_INFO] = info;
      const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
      const live = i32[ri + R_LIVE]!;
      if ((info & FLAG_QUARANTINE) === 0 && live === 0) empties.push(u);
      else if (cls < CLASS_COUNT && (info & FLAG_QUARANTINE) === 0) {
        const s = base + (u << UNIT_SHIFT);
        const capacity = (span << UNIT_SHIFT) / (32 << cls);
        if (live < capacity && (u32[ri + R_FREE] !== 0 || u32[ri + R_BUMP]! < s + (span << UNIT_SHIFT))) this.pushPartial(base, s, cls);
      }
      u += span;
    }
    let free = 0;
    let dirty = 0;
    let longest = 0;
    let run = 0;
    for (let u = HEADER_UNITS; u < this.units; u++) {
      const bit = 1 << (u & 31);
      const w = u >>> 5;
      if ((i32[hb + A_UNIT_BITS + w]! & bit) !== 0) {
        i32[hb + A_DIRTY_BITS + w] &= ~bit;
        i32[hb + A_RETAINED_BITS + w] &= ~bit;
        run = 0;
        continue;
      }
      free++;
      if (++run > longest) longest = run;
      // A free unit may still be committed (a release cut short): mark it dirty so the sweep makes sure.
      if ((i32[hb + A_RETAINED_BITS + w]! & bit) === 0) i32[hb + A_DIRTY_BITS + w] |= bit;
      if ((i32[hb + A_DIRTY_BITS + w]! & bit) !== 0) dirty++;
    }
    i32[hb + A_FREE_UNITS] = free;
    i32[hb + A_DIRTY_UNITS] = dirty;
    i32[hb + A_RUN_BOUND] = longest;
    i32[hb + A_HINT] = HEADER_UNITS;
    let retained = 0;
    for (let u = HEADER_UNITS; u < this.units; u++) if ((i32[hb + A_RETAINED_BITS + (u >>> 5)]! & (1 << (u & 31))) !== 0) retained++;
    i32[hb + A_RETAINED_UNITS] = retained;
    this.repairedEmpties.push(...empties.map((u) => base + (u << UNIT_SHIFT)));
  }

  /** Empty slabs found by repairs, released once their arena is adopted. */
  private repairedEmpties: number[] = [];

  /** The span of the slab whose head is unit `u` if its record is consistent, else 0. */
  private slabSpanIfHealthy(base: number, u: number): number {
    const i32 = this.i32;
    const u32 = this.u32;
    const hb = base >>> 2;
    const ri = recordIndex(base, u);
    const info = i32[ri + R_INFO]!;
    if ((info & STATE_MASK) !== STATE_HEAD || (info & FLAG_QUARANTINE) !== 0) return (info & FLAG_QUARANTINE) !== 0 ? i32[ri + R_SPAN]! : 0;
    const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
    const span = i32[ri + R_SPAN]!;
    if (span < 1 || u + span > this.units) return 0;
    const s0 = base + (u << UNIT_SHIFT);
    if (i32[ri + R_LIVE] === 0 && u32[ri + R_FREE] === 0 && u32[ri + R_BUMP] === s0 && (cls === LARGE_CLASS || (cls < CLASS_COUNT && span === spanOf(cls)))) {
      // Never handed anything out (a reservation cut short): whatever its continuations say, it is empty.
      for (let k = 0; k < span; k++) {
        i32[hb + A_UNIT_BITS + ((u + k) >>> 5)] |= 1 << ((u + k) & 31);
        if (k > 0) {
          const rk = recordIndex(base, u + k);
          i32[rk + R_INFO] = STATE_CONT;
          i32[rk + R_SPAN] = k;
        }
      }
      if (cls === LARGE_CLASS) u32[ri + R_SIZE] = Math.max(u32[ri + R_SIZE]!, MAX_CLASS_SIZE + LARGE_ROUND);
      return span;
    }
    for (let k = 0; k < span; k++) {
      if ((i32[hb + A_UNIT_BITS + ((u + k) >>> 5)]! & (1 << ((u + k) & 31))) === 0) return 0;
      if (k > 0) {
        const rk = recordIndex(base, u + k);
        if ((i32[rk + R_INFO]! & STATE_MASK) !== STATE_CONT || i32[rk + R_SPAN] !== k) return 0;
      }
    }
    const s = base + (u << UNIT_SHIFT);
    const end = s + (span << UNIT_SHIFT);
    const bump = u32[ri + R_BUMP]!;
    const live = i32[ri + R_LIVE]!;
    if (cls === LARGE_CLASS) {
      const bytes = u32[ri + R_SIZE]!;
      return bytes > MAX_CLASS_SIZE && span === Math.ceil(bytes / UNIT) && live === 1 && bump === s + bytes && u32[ri + R_FREE] === 0 ? span : 0;
    }
    if (cls >= CLASS_COUNT || span !== spanOf(cls)) return 0;
    const size = 32 << cls;
    if (bump < s || bump > end || (bump - s) % size !== 0) return 0;
    const capacity = (span << UNIT_SHIFT) / size;
    let listed = 0;
    for (let p = u32[ri + R_FREE]!; p !== 0; p = u32[p >>> 2]!) {
      if (p < s || p >= bump || ((p - s) & (size - 1)) !== 0 || ++listed > capacity) return 0;
    }
    return live >= 0 && live + listed + (end - bump) / size === capacity ? span : 0;
  }

  /** Decommits every retained unit of this agent's arenas; returns the units given back. */
  purgeRetained(): number {
    let purged = 0;
    for (const base of this.arenas) purged += this.dropRetained(base);
    return purged;
  }

  // ---- partial lists and flags -------------------------------------------------------------------

  private pushPartial(base: number, s: number, cls: number): void {
    const u32 = this.u32;
    const hi = (base >>> 2) + A_PARTIAL + cls;
    const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT);
    const head = u32[hi]!;
    u32[ri + R_PNEXT] = head;
    u32[ri + R_PPREV] = 0;
    if (head !== 0) u32[recordIndex(base, (head - base) >>> UNIT_SHIFT) + R_PPREV] = s;
    u32[hi] = s;
    this.i32[ri + R_INFO] |= FLAG_PARTIAL;
  }

  private unlinkPartial(base: number, s: number, cls: number): void {
    const u32 = this.u32;
    const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT);
    const next = u32[ri + R_PNEXT]!;
    const prev = u32[ri + R_PPREV]!;
    if (prev !== 0) u32[recordIndex(base, (prev - base) >>> UNIT_SHIFT) + R_PNEXT] = next;
    else u32[(base >>> 2) + A_PARTIAL + cls] = next;
    if (next !== 0) u32[recordIndex(base, (next - base) >>> UNIT_SHIFT) + R_PPREV] = prev;
    u32[ri + R_PNEXT] = 0;
    u32[ri + R_PPREV] = 0;
    this.i32[ri + R_INFO] &= ~FLAG_PARTIAL;
  }

  private setFlags(s: number, set: number, clear: number): void {
    const base = (s & this.arenaMask) >>> 0;
    const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT);
    const i32 = this.i32;
    i32[ri + R_INFO] = (i32[ri + R_INFO]! & ~clear) | set;
  }

  private corruptLink(p: number, next: number, s: number): never {
    throw new HeapError(
      'CORRUPTION',
      `free list of the slab at ${formatAddress(s)} is corrupted: ${formatAddress(p)} links to ${formatAddress(next)}`,
      p,
    );
  }

  // ---- inspection --------------------------------------------------------------------------------

  /** Objects waiting in this agent's chains. */
  pendingChainObjects(): number {
    let n = 0;
    for (let o = 0; o < this.mapCap; o++) n += this.u32[this.mapWord + 2 * o + 1]!;
    return n;
  }

  /** This agent's arenas, counted. */
  stats(): ArenaStats {
    const perClass: ClassStats[] = [];
    for (let c = 0; c < CLASS_COUNT; c++) perClass.push({ size: 32 << c, slabs: 0, live: 0, free: 0 });
    const i32 = this.i32;
    let used = 0;
    let dirty = 0;
    let retained = 0;
    let largeObjects = 0;
    let largeBytes = 0;
    let liveBytes = 0;
    for (const base of this.arenas) {
      const hb = base >>> 2;
      used += this.usableUnits - i32[hb + A_FREE_UNITS]!;
      dirty += i32[hb + A_DIRTY_UNITS]!;
      retained += i32[hb + A_RETAINED_UNITS]!;
      for (let u = HEADER_UNITS; u < this.units; u++) {
        const ri = recordIndex(base, u);
        const info = i32[ri + R_INFO]!;
        if ((info & STATE_MASK) !== STATE_HEAD || (info & FLAG_QUARANTINE) !== 0) continue;
        const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
        const live = i32[ri + R_LIVE]!;
        if (cls === LARGE_CLASS) {
          largeObjects += live;
          largeBytes += live * this.u32[ri + R_SIZE]!;
          liveBytes += live * this.u32[ri + R_SIZE]!;
          continue;
        }
        const size = 32 << cls;
        const cap = (i32[ri + R_SPAN]! << UNIT_SHIFT) / size;
        const c = perClass[cls]!;
        c.slabs++;
        c.live += live;
        c.free += cap - live;
        liveBytes += live * size;
      }
    }
    return {
      ownerSlot: this.slot,
      arenas: this.arenas.length,
      liveBytes,
      usedUnits: used,
      dirtyUnits: dirty,
      retainedUnits: retained,
      largeObjects,
      largeBytes,
      pendingChainObjects: this.pendingChainObjects(),
      quarantinedBytes: this.quarantinedBytes,
      perClass,
    };
  }

  /**
   * Walks every arena this agent owns and validates its invariants: header, bitmaps and counts, unit
   * records, every free list (inside its slab, aligned, below the bump, no cycle), live counts, partial
   * lists and the current slabs. Other agents' arenas get the header checks their owners cannot race with.
   * @throws HeapError CORRUPTION naming the first broken invariant.
   */
  check(): void {
    for (const base of this.regions.carvedArenas()) {
      if (!this.cover(base + 64)) continue; // carved elsewhere, header not committed yet
      const i32 = this.i32;
      const hb = base >>> 2;
      const magic = Atomics.load(i32, hb + A_MAGIC);
      if (magic === 0) continue; // being laid out, or not an arena of this tier
      if (magic !== ARENA_MAGIC) throw corrupt(base, `bad magic ${magic}`);
      if ((i32[hb + A_KIND_OWNER]! & 255) !== KIND_ARENA) throw corrupt(base, 'bad kind');
      if (i32[hb + A_UNITS] !== this.units) throw corrupt(base, `unit count ${i32[hb + A_UNITS]}`);
    }
    for (const base of this.arenas) this.checkArena(base);
    for (let cls = 0; cls < CLASS_COUNT; cls++) {
      const s = this.current[cls]!;
      if (s === 0) continue;
      const base = (s & this.arenaMask) >>> 0;
      const info = this.i32[recordIndex(base, (s - base) >>> UNIT_SHIFT) + R_INFO]!;
      if ((info & FLAG_CURRENT) === 0 || ((info >>> CLASS_SHIFT) & CLASS_MASK) !== cls || (info & STATE_MASK) !== STATE_HEAD) {
        throw corrupt(s, `current slab of class ${cls} has info ${info}`);
      }
    }
  }

  private checkArena(base: number): void {
    const i32 = this.i32;
    const u32 = this.u32;
    const hb = base >>> 2;
    if (i32[hb + A_MAGIC] !== ARENA_MAGIC) throw corrupt(base, 'own arena lost its magic');
    if (i32[hb + A_KIND_OWNER]! >>> 8 !== this.slot) throw corrupt(base, `owner ${i32[hb + A_KIND_OWNER]! >>> 8}, expected ${this.slot}`);
    let free = 0;
    let dirty = 0;
    let retained = 0;
    let longest = 0;
    let run = 0;
    for (let u = 0; u < this.units; u++) {
      const inUse = (i32[hb + A_UNIT_BITS + (u >>> 5)]! & (1 << (u & 31))) !== 0;
      const isDirty = (i32[hb + A_DIRTY_BITS + (u >>> 5)]! & (1 << (u & 31))) !== 0;
      const isRetained = (i32[hb + A_RETAINED_BITS + (u >>> 5)]! & (1 << (u & 31))) !== 0;
      if (u < HEADER_UNITS) {
        if (!inUse) throw corrupt(base, `header unit ${u} marked free`);
        continue;
      }
      const state = i32[recordIndex(base, u) + R_INFO]! & STATE_MASK;
      if (inUse === (state === STATE_FREE)) throw corrupt(base, `unit ${u}: bitmap says ${inUse ? 'used' : 'free'}, record state ${state}`);
      if (isDirty && inUse) throw corrupt(base, `unit ${u} is dirty and in use`);
      if (isRetained && (inUse || isDirty)) throw corrupt(base, `unit ${u} is retained and ${inUse ? 'in use' : 'dirty'}`);
      if (isRetained) retained++;
      if (!inUse) {
        free++;
        if (++run > longest) longest = run;
      } else run = 0;
      if (isDirty) dirty++;
    }
    if (free !== i32[hb + A_FREE_UNITS]) throw corrupt(base, `free units ${i32[hb + A_FREE_UNITS]}, counted ${free}`);
    if (dirty !== i32[hb + A_DIRTY_UNITS]) throw corrupt(base, `dirty units ${i32[hb + A_DIRTY_UNITS]}, counted ${dirty}`);
    if (retained !== i32[hb + A_RETAINED_UNITS]) throw corrupt(base, `retained units ${i32[hb + A_RETAINED_UNITS]}, counted ${retained}`);
    if (longest > i32[hb + A_RUN_BOUND]!) throw corrupt(base, `run bound ${i32[hb + A_RUN_BOUND]} below a free run of ${longest}`);
    const onPartial = new Set<number>();
    for (let cls = 0; cls < CLASS_COUNT; cls++) {
      let prev = 0;
      let steps = 0;
      for (let s = u32[hb + A_PARTIAL + cls]!; s !== 0; s = u32[recordIndex(base, (s - base) >>> UNIT_SHIFT) + R_PNEXT]!) {
        if ((s & this.arenaMask) >>> 0 !== base || ++steps > this.units) throw corrupt(base, `partial list of class ${cls} is broken at ${formatAddress(s)}`);
        const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT);
        const info = i32[ri + R_INFO]!;
        if ((info & FLAG_PARTIAL) === 0 || ((info >>> CLASS_SHIFT) & CLASS_MASK) !== cls || u32[ri + R_PPREV] !== prev) {
          throw corrupt(s, `partial slab of class ${cls} has inconsistent links or flags`);
        }
        onPartial.add(s);
        prev = s;
      }
    }
    for (let u = HEADER_UNITS; u < this.units; u++) {
      const ri = recordIndex(base, u);
      const info = i32[ri + R_INFO]!;
      if ((info & STATE_MASK) !== STATE_HEAD) continue;
      if ((info & FLAG_QUARANTINE) !== 0) {
        if (i32[ri + R_SPAN] !== 1 || (info & (FLAG_PARTIAL | FLAG_CURRENT)) !== 0) throw corrupt(base, `quarantined unit ${u} is on a list`);
        continue;
      }
      const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
      const span = i32[ri + R_SPAN]!;
      for (let k = 1; k < span; k++) {
        const rk = recordIndex(base, u + k);
        if ((i32[rk + R_INFO]! & STATE_MASK) !== STATE_CONT || i32[rk + R_SPAN] !== k) throw corrupt(base, `unit ${u + k}: bad continuation`);
      }
      const s = base + (u << UNIT_SHIFT);
      if (cls === LARGE_CLASS) {
        const bytes = u32[ri + R_SIZE]!;
        if (bytes <= MAX_CLASS_SIZE || bytes % LARGE_ROUND !== 0 || span !== Math.ceil(bytes / UNIT)) throw corrupt(s, `large block of ${bytes} bytes on ${span} units`);
        if (i32[ri + R_LIVE] !== 1 || u32[ri + R_BUMP] !== s + bytes || u32[ri + R_FREE] !== 0 || (info & (FLAG_CURRENT | FLAG_PARTIAL)) !== 0) {
          throw corrupt(s, 'large block record is inconsistent');
        }
        continue;
      }
      if (cls >= CLASS_COUNT || span !== spanOf(cls)) throw corrupt(base, `unit ${u}: span ${span} for class ${cls}`);
      const size = 32 << cls;
      const end = s + (span << UNIT_SHIFT);
      const bump = u32[ri + R_BUMP]!;
      if (bump < s || bump > end || (bump - s) % size !== 0) throw corrupt(s, `bump ${formatAddress(bump)} outside the slab`);
      const capacity = (span << UNIT_SHIFT) / size;
      let listed = 0;
      for (let p = u32[ri + R_FREE]!; p !== 0; p = u32[p >>> 2]!) {
        if (p < s || p >= bump || ((p - s) & (size - 1)) !== 0) throw corrupt(s, `free list member ${formatAddress(p)} is outside the slab or misaligned`);
        if (++listed > capacity) throw corrupt(s, 'free list has a cycle');
      }
      const live = i32[ri + R_LIVE]!;
      const unbumped = (end - bump) / size;
      if (live < 0 || live + listed + unbumped !== capacity) {
        throw corrupt(s, `live ${live} + free ${listed} + unbumped ${unbumped} != capacity ${capacity}`);
      }
      const partial = (info & FLAG_PARTIAL) !== 0;
      if (partial !== onPartial.has(s)) throw corrupt(s, 'partial flag does not match the partial list');
      if ((info & FLAG_CURRENT) !== 0 && this.current[cls] !== s) throw corrupt(s, 'marked current but is not');
      if (partial && (live === 0 || live === capacity)) throw corrupt(s, `on the partial list with ${live} of ${capacity} live`);
    }
  }
}

/** Sets bits [start, start + n) of the bitmap whose first word is `at`. */
function setBitRange(i32: Int32Array, at: number, start: number, n: number): void {
  for (let i = start, end = start + n; i < end; ) {
    const lo = i & 31;
    const hi = Math.min(32, lo + end - i);
    i32[at + (i >>> 5)] |= bitMask(lo, hi);
    i += hi - lo;
  }
}

/** Clears bits [start, start + n) of the bitmap at `at`; returns how many were set. */
function clearBitRange(i32: Int32Array, at: number, start: number, n: number): number {
  let cleared = 0;
  for (let i = start, end = start + n; i < end; ) {
    const lo = i & 31;
    const hi = Math.min(32, lo + end - i);
    const m = bitMask(lo, hi);
    const w = at + (i >>> 5);
    const old = i32[w]!;
    if ((old & m) !== 0) {
      cleared += popcount32(old & m);
      i32[w] = old & ~m;
    }
    i += hi - lo;
  }
  return cleared;
}


/**
 * The checks every free makes, as one pure function over a view so the heap's free can inline it: returns the
 * class (0-15, or 16 for a large object) of the live, not yet freed block at `p`, {@link IN_MAPPING}, or
 * {@link NOT_FREEABLE} for anything else (not a uint32, misaligned, past the view, no arena, a header, a free or
 * continuation unit, off the class grid, an empty slab, never handed out, or carrying the freed mark).
 * It reads and never writes; `arenaMask` is the heap's {@link ArenaHeap.arenaMask}.
 */
export function freeableClass(u32: Uint32Array, arenaMask: number, p: number): number {
  // Written out with plain constants (esbuild inlines them): a call to an exported helper or a computed
  // module constant would cost the inlined free a module-binding load and a check each.
  if ((p >>> 0) === p && (p & 31) === 0 && (p >>> 2) + 2 <= u32.length) {
    const base = (p & arenaMask) >>> 0;
    const hb = base >>> 2;
    const u = (p - base) >>> UNIT_SHIFT;
    // Both magics are below 2^31, so a Uint32Array reads them as they are written.
    if (u32[hb + A_MAGIC] === ARENA_MAGIC && (u32[hb + A_KIND_OWNER]! & 255) === KIND_ARENA && u >= HEADER_UNITS) {
      const ri = (base + UNIT + u * RECORD_BYTES) >>> 2; // recordIndex(base, u)
      const info = u32[ri + R_INFO]!;
      const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
      if (
        (info & STATE_MASK) === STATE_HEAD &&
        ((p - base - (u << UNIT_SHIFT)) & ((32 << cls) - 1)) === 0 &&
        (u32[ri + R_LIVE]! | 0) > 0 &&
        p < u32[ri + R_BUMP]! &&
        (u32[(p >>> 2) + 1]! | 0) !== (FREED_MARK ^ p)
      ) {
        return cls;
      }
    } else if (u32[hb + A_MAGIC] === MAPPING_MAGIC && (u32[hb + A_KIND_OWNER]! & 255) === KIND_MAPPING) {
      return IN_MAPPING;
    }
  }
  return NOT_FREEABLE;
}

/** Whether a sized free's `size` names the class recorded in `info`. */
function sizeMatches(size: number, info: number, largeBytes: number): boolean {
  if ((size >>> 0) !== size) return false;
  const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
  if (cls === LARGE_CLASS) return size > MAX_CLASS_SIZE && Math.ceil(size / LARGE_ROUND) * LARGE_ROUND === largeBytes;
  return size <= MAX_CLASS_SIZE && classIndex(size) === cls;
}

function badRun(tail: number, why: string): never {
  throw new HeapError('CORRUPTION', `inbox run at ${formatAddress(tail)}: ${why}`, tail);
}

function corrupt(at: number, why: string): HeapError {
  return new HeapError('CORRUPTION', `arena check failed at ${formatAddress(at)}: ${why}`, at);
}

function badSize(size: unknown): RangeError {
  const shown = typeof size === 'string' ? JSON.stringify(size) : String(size);
  return new RangeError(`size must be an integer from 0 to ${MAX_CLASS_SIZE} bytes, got ${shown}`);
}
