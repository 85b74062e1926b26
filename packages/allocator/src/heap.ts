/**
 * The arena backend's heap (`pool_arena`): one object per agent over the arena engine, its thread cache and
 * its large tier, with the fast small-block malloc and free written to be inlined whole, realloc, stats, the
 * idle tick and return, leaving the heap and reaping agents that died. What every backend does the same way
 * is in heap-base.ts; `createArenaHeap` and `attachArenaHeap` below lay out or open the heap header.
 */
import { AGENT_AREA_COMMIT, AGENT_LIVE, G_STATE, G_THREAD, ArenaHeap, CLASS_COUNT, createExchange, exchangeHeld, G_ZERO, IN_MAPPING, LARGE_ROUND, MAX_CLASS_SIZE, classIndex, freeableClass, snapshotArenas, type ArenaSnapshot, type ReapReport } from '@paddock/arena';
import { LargeTier, mappingPictures, type MappingPicture } from '@paddock/large';
import { HeapError, describeValue, rss, type AddressSpace } from '@paddock/platform';
import { resolveProfile, validateProfile, type ResolvedProfile } from '@paddock/profile';
import { Regions } from '@paddock/region';
import { Registry } from '@paddock/registry';
import { ThreadCache, popCached, pushCached } from '@paddock/thread-cache';
import { AgentLocks } from './agent-locks.js';
import { HANDLE_VERSION, createHeapSpace, openHeapSpace } from './handle.js';
import { InboxWake } from './inbox-wake.js';
import { HeapBase, addonOf, closedError, watchedThreadAlive, withOptions } from './heap-base.js';
import { ANSWER_GRACE_MS, Presence, pingAgent, pingLiveAgent } from './presence.js';
import { releaseSpareChunk } from './scope.js';
import type { ArenaHeapStats } from './stats.js';
import type { HeapView } from './views.js';
import { TICK_MAX_MS, TICK_MIN_MS, type AttachOptions, type Heap, type HeapHandle, type HeapOptions, type WatchOptions } from './types.js';

/** This backend's name. */
export const ARENA_BACKEND = 'pool_arena';
const BACKEND_CODE = 1;
// Words this layer keeps in the heap header (region layer's user words).
const U_BACKEND = 0;
const U_PROFILE = 1;
/** A random number drawn when the heap is made: it names the heap's agent locks (browsers) apart from other heaps'. */
const U_NONCE = 3;

/**
 * The agents of this thread's arena heap objects that have not left, by heap nonce and agent id: `reap` leaves
 * judging them to its caller (see there).
 */
const agentsHere = new Set<string>();
const hereKey = (nonce: number, agentId: number) => `${nonce}:${agentId}`;

/** One agent's handle on a shared heap. */
export class ArenaBackedHeap extends HeapBase implements Heap {
  /** Send this to another agent and call {@link attachHeap} there. */
  readonly handle: HeapHandle;
  readonly backend: string;
  /** The profile rung this agent runs with (the heap's, read when it attached). */
  profile: number;
  /** The address space underneath (views, reserve, commit). */
  readonly space: AddressSpace;
  private readonly arena: ArenaHeap;
  private cache: ThreadCache;
  private readonly tier: LargeTier;
  private readonly registry: Registry;
  /**
   * The arena's address mask and the cache's words (counts, depths, stacks in this agent's area), copied here
   * so malloc and free read everything they need from this object and one view.
   */
  private readonly arenaMask: number;
  /** The heap's region map and region shift (see {@link ArenaHeap.regionMap}), for the inlined free. */
  private readonly regionMap: number;
  private readonly regionShift: number;
  private cacheCount: number;
  private cacheDepth: number;
  private readonly cacheStack: number;
  /** Allocations so far; the idle tick compares it with what it saw last time. */
  private activity: number;
  private seenActivity: number;
  private interval: number;
  private idleReturned: boolean;
  private waitReturned: boolean;
  private readonly regions: Regions;
  /** This agent's Web Lock and its watch over the others' (browsers). */
  private readonly locks: AgentLocks;
  /** Stashed mappings of dead agents released by this agent's reaps, counted. */
  private stashReleased: number;
  /** Its wait on its inbox between idle visits (inbox-wake.ts). */
  private readonly inboxWake: InboxWake;
  /** The heap's random number (see U_NONCE). */
  private readonly nonce: number;
  /** Its wait on its presence word, which tells reapers it is alive (presence.ts). */
  private readonly presence: Presence;

