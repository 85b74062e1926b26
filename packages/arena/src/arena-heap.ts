/**
 * One agent's arena allocator: its state, and the hot paths over it. Owner allocation serves the current slab
 * of a class from its free list, then by bumping; a free is checked by one pure function, then pushed onto its
 * slab's free list (owner) or its owner's chain (anyone else). The rest lives in the files beside this one,
 * each a set of functions over this one state object (`h`):
 *
 * - refill.ts: a new current slab (drain, partial list, new slab, new arena); unit-map.ts: finding units;
 *   slab.ts: slab records, partial lists and flags
 * - free-check.ts: what a pointer is, and why a free is refused
 * - remote-chains.ts: cross-agent frees batched per owner and flushed; drain.ts: the owner taking them back
 * - release.ts: releasing slabs, sweeping dirty units, releasing arenas
 * - ownership.ts: owner slots, detach, adoption; reap.ts and repair.ts: recovering an agent that died
 * - check.ts: stats and the invariant walk
 *
 * A method that other layers call and whose work is a sibling's hands it to the function of the same name.
 * Owner-only fields (free list, bump, live count, partial links) are written only by the owning agent, so they
 * need no atomics; other agents reach an owner only through its inbox, one CAS per batch. See
 * docs/design/arena.md for the invariants.
 */
import { HeapError, formatAddress, threadKey, type AddressSpace } from '@paddock/platform';
import type { ResolvedProfile } from '@paddock/profile';
import type { Regions } from '@paddock/region';
import type { Registry } from '@paddock/registry';
import { AGENT_LIST_WORD, agentAreas, createAgentArea, findAgentArea } from './agent-area.js';
import { CACHE_STACKS_OFFSET, DRAIN_OFFSET, D_RUN, G_CACHE_COUNT, G_CACHE_DEPTH, G_OPENING_REGION, G_ROUTING } from './agent-layout.js';
import { pushCached } from './cache-stack.js';
import { check, stats, type ArenaStats } from './check.js';
import { TO_CACHE, drain } from './drain.js';
import { EXCHANGE_BATCH, EXCHANGE_CLASSES, EXCHANGE_WORD, emptyExchange, exchangeServes, giveToExchange } from './exchange.js';
import { freeableClass, locate, refuse, sizeMatches } from './free-check.js';
import { A_KIND_OWNER, FLAG_CURRENT, FLAG_QUARANTINE, FREED_MARK, IN_MAPPING, NOT_FREEABLE, R_BUMP, R_FREE, R_INFO, R_LIVE, R_SIZE, R_SPAN, UNIT_SHIFT, arenaMeta, headerIndex, metaCommitBytes, recordIndex } from './layout.js';
import { adoptOrphans, agentsOnThread, arenaOwnerOf, detachOwner, markCrashed } from './ownership.js';
import { reapAgent, type ReapReport } from './reap.js';
import { allocLarge, allocSlow } from './refill.js';
import { purgeRetained, releaseIdle, sweepDue, type SpanRetention } from './release.js';
import { RemoteChains } from './remote-chains.js';
import { EmptySlabs } from './empty-slabs.js';
import { CLASS_COUNT, MAX_CLASS_SIZE, badSize, classIndex } from './size-class.js';
import { objectSize, slabFreed } from './slab.js';

export class ArenaHeap {
  // V8 lays fields out in the order they are first assigned: the initialized fields below first, in this order,
  // then the constructor's. Keep the fields the hot paths read where they are; add new ones at the end.
  readonly space: AddressSpace;
  readonly regions: Regions;
  readonly registry: Registry;
  /** Bytes per arena (a power of two). */
  readonly arenaBytes: number;
  /** Units per arena. */
  readonly units: number;
  /** Units a slab may use: all of them (`units`; the header and records live in the region's slot 0). */
  readonly usableUnits: number;
  /** A released class slab of at least this many units is decommitted at once. */
  decommitSpan: number;
  /** Dirty units in an arena that trigger a sweep. */
  sweepThreshold: number;
  /** This agent's owner slot; 0 until it carves its first arena. */
  slot = 0;
  /** Keeps freed large units committed within a budget (set by the large tier); null retains nothing. */
  retention: SpanRetention | null = null;
  /** Largest large object: the whole arena. */
  readonly largeMax: number;
  /** @internal Int32 index of this agent's inbox head word (valid once `slot` is set). */
  inbox = 0;
  /** @internal Uint32 index of the head of this agent's queue of batches taken and not begun (see drain.ts). */
  drainQueue = 0;
  /** This agent's views of the buffer, kept here so the hot paths load them with one read. */
  /** @internal this agent's Int32 view (refreshed through `cover`); for the layers above. */
  i32: Int32Array;
  /** @internal this agent's Uint32 view. */
  u32: Uint32Array;
  /** Bytes the views above reach; an address past them goes through {@link cover}. */
  private viewBytes = 0;