  /**
   * @internal use {@link createHeap} or {@link attachHeap}.
   *
   * No field has an initializer: V8 lays an object's fields out in the order they are first assigned, so the
   * fields malloc and free read are assigned first, right here. Measured with apps/bench/scripts/hot-paths.mjs
   * (a malloc/free pair on one heap): with the fields in declaration order, adding the lifecycle fields took the
   * pair from 6.8 ns to 7.2-7.3 ns, or to 11-11.7 ns with two fewer fields in the base class; assigned first,
   * 6.9 ns against 6.8 for the build before those fields, in alternating processes.
   */
  constructor(space: AddressSpace, regions: Regions, registry: Registry, profile: number) {
    super();
    const resolved: ResolvedProfile = resolveProfile(profile, regions.geometry.unitsPerArena);
    this.arena = new ArenaHeap(space, regions, registry, resolved);
    this.cache = new ThreadCache(this.arena, resolved.cacheDepth);
    // A cache made again by setProfile lies at the same words (they follow from the agent area).
    this.arenaMask = this.arena.arenaMask;
    this.cacheCount = this.cache.countWord;
    this.cacheDepth = this.cache.depthWord;
    this.cacheStack = this.cache.stackWord;
    this.regionMap = this.arena.regionMap;
    this.regionShift = this.arena.regionShift;
    this.activity = 0;
    this.detached = false;
    this.backend = ARENA_BACKEND;
    this.seenActivity = 0;
    this.interval = TICK_MIN_MS;
    this.idleReturned = false;
    this.waitReturned = false;
    this.space = space;
    this.regions = regions;
    this.registry = registry;
    this.profile = profile;
    this.tier = new LargeTier(space, this.arena, resolved.largeRetention);
    // A reap (by this agent's watch, tick, or a free that finds a crashed owner) releases the dead agent's stash.
    this.arena.onReaped = (area: number) => {
      this.stashReleased += this.tier.reapStash(area).released;
    };
    this.handle = { kind: 'paddock-heap', version: HANDLE_VERSION, backend: ARENA_BACKEND, space: space.handle };
    this.leaveWithThread();
    // In a browser the agent holds a Web Lock for as long as it is attached: the browser lets it go when the
    // worker is terminated or closes itself, which is how a watching agent learns that it is gone.
    const nonce = Atomics.load(space.i32, regions.userWord(U_NONCE) >>> 2);
    // A lock let go says the agent is gone: reaped without asking its presence.
    this.locks = new AgentLocks(space, regions, this.arena, nonce, () => this.detached, (id) => this.reapGone(id, {}), (err) => this.reportError(err, 'reap'));
    this.stashReleased = 0;
    this.inboxWake = new InboxWake(this.arena, registry, () => this.detached);
    this.nonce = nonce;
    this.presence = new Presence(this.arena, () => this.detached);
    agentsHere.add(hereKey(nonce, space.agentId));
  }

  /** Browsers: waits on the other agents' Web Locks and reaps each agent whose lock goes (see agent-locks.ts). */
  protected watchByLocks(): boolean {
    return this.locks.watch();
  }

  protected get canReap(): boolean {
    return true;
  }

  /**
   * Changes the heap's profile rung (1-10). Only the creating agent may, and only before any agent has
   * attached or allocated: every agent reads the rung once, when it attaches.
   * @throws RangeError for a bad rung; HeapError PROFILE_LOCKED once the heap is in use.
   */
  setProfile(rung: number): void {
    if (this.detached) throw closedError();
    const r = validateProfile(rung);
    if (this.space.agentsOpened > 1 || this.arena.slot !== 0 || this.tier.stats().mappingsAllocated > 0) {
      throw new HeapError('PROFILE_LOCKED', 'the profile can only change before any agent attaches or allocates');
    }
    Atomics.store(this.space.i32, this.regions.userWord(U_PROFILE) >>> 2, r);
    const resolved = resolveProfile(r, this.regions.geometry.unitsPerArena);
    this.arena.decommitSpan = resolved.decommitSpan;
    this.arena.sweepThreshold = resolved.sweepThreshold;
    this.cache = new ThreadCache(this.arena, resolved.cacheDepth);
    this.tier.budgetBytes = resolved.largeRetention;
    this.profile = r;
  }

  /**
   * The largest object the arena tier can serve (an arena's usable units): every size above it gets an oversized
   * mapping. At or below it, a size above 1 MiB is served from arena units only when its span packs an arena well
   * (whole blocks of it fill at least 15/16 of the usable units); any other gets an oversized mapping of its exact
   * size too (docs/design/large.md).
   */
  get largeMax(): number {
    return this.arena.largeMax;
  }

  /**
   * Allocates `size` bytes and returns a non-zero pointer (a byte offset into the heap's views), aligned to
   * the object's size class (at least 32 bytes). `malloc(0)` returns a minimal block.
   * @throws RangeError for a size that is negative, not an integer, or above maxBytes; HeapError
   * OUT_OF_MEMORY for a size the heap has no room for (see `Heap.malloc`).
   */
  malloc(size: number): number {
    this.activity = (this.activity + 1) | 0; // stays a small integer: a counter that grew into a double would allocate
    if ((size >>> 0) === size && size <= MAX_CLASS_SIZE) {
      const cls = classIndex(size);
      const p = popCached(this.arena.u32, this.cacheCount, this.cacheStack, cls);
      return p !== 0 ? p : this.arena.allocClass(cls);
    }
    return this.mallocAbove(size);
  }

  private mallocAbove(size: number): number {
    if (this.detached) throw closedError();
    if ((size >>> 0) !== size || size > this.space.maxBytes) this.checkSize(size); // the full check only where the quick one fails
    return this.tier.inArena(size) ? this.allocLarge(size) : this.tier.mallocOversized(size);
  }

  /** A large block from arena units; kept out of {@link mallocAbove} (its try), which the oversized path goes through. */
  private allocLarge(size: number): number {
    try {
      return this.arena.allocLarge(size);
    } catch (err) {
      // No arena could be carved: the address space outside the regions (the lowest region-sized range, the gaps
      // no aligned region fits) may still hold it as a mapping.
      if (!(err instanceof HeapError) || err.code !== 'OUT_OF_MEMORY') throw err;
      return this.tier.mallocOversized(size);
    }
  }