  /** `p & arenaMask` is the base of the arena holding `p` (before `>>> 0`). */
  readonly arenaMask: number;
  /** @internal the current slab of each class (0: none). */
  readonly current = new Uint32Array(CLASS_COUNT);
  /** @internal this agent's arenas, oldest first; new slabs come from the newest. */
  readonly arenas: number[] = [];
  /** This agent's area in the buffer (cache, chain map, stash: what a reaper must reach). */
  readonly agentArea: number;
  /** @internal owner slots this agent adopted: their inboxes are drained with its own. */
  readonly adopted: number[] = [];
  /** Bytes of quarantined slabs in this agent's arenas. */
  quarantinedBytes = 0;
  /** Set once the agent has detached: it may no longer take memory. */
  detached = false;
  /** @internal arenas whose dirty units reached the sweep threshold, with the time they did (ms). */
  readonly sweepsDue = new Map<number, number>();
  /** @internal this agent's pending frees of other owners' objects (the chain map in its area), and their flush. */
  readonly chains: RemoteChains;
  /**
   * @internal arenas this agent adopted from an agent that left and has not allocated from since: a slab
   * released in one is decommitted at once and the arena goes back to its region as soon as it is empty, because
   * nobody is about to reuse them (the sweep delay is for an owner's own churn).
   */
  readonly inherited: Set<number>;
  /** @internal the registry's departure count when this agent last looked for owners to take over. */
  seenDepartures: number;
  /**
   * Called with a dead agent's area once {@link reapAgent} has recovered its arenas, cache and chains (the
   * large tier releases its stashed mappings); set by the layer above.
   */
  onReaped: ((area: number) => void) | null;
  /** @internal empty slabs kept for the next refill of their class (see empty-slabs.ts). */
  readonly emptySlabs: EmptySlabs;
  /** @internal refills so far (the refill path looks for due sweeps every few: see refill.ts). */
  refills: number;
  /** @internal Int32 index of the heap's exchange (0: the heap has none; see exchange.ts). */
  readonly exchangeWord: number;
  /** @internal this agent's mark on an exchange slot it holds: its agent id shifted left by 2. */
  readonly exchangeTag: number;
  /**
   * @internal per exchange class: the slot after the last one this agent gave to, then (from index
   * EXCHANGE_CLASSES) the slot after the last one it took from: where its next look starts.
   */
  readonly exchangeHints: Int32Array;
  /** Bytes of an arena's metadata chunk that a carve commits (header and records, whole pages). */
  readonly metaBytes: number;
  /** @internal per class: frees left before the next try to give a full stack to the exchange (after one found it full). */
  private readonly giveWait: Int32Array;
  /**
   * Uint32 index of the heap's region map ({@link Regions.regionMapIndex}): `u32[regionMap + (p >>> regionShift)]`
   * is 0 for a `p` in no region (an oversized mapping, or no block at all), where nothing may be read at `p`'s
   * arena mask.
   */
  readonly regionMap: number;
  /** log2 of the region size (see {@link regionMap}). */
  readonly regionShift: number;