  /** @throws RangeError for a size that is not an integer from 0 to the heap's size. */
  private checkSize(size: number): void {
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0 || size > this.space.maxBytes) {
      throw new RangeError(`size must be an integer from 0 to maxBytes ${this.space.maxBytes}, got ${describeValue(size)}`);
    }
  }

  /**
   * Resizes the block at `ptr`: `realloc(0, n)` is `malloc(n)`; a size in the same class keeps the pointer, and
   * so does an oversized block resized to another size served by a mapping where its mapping can grow or shrink in place (see
   * {@link LargeTier.resizeInPlace}); otherwise the contents (up to the smaller size) move to a new block and the
   * old one is freed.
   * @throws RangeError for a bad size; HeapError for a pointer the heap did not hand out (nothing changes).
   */
  realloc(ptr: number, size: number): number {
    if (this.detached) throw closedError();
    if (ptr === 0) return this.malloc(size);
    this.checkSize(size);
    let old: number;
    if (this.tier.isMapping(ptr)) {
      // In place only to a size that is itself served by a mapping: a block's size always names its tier (what
      // `stats().liveBytes`, the arenas' count, holds).
      if (!this.tier.inArena(size) && this.tier.resizeInPlace(ptr, size)) return ptr;
      old = this.tier.usableSize(ptr);
    } else {
      old = this.arena.usableSize(ptr);
      if (old <= MAX_CLASS_SIZE) {
        if (size <= MAX_CLASS_SIZE && classIndex(size) === classIndex(old)) return ptr;
      } else if (size > MAX_CLASS_SIZE && size <= this.arena.largeMax && Math.ceil(size / LARGE_ROUND) * LARGE_ROUND === old) {
        return ptr;
      }
    }
    const moved = this.malloc(size);
    this.space.u8.copyWithin(moved, ptr, ptr + Math.min(old, size));
    this.free(ptr);
    return moved;
  }

  /**
   * Frees the block at `ptr`; `free(0)` does nothing. With `size` (a sized free) the size must be in the
   * block's class. A block of another agent is sent home in a batch. A typed array that starts a block of this heap
   * frees that block (see {@link Heap.free}).
   * @throws HeapError (BAD_POINTER, MISALIGNED, DOUBLE_FREE, WRONG_SIZE) and leaves the heap as it was.
   */
  free(ptr: number | HeapView, size?: number): void {
    if (typeof ptr !== 'number') ptr = this.viewPointer(ptr, 'free'); // a typed array: the block it starts (views.ts)
    // The common case first, inlinable: a free of a small block, unsized or with a size of its class, that
    // the cache takes (a detached agent's cache has depth 0 and takes none).
    const u32 = this.arena.u32;
    const cls = freeableClass(u32, this.arenaMask, this.regionMap, this.regionShift, ptr);
    if (cls >= 0 && cls < CLASS_COUNT && (size === undefined || ((size >>> 0) === size && size <= MAX_CLASS_SIZE && classIndex(size) === cls))) {
      if (pushCached(u32, this.cacheCount, this.cacheDepth, this.cacheStack, cls, ptr)) return;
      this.freeCacheFull(cls, ptr);
      return;
    }
    this.freeChecked(ptr, size, cls);
  }

  /** A checked free of class `cls` whose cache stack is full (see {@link ArenaHeap.freeCacheFull}); kept out of `free`, which stays small enough for V8 to inline into the caller's loop. */
  private freeCacheFull(cls: number, ptr: number): void {
    if (this.detached) throw closedError();
    this.arena.freeCacheFull(cls, ptr);
  }

  /**
   * Every other free: null, a large or oversized block, a wrong size, or one to refuse (it finds the exact error).
   * `found` is what the fast path's check found: an oversized block goes to its tier at once, which checks it
   * whole (the mapping's header, its state, a size), so the arena's check does not run again.
   */
  private freeChecked(ptr: number, size: number | undefined, found: number): void {
    if (this.detached) throw closedError();
    if (ptr === 0) return; // in no region, so the fast path's check found it IN_MAPPING
    if (found === IN_MAPPING) {
      this.tier.freeOversized(ptr, size);
      return;
    }
    // An unsized free of a block the fast path's check passed (a large block here) is checked already: the arena's
    // own check would find the same class again.
    const cls = found >= 0 && size === undefined ? found : this.arena.validateFree(ptr, size);
    if (cls >= 0) {
      if (cls >= CLASS_COUNT || !this.cache.push(cls, ptr)) this.arena.freeValidated(ptr);
      return;
    }
    this.tier.freeOversized(ptr, size);
  }

  /** Bytes usable at `ptr` (at least what was asked for). */
  usableSize(ptr: number): number {
    if (this.detached) throw closedError();
    if (this.tier.isMapping(ptr)) return this.tier.usableSize(ptr);
    return this.arena.usableSize(ptr);
  }

  /** Sends every pending cross-agent free home now. Returns the objects sent. */
  flush(): number {
    if (this.detached) throw closedError();
    return this.arena.flushChains();
  }

  /** Reclaims the frees other agents have delivered to this agent. Returns the objects reclaimed. */
  drain(): number {
    if (this.detached) throw closedError();
    return this.arena.drain();
  }

  /** Counts for this agent and the heap. */
  stats(): ArenaHeapStats {
    if (this.detached) throw closedError();
    const a = this.arena.stats();
    const c = this.cache.stats();
    return {
      backend: ARENA_BACKEND,
      pageReturn: this.space.pageReturn,
      pageReturnAddon: addonOf(this.space.pageReturn),
      profile: this.profile,
      committedBytes: this.space.committedBytes,
      residentBytes: rss(),
      liveBytes: a.liveBytes,
      ownerSlot: a.ownerSlot,
      arenas: a.arenas,
      pendingChainObjects: a.pendingChainObjects,
      perClass: a.perClass,
      cacheBytes: c.bytes,
      cacheBlocks: c.blocks,
      exchangeBytes: exchangeHeld(this.arena).bytes,
      largeObjects: a.largeObjects,
      largeBytes: a.largeBytes,
      retention: this.tier.stats(),
      quarantinedBytes: a.quarantinedBytes,
      keptSlabs: a.keptSlabs,
      keptBytes: a.keptBytes,
      adoptedSlots: [...this.arena.adoptedSlots()],
      nextTickMs: this.interval,
    };
  }

  /** The arena layer's picture and the oversized mappings, for {@link snapshot}. */
  protected override heapPicture(): { arena: ArenaSnapshot; mappings: MappingPicture[] } {
    const arena = snapshotArenas(this.arena);
    return { arena, mappings: mappingPictures(this.space, arena.regions, arena.regionBytes) };
  }

  /** Walks every arena this agent can see and validates its invariants. @throws HeapError CORRUPTION. */
  check(): void {
    if (this.detached) throw closedError();
    this.arena.check();
    this.tier.check();
  }

  // ---- suspend and drain ---------------------------------------------------------------------------

  /**
   * One idle visit: adopts detached or reaped owners, drains the inbox (onto the cache stacks first when the agent
   * allocated since the last visit, as after a wait), flushes the chains, sweeps the arenas whose dirty units have
   * waited long enough (an agent that allocated nothing since the last visit: every arena that is due, at once). Returns the
   * milliseconds until the next visit: 10 after any allocation since the last visit, else double the last
   * delay, up to 500. The visit that reaches 500 runs the idle return (once, until activity resumes); a visit at
   * 500 runs it again when the cache holds blocks freed since (an agent that only frees allocates nothing, so
   * its frees would otherwise stay in its cache, and their memory away from its owners, for good).
   */
  tick(): number {
    if (this.detached) throw closedError();
    this.arena.adoptOrphans();
    this.locks.watchNewcomers();
    // An agent that allocated since the last visit is working: what arrived goes onto its cache stacks first, and
    // what its drain emptied waits the sweep delay (it may carve it again at once). An idle one puts everything on
    // its slabs and sweeps what is due now: nothing of it is about to be carved again.
    const working = this.activity !== this.seenActivity;
    if (working) this.arena.drainToCache();
    else this.arena.drain();
    this.arena.flushChains();
    this.arena.sweepDue(!working);
    if (!this.activityResumed()) this.interval = Math.min(TICK_MAX_MS, this.interval * 2);
    if (this.interval >= TICK_MAX_MS && (!this.idleReturned || !this.cache.isEmpty())) {
      this.returnIdle();
      this.idleReturned = true;
    }
    return this.interval;
  }

  /**
   * The idle return: drains the inbox, sends every cached block home (foreign ones to their owners), and every
   * block waiting in the heap's exchange, flushes the chains, returns all retained large units and stashed
   * mappings, releases empty current slabs, sweeps every dirty unit and releases all empty arenas but one. A parked
   * agent holds nothing it does not use, and leaves nothing freed waiting between agents.
   */
  returnIdle(): void {
    if (this.detached) throw closedError();
    releaseSpareChunk(this);
    this.arena.drain();
    this.cache.flush();
    this.arena.emptyExchange();
    this.arena.flushChains();
    this.tier.purge();
    this.arena.releaseIdle();
  }

  /** Between idle visits: woken early when frees reach this agent's empty inbox (inbox-wake.ts). */
  protected override armIdleWake(delay: number, wake: () => void): void {
    this.inboxWake.arm(delay, wake);
  }

  protected override disarmIdleWake(): void {
    this.inboxWake.disarm();
  }

  /** Whether anything was allocated since the idle tick or a wait last looked; if so, idling starts over. */
  private activityResumed(): boolean {
    if (this.activity === this.seenActivity) return false;
    this.seenActivity = this.activity;
    this.interval = TICK_MIN_MS;
    this.idleReturned = false;
    this.waitReturned = false;
    return true;
  }

  /** Before a wait: flushes the chains, so that no block waits on a sleeping agent. */
  protected beforeWait(): void {
    this.arena.flushChains();
    this.activityResumed();
  }

  /**
   * After a wait: drains the inbox. Woken, the agent goes on working: what arrived goes onto its cache stacks while
   * they have room (its next mallocs pop it; a slab of 4 KiB blocks would otherwise empty and refill for every
   * four blocks). Timed out, it is idle: everything goes back to its slabs, and the first such wait since the last
   * allocation runs the idle return, and a later one again when the cache holds blocks freed since (as the tick does).
   */
  protected afterWait(timedOut: boolean): void {
    if (!timedOut) {
      this.arena.drainToCache();
      return;
    }
    this.arena.drain();
    if (!this.waitReturned || !this.cache.isEmpty()) {
      this.returnIdle();
      this.waitReturned = true;
    }
  }

  /**
   * Leaves the heap for good; a worker's agent does this by itself when its thread ends (see `close`, the
   * same call). The cache, the heap's exchange, chains and inbox are flushed and drained, retention purged, every empty arena
   * released (its pages go back), and the arenas that still hold live blocks handed over: the first agent
   * that frees into them, needs memory, or ticks takes them over, so frees to them are never stranded.
   * Calling it again does nothing; every other use of the heap object afterwards throws `DETACHED`.
   */
  detach(): void {
    if (this.detached) return;
    releaseSpareChunk(this);
    this.forgetThreadExit();
    this.stopIdle();
    this.arena.drain();
    this.cache.flush();
    this.cache.close(); // from here no free is cached: each one is refused with DETACHED
    this.arena.emptyExchange();
    this.arena.flushChains();
    this.arena.drain();
    this.tier.purge();
    this.arena.releaseIdle(false);
    this.detached = true;
    this.arena.detached = true;
    this.forgetCache();
    agentsHere.delete(hereKey(this.nonce, this.agentId));
    this.arena.detachOwner(); // the area is vacant from here: a new agent may lay it out again
    this.presence.leave(); // after: until the area said detached, a reaper had to find the agent there
    this.locks.letGo();
  }

  /** Points the inlined cache at words that are always zero: it is empty and takes nothing from here on. */
  private forgetCache(): void {
    this.cacheCount = (this.arena.agentArea >>> 2) + G_ZERO;
    this.cacheDepth = this.cacheCount;
  }

  /** Its thread is ending by an uncaught exception: marked crashed, to be reaped with every check. */
  protected threadCrashed(): void {
    this.stopIdle();
    this.detached = true;
    this.forgetCache();
    agentsHere.delete(hereKey(this.nonce, this.agentId));
    this.arena.markCrashed();
    this.presence.leave();
  }

  protected override threadAnswers(thread: number): boolean {
    for (const id of this.arena.agentsOnThread(thread)) {
      const found = pingLiveAgent(this.arena, id);
      if (found === 'live' || found === 'answering') return true;
    }
    return false;
  }

  protected reapThread(thread: number, options: WatchOptions): number {
    let reaped = 0;
    for (const id of this.arena.agentsOnThread(thread)) {
      try {
        this.reapGone(id, options); // its thread has exited
        reaped++;
      } catch (err) {
        if (!(err instanceof RangeError)) throw err; // RangeError: another agent reaped it first
      }
    }
    return reaped;
  }

  /**
   * Recovers an agent that died without detaching (`worker.terminate()`, a crash), by its {@link agentId}:
   * its arenas are checked and adopted by this agent (half-updated slabs are quarantined, never trusted),
   * the blocks in its cache and chains are checked and sent home, its stashed mappings released, and its
   * inbox drained with this agent's from now on. Its live blocks stay live (another agent may hold and free
   * them) unless `releaseLive` is set: then every live block of the arenas the dead agent carved is released with
   * them, and every live oversized mapping it allocated (counted in `liveBlocksReleased`); use it only when the dead
   * agent shared nothing still in use, cached or in transit elsewhere.
   * Arenas it had taken over from agents that left keep their live blocks (they were never the dead agent's).
   * A block its thread cache handed it that lies in another agent's arena is not released: it looks like any
   * other live block of that arena (nothing records who holds it), so it stays live until freed.
   *
   * Reaping is for agents that are gone: an agent this heap object can tell is alive is refused with `HeapError`
   * AGENT_ALIVE, and nothing changes. It is alive when its worker is one this thread created (while a heap object
   * of it watches them, the default) or a heap object of this thread watches ({@link watch}), and whose exit has not come, or when its thread answers: every agent keeps an
   * `Atomics.waitAsync` on a word of its area while attached, which goes with its thread, and a reap wakes it
   * (presence.ts); a thread that is busy or blocked still holds it. An agent woken by an earlier reap that has not
   * waited again yet (its event loop has not come round) is taken as alive for 2 s after that reap. It cannot tell:
   * where the agent's host has no `Atomics.waitAsync` or is a browser (it keeps no wait: it is reaped as asked), and for an agent
   * of this very thread (another heap object this thread opened and has not closed), which is the caller's to
   * judge: reaping it stands for its death, and that heap object must not be used again. An agent that marked
   * itself crashed is gone. `watch` and, in a browser, a lock let go reap without asking (the thread is gone).
   * @throws RangeError when there is no such live agent; HeapError AGENT_ALIVE when it is alive.
   */
  reap(agentId: number, options: { releaseLive?: boolean } = {}): ReapReport & { stashReleased: number } {
    if (this.detached) throw closedError();
    if (typeof agentId !== 'number' || !Number.isInteger(agentId) || agentId < 1) {
      throw new RangeError(`agentId must be a positive integer, got ${describeValue(agentId)}`);
    }
    this.refuseLive(agentId);
    return this.reapGone(agentId, options);
  }

  /**
   * Refuses to reap agent `agentId` when it can tell it is alive (see {@link reap}); anything else wrong with the
   * reap is left to the engine to say.
   * @throws HeapError AGENT_ALIVE.
   */
  private refuseLive(agentId: number): void {
    const arena = this.arena;
    const area = arena.areaOf(agentId);
    if (area === 0 || area === arena.agentArea || !arena.cover(area + AGENT_AREA_COMMIT)) return;
    const w = area >>> 2;
    if (Atomics.load(arena.i32, w + G_STATE) !== AGENT_LIVE) return; // crashed (it said it is gone), or left
    if (agentsHere.has(hereKey(this.nonce, agentId))) return; // this thread's own: the caller's to judge
    const thread = arena.i32[w + G_THREAD]!;
    if (thread !== 0 && watchedThreadAlive(thread)) {
      throw new HeapError('AGENT_ALIVE', `cannot reap agent ${agentId}: its worker (threadId ${thread - 1}) is watched and has not exited (the watch reaps it when it does)`);
    }
    const found = pingAgent(arena.i32, area);
    if (found === 'live') throw new HeapError('AGENT_ALIVE', `cannot reap agent ${agentId}: its thread is alive (it answered); reaping is for agents that are gone`);
    if (found === 'answering') {
      throw new HeapError('AGENT_ALIVE', `cannot reap agent ${agentId}: an earlier reap found it alive and it has not answered since; if its thread is gone, it can be reaped ${ANSWER_GRACE_MS} ms after that`);
    }
  }

  /** Reaps agent `agentId`, known or taken to be gone (see {@link reap}). */
  private reapGone(agentId: number, options: { releaseLive?: boolean }): ReapReport & { stashReleased: number } {
    const before = this.stashReleased;
    const report = this.arena.reapAgent(agentId, options.releaseLive === true);
    // Its live oversized mappings are in no arena: released here, counted with the live blocks.
    if (options.releaseLive === true) report.liveBlocksReleased += this.tier.releaseLiveOf(agentId);
    return { ...report, stashReleased: this.stashReleased - before };
  }

  /**
   * Sends every block in this agent's thread cache home, and every block waiting in the heap's exchange (where
   * full caches hand blocks over to agents short of their class). Returns how many.
   */
  flushCache(): number {
    if (this.detached) throw closedError();
    return this.cache.flush() + this.arena.emptyExchange();
  }

  /** Returns every retained large unit and stashed oversized mapping of this agent to the OS. */
  purgeRetention(): number {
    if (this.detached) throw closedError();
    return this.tier.purge();
  }

  /** @internal the thread cache, for tests and tools. */
  get threadCache(): ThreadCache {
    return this.cache;
  }

  /** @internal the large tier, for tests and tools. */
  get largeTier(): LargeTier {
    return this.tier;
  }

  /** @internal the arena engine, for tests and tools. */
  get engine(): ArenaHeap {
    return this.arena;
  }
}

/** Creates a heap (in this agent, which becomes its first user). */
export function createArenaHeap(options: HeapOptions = {}): ArenaBackedHeap {
  const { space, profile } = createHeapSpace(options);
  const regions = Regions.create(space);
  const registry = Registry.create(space);
  createExchange(space, regions);
  const i32 = space.i32;
  Atomics.store(i32, regions.userWord(U_PROFILE) >>> 2, profile);
  Atomics.store(i32, regions.userWord(U_BACKEND) >>> 2, BACKEND_CODE);
  Atomics.store(i32, regions.userWord(U_NONCE) >>> 2, crypto.getRandomValues(new Int32Array(1))[0]!);
  return withOptions(new ArenaBackedHeap(space, regions, registry, profile), options);
}

/**
 * Attaches this agent to a heap another agent created, from its handle.
 * @throws HeapError BAD_HANDLE for anything that is not a live Paddock heap handle of this backend.
 */
export function attachArenaHeap(handle: HeapHandle, options: AttachOptions = {}): ArenaBackedHeap {
  const space = openHeapSpace(handle, ARENA_BACKEND, options);
  const regions = Regions.open(space);
  const registry = Registry.open(space);
  const i32 = space.i32;
  if (Atomics.load(i32, regions.userWord(U_BACKEND) >>> 2) !== BACKEND_CODE) {
    throw new HeapError('BAD_HANDLE', 'the heap header does not name this backend');
  }
  const profile = Atomics.load(i32, regions.userWord(U_PROFILE) >>> 2);
  return withOptions(new ArenaBackedHeap(space, regions, registry, validateProfile(profile)), options);
}