  constructor(space: AddressSpace, regions: Regions, registry: Registry, profile: ResolvedProfile) {
    this.space = space;
    this.regions = regions;
    this.registry = registry;
    this.arenaBytes = regions.geometry.arenaBytes;
    this.units = this.arenaBytes >>> UNIT_SHIFT;
    this.usableUnits = this.units;
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
    this.drainQueue = ((this.agentArea + DRAIN_OFFSET) >>> 2) + D_RUN;
    regions.progressWord = this.agentArea + G_OPENING_REGION * 4;
    // Assigned last, and without initializers: V8 lays fields out in the order they are first assigned, and
    // these are not read on any hot path but the foreign free's (the fields before them keep their order).
    this.chains = new RemoteChains(this);
    this.inherited = new Set<number>();
    this.seenDepartures = 0;
    this.onReaped = null;
    this.emptySlabs = new EmptySlabs();
    this.refills = 0;
    this.exchangeWord = Atomics.load(this.i32, regions.userWord(EXCHANGE_WORD) >>> 2) >>> 2;
    this.exchangeTag = space.agentId << 2;
    this.giveWait = new Int32Array(CLASS_COUNT);
    this.exchangeHints = new Int32Array(2 * EXCHANGE_CLASSES);
    this.regionMap = regions.regionMapIndex;
    this.regionShift = regions.regionShift;
    this.metaBytes = metaCommitBytes(this.arenaBytes);
  }

  /** Takes the space's current views (after a commit, which may grow the buffer). */
  sync(): void {
    const space = this.space;
    this.i32 = space.i32;
    this.u32 = space.u32;
    this.viewBytes = space.viewBytes;
  }

  /**
   * Whether this agent's views reach the metadata (header and records, in its region's slot 0) of the arena at
   * `base`, refreshing them if another agent grew the buffer: call it before reading another agent's arena.
   */
  coverMeta(base: number): boolean {
    return this.cover(arenaMeta(base, this.arenaBytes) + this.metaBytes);
  }

  /** Whether this agent's views reach byte `end`, refreshing them if another agent grew the buffer. */
  cover(end: number): boolean {
    if (end <= this.viewBytes) return true;
    this.space.covers(end);
    this.sync();
    return end <= this.viewBytes;
  }

  /**
   * @internal every agent area on the list, newest first, with this agent's views brought up to reach them all
   * (an area may have been created, by another agent, past the views this agent took).
   */
  agentAreas(): number[] {
    const areas = agentAreas(this.space, this.agentListHead());
    this.sync();
    return areas;
  }

  /** @internal byte address of the word that heads the list of agent areas. */
  agentListHead(): number {
    return this.regions.userWord(AGENT_LIST_WORD);
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
      const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT, this.arenaBytes);
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
    return allocSlow(this, cls);
  }

  private corruptLink(p: number, next: number, s: number): never {
    throw new HeapError(
      'CORRUPTION',
      `free list of the slab at ${formatAddress(s)} is corrupted: ${formatAddress(p)} links to ${formatAddress(next)}`,
      p,
    );
  }

  /**
   * Allocates a large object: above 1 MiB up to {@link largeMax}, rounded up to 1 KiB, one object on its own
   * run of units (refill.ts).
   * @throws RangeError for a size outside (1 MiB, largeMax].
   */
  allocLarge(size: number): number {
    return allocLarge(this, size);
  }

  // ---- free --------------------------------------------------------------------------------------

  /**
   * Frees `p`. With `size`, also checks that it names the block's class (a sized free).
   * On the owner the object goes onto its slab's free list; elsewhere it joins the chain for its owner.
   * @throws HeapError (BAD_POINTER, MISALIGNED, DOUBLE_FREE, WRONG_SIZE) before anything changes.
   */
  free(p: number, size?: number): void {
    if (p === 0) return;
    if (this.validateFree(p, size) < 0) refuse(this, p, size);
    this.freeValidated(p);
  }

  /**
   * Checks a free of `p` (and its size, if given) without changing anything. Returns the object's class
   * (0-15, or 16 for a large object), or -1 when `p` lies in an oversized mapping (whose tier checks it).
   * @throws HeapError (BAD_POINTER, MISALIGNED, DOUBLE_FREE, WRONG_SIZE) for anything else.
   */
  validateFree(p: number, size: number | undefined): number {
    let cls = freeableClass(this.u32, this.arenaMask, this.regionMap, this.regionShift, p);
    // The views may be older than the buffer (another agent grew it): refresh them and look again.
    if (cls === NOT_FREEABLE && typeof p === 'number' && p + 8 > this.viewBytes && this.cover(p + 8)) {
      cls = freeableClass(this.u32, this.arenaMask, this.regionMap, this.regionShift, p);
    }
    if (cls === IN_MAPPING) return -1;
    if (cls >= 0) {
      if (size === undefined) return cls;
      const base = (p & this.arenaMask) >>> 0;
      const ri = recordIndex(base, (p - base) >>> UNIT_SHIFT, this.arenaBytes);
      if (sizeMatches(size, this.i32[ri + R_INFO]!, this.u32[ri + R_SIZE]!)) return cls;
    }
    return refuse(this, p, size);
  }

  /** Frees `p`, already checked by {@link validateFree}: onto its slab's free list here, or its owner's chain. */
  freeValidated(p: number): void {
    const base = (p & this.arenaMask) >>> 0;
    const ri = recordIndex(base, (p - base) >>> UNIT_SHIFT, this.arenaBytes);
    const owner = this.i32[headerIndex(base, this.arenaBytes) + A_KIND_OWNER]! >>> 8;
    const info = this.i32[ri + R_INFO]!;
    if ((info & FLAG_QUARANTINE) !== 0) return; // its slab is out of use for good
    if (owner === this.slot) this.freeLocal(p, ri, info);
    else this.chains.freeForeign(this.u32, p, owner);
  }

  /**
   * A checked free of `p`, of class `cls`, whose cache stack is full (an agent that only frees, a consumer, has it
   * full for good): the top of the stack goes to the heap's exchange, where an agent short of the class takes it
   * (exchange.ts), and `p` onto the stack. When the exchange has no room, `p` goes home (its slab, or its owner's
   * chain), and after such a try the next {@link EXCHANGE_BATCH} - 1 frees of the class do not look.
   */
  freeCacheFull(cls: number, p: number): void {
    if (exchangeServes(this, cls)) {
      const aw = this.agentArea >>> 2;
      if (this.giveWait[cls]! > 0) {
        this.giveWait[cls]--;
      } else if (giveToExchange(this, cls, this.u32[aw + G_CACHE_COUNT + cls]!)) {
        if (pushCached(this.u32, aw + G_CACHE_COUNT, aw + G_CACHE_DEPTH, ((this.agentArea + CACHE_STACKS_OFFSET) >>> 2), cls, p)) return;
      } else {
        this.giveWait[cls] = EXCHANGE_BATCH - 1;
      }
    }
    this.freeValidated(p);
  }

  /** Sends every block waiting in the heap's exchange home (going idle, leaving, flushing the cache). Returns how many. */
  emptyExchange(): number {
    return emptyExchange(this);
  }

  /** @internal frees `p` of this agent's slab (record `ri`, info word `info`) onto its free list; checked already. */
  freeLocal(p: number, ri: number, info: number): void {
    const u32 = this.u32;
    const i32 = this.i32;
    u32[p >>> 2] = u32[ri + R_FREE]!;
    i32[(p >>> 2) + 1] = FREED_MARK ^ p;
    u32[ri + R_FREE] = p;
    const live = i32[ri + R_LIVE]! - 1;
    i32[ri + R_LIVE] = live;
    if ((info & FLAG_CURRENT) !== 0 && live !== 0) return;
    // What a slab free sets off may release the slab and its arena, which another agent may then carve and hand
    // out: a block named in the routing word (on this free list from here) is let go of first, so that a reaper
    // never frees what may by then be another agent's block.
    u32[(this.agentArea >>> 2) + G_ROUTING] = 0;
    slabFreed(this, p, ri, info, live);
  }

  /** Writes the freed mark into `p` (a block held freed outside any list, e.g. in a cache). */
  markFreed(p: number): void {
    this.i32[(p >>> 2) + 1] = FREED_MARK ^ p;
  }

  /** Clears the freed mark of `p` (it is handed out again). */
  clearMark(p: number): void {
    this.i32[(p >>> 2) + 1] = 0;
  }

  /** Usable bytes of the object at `p` (its class size). */
  usableSize(p: number): number {
    const ri = locate(this, p, 'usableSize');
    if (this.i32[(p >>> 2) + 1] === (FREED_MARK ^ p)) {
      throw new HeapError('DOUBLE_FREE', `usableSize: ${formatAddress(p)} has been freed`, p);
    }
    return objectSize(this, ri);
  }

  // ---- cross-agent frees (remote-chains.ts, drain.ts) ----------------------------------------------

  /** Flushes every pending chain to its owner's inbox. Returns the objects sent. */
  flushChains(): number {
    return this.chains.flushChains();
  }

  /** Capacity of the chain map (for tests and stats). */
  get chainMapSize(): number {
    return this.chains.capacity;
  }

  /** Objects waiting in this agent's chains. */
  pendingChainObjects(): number {
    return this.chains.pendingObjects();
  }

  /**
   * Reclaims the batches other agents pushed onto this agent's inboxes (and any its allocations left in its
   * queue), every object checked first. Returns the objects reclaimed.
   * @throws HeapError CORRUPTION for an object that fails a check; those before it are already reclaimed.
   */
  drain(): number {
    return drain(this);
  }

  /**
   * Reclaims them as {@link drain} does, onto this agent's thread-cache stacks while they have room (the rest onto
   * their slabs): for an agent that goes on allocating, as after a wait. Returns the objects reclaimed.
   */
  drainToCache(): number {
    return drain(this, TO_CACHE);
  }

  // ---- giving memory back (release.ts) -----------------------------------------------------------

  /** Sweeps the arenas whose dirty units are due (all of them with `force`). Returns the units decommitted. */
  sweepDue(force: boolean): number {
    return sweepDue(this, force);
  }

  /** Gives back what an idle agent can: empty current slabs, dirty units, empty arenas but one spare (unless not `keepSpare`). */
  releaseIdle(keepSpare = true): void {
    releaseIdle(this, keepSpare);
  }

  /** Decommits every retained unit of this agent's arenas; returns the units given back. */
  purgeRetained(): number {
    return purgeRetained(this);
  }

  // ---- leaving, adoption, reap (ownership.ts, reap.ts) --------------------------------------------

  /** Hands this agent's arenas over for adoption and marks its slot and area detached. */
  detachOwner(): void {
    detachOwner(this);
  }

  /** Marks this agent as crashed, to be reaped (checked) by another; nothing is called on it afterwards. */
  markCrashed(): void {
    markCrashed(this);
  }

  /** Agent ids of the agents that ran on the thread whose key is `thread` and have not left. */
  agentsOnThread(thread: number): number[] {
    return agentsOnThread(this, thread);
  }

  /** Adopts every owner slot that is detached, and reaps every agent that crashed. Returns how many. */
  adoptOrphans(): number {
    return adoptOrphans(this);
  }

  /** Owner slots this agent adopted. */
  adoptedSlots(): readonly number[] {
    return this.adopted;
  }

  /** The owner slot of the arena holding `p` (0: not in a laid-out arena). */
  arenaOwnerOf(p: number): number {
    return arenaOwnerOf(this, p);
  }

  /** The agent area of agent `agentId`, or 0. */
  areaOf(agentId: number): number {
    return findAgentArea(this.space, this.agentListHead(), agentId);
  }

  /**
   * Recovers an agent that died without detaching, found by its agent id (reap.ts); with `releaseLive`, the
   * live blocks of the arenas it carved are released too.
   * @throws RangeError when no such agent exists, it is this agent, or it was already detached or reaped.
   */
  reapAgent(agentId: number, releaseLive = false): ReapReport {
    return reapAgent(this, agentId, releaseLive);
  }

  // ---- inspection (check.ts) ---------------------------------------------------------------------

  /** This agent's arenas, counted. */
  stats(): ArenaStats {
    return stats(this);
  }

  /** Walks every arena this agent owns and validates its invariants. @throws HeapError CORRUPTION naming the first broken one. */
  check(): void {
    check(this);
  }
}
