/**
 * A picture of the whole arena heap, taken by any agent without stopping the others: every carved arena unit by
 * unit (slab of class N, large object, parked block, emptied slab, quarantined, free and still
 * committed, retained, decommitted), the per-class and per-owner figures that follow from the unit records, the
 * owner slots, and every agent area (cache, pending chains, stash). Everything is read from the shared buffer with
 * plain loads while other agents run: what belongs to another live agent may be a moment old or half-updated, and
 * is marked so (`exact: false`); what the taking agent owns, and what no live agent touches, is exact. Nothing
 * is written. The result is plain data and typed arrays, so it can be posted to another agent or a page.
 */
import { AGENT_CLAIMING, AGENT_CRASHED, AGENT_DETACHED, AGENT_LIVE, AGENT_REAPED, AGENT_VACANT, CACHE_STRIDE, G_AGENT_ID, G_CACHE_COUNT, G_CACHE_DEPTH, G_FLUSH_PHASE, G_MAP_ADDR, G_MAP_CAP, G_OWNER_SLOT, G_STASH_COUNT, G_STATE, G_THREAD, STASH_CAPACITY, STASH_OFFSET, agentAreas } from './agent-area.js';
import type { ArenaHeap } from './arena-heap.js';
import { exchangeHeld } from './exchange.js';
import {
  ARENA_MAGIC,
  A_CARVER,
  A_DIRTY_BITS,
  A_DIRTY_UNITS,
  A_FREE_UNITS,
  A_KIND_OWNER,
  A_MAGIC,
  A_RETAINED_BITS,
  A_RETAINED_UNITS,
  A_UNIT_BITS,
  CLASS_MASK,
  CLASS_SHIFT,
  FLAG_QUARANTINE,
  LARGE_CLASS,
  R_INFO,
  R_LIVE,
  R_SIZE,
  R_SPAN,
  STATE_CONT,
  STATE_HEAD,
  STATE_MASK,
  UNIT,
  UNIT_SHIFT,
  headerIndex,
  recordIndex,
} from './layout.js';
import { SLOT_ADOPTED, SLOT_DETACHED, SLOT_LIVE } from './ownership.js';
import { CHAIN_FLUSH, CHAIN_MAP_INITIAL } from './remote-chains.js';
import { CLASS_COUNT } from './size-class.js';

/** What one unit of an arena holds (`ArenaSnapshot.unitState`). */
export const UNIT_DECOMMITTED = 0; // free, its pages given back (or never touched)
export const UNIT_DIRTY = 1; // free, still committed, waiting for a sweep
export const UNIT_RETAINED = 2; // free, kept committed for a large block of the same span
export const UNIT_SLAB = 3; // the first unit of a slab (or block) of class `unitClass` with live objects
export const UNIT_EMPTY_SLAB = 4; // the first unit of a slab with no live object (kept for its class, or current)
export const UNIT_LARGE = 5; // the first unit of a live large object
export const UNIT_PARKED = 6; // the first unit of a freed large block kept whole for reuse
export const UNIT_CONTINUATION = 7; // a later unit of the slab or object that starts before it
export const UNIT_QUARANTINED = 8; // a slab a reaper found half-updated: never allocated from or released
/** Names of the unit states, indexed by state. */
export const UNIT_STATE_NAMES = ['decommitted', 'dirty', 'retained', 'slab', 'empty slab', 'large', 'parked', 'continuation', 'quarantined'] as const;

/** One carved arena; its units are `unitState[index * unitsPerArena ...]`. */
export interface ArenaPicture {
  base: number;
  /** Its owner slot now (an arena is taken over when its owner leaves), and the slot that laid it out. */
  owner: number;
  carver: number;
  /** False when a live agent other than the taker owns it: its records may be a moment old. */
  exact: boolean;
  freeUnits: number;
  dirtyUnits: number;
  retainedUnits: number;
}

/** One size class over the whole heap (index 16: large objects, one per block). */
export interface ClassPicture {
  /** Object bytes (0 for large objects, whose sizes vary). */
  size: number;
  slabs: number;
  live: number;
  /** Objects the class's slabs could still hand out (free lists and never-used space). */
  free: number;
  liveBytes: number;
}

/** One owner slot of the registry. */
export interface OwnerPicture {
  slot: number;
  state: 'live' | 'detached' | 'orphaned' | 'adopted';
  /** The slot that took it over (adopted), else 0. */
  adoptedBy: number;
  /** Whether batches of frees wait in its inbox. */
  inboxPending: boolean;
  arenas: number;
  liveBytes: number;
  /** Live objects per class (index 16: large objects). */
  liveByClass: number[];
}

/** One agent area: an agent that is attached, left, died or was reaped. */
export interface AgentPicture {
  agentId: number;
  state: 'live' | 'detached' | 'reaped' | 'crashed' | 'vacant' | 'claiming';
  ownerSlot: number;
  /** Its thread's key (Node: threadId + 1; 0 in a browser). */
  thread: number;
  /** Whether this is the agent that took the picture (its figures are exact). */
  self: boolean;
  /** Blocks in its thread cache per class, and their bytes. */
  cacheBlocks: number[];
  cacheBytes: number;
  /** Frees waiting in its chains for other owners, and whether it is flushing one right now. */
  pendingChainObjects: number;
  flushing: boolean;
  /** Oversized mappings it keeps for reuse: base, reservation bytes, committed bytes. */
  stash: { base: number; reservation: number; committed: number }[];
  /** Units of freed large blocks its arenas keep committed (its retention ledger's share in arenas), in bytes. */
  retainedBytes: number;
}

/** A live large object or a parked large block. */
export interface LargePicture {
  address: number;
  bytes: number;
  owner: number;
  parked: boolean;
}

/** The arena heap's part of a heap snapshot. */
export interface ArenaSnapshot {
  unitBytes: number;
  arenaBytes: number;
  unitsPerArena: number;
  regionBytes: number;
  /** Region bases, in address order (each holds 31 arena slots after its header slot). */
  regions: number[];
  arenas: ArenaPicture[];
  /** Per unit of every arena in `arenas` (in that order): one of the UNIT_ states. */
  unitState: Uint8Array;
  /** Per unit: its slab's class (0-15), 16 for a large object, 255 for none. */
  unitClass: Uint8Array;
  /** Per first unit of a slab or object: its live objects; 0 elsewhere. */
  unitLive: Uint32Array;
  /** Per first unit of a slab or object: the units it spans; 0 elsewhere. */
  unitSpan: Uint16Array;
  classes: ClassPicture[];
  large: LargePicture[];
  owners: OwnerPicture[];
  agents: AgentPicture[];
  quarantinedBytes: number;
  /** Arena units in use (slabs, objects, parked blocks) and each arena's committed metadata pages, in bytes. */
  usedBytes: number;
  /**
   * Freed blocks waiting in the heap's exchange, handed over by full thread caches, per class (index 0-15), and
   * their bytes; like cached blocks, they count as live in their slabs.
   */
  exchangeBlocks: number[];
  exchangeBytes: number;
}

const AGENT_STATE_NAMES: Record<number, AgentPicture['state']> = {
  [AGENT_LIVE]: 'live',
  [AGENT_DETACHED]: 'detached',
  [AGENT_REAPED]: 'reaped',
  [AGENT_CRASHED]: 'crashed',
  [AGENT_VACANT]: 'vacant',
  [AGENT_CLAIMING]: 'claiming',
};

/** Takes the arena heap's picture from agent `h` (see the file's comment for what is exact). */
export function snapshotArenas(h: ArenaHeap): ArenaSnapshot {
  h.space.refresh();
  const owners = ownerPictures(h);
  const liveOwners = new Set(owners.filter((o) => o.state === 'live').map((o) => o.slot));
  const bases = h.regions.carvedArenas().filter((b) => h.coverMeta(b) && Atomics.load(h.i32, headerIndex(b, h.arenaBytes) + A_MAGIC) === ARENA_MAGIC);
  const units = h.units;
  const unitState = new Uint8Array(bases.length * units);
  const unitClass = new Uint8Array(bases.length * units).fill(255);
  const unitLive = new Uint32Array(bases.length * units);
  const unitSpan = new Uint16Array(bases.length * units);
  const classes: ClassPicture[] = [];
  for (let c = 0; c <= CLASS_COUNT; c++) classes.push({ size: c < CLASS_COUNT ? 32 << c : 0, slabs: 0, live: 0, free: 0, liveBytes: 0 });
  const byOwner = new Map(owners.map((o) => [o.slot, o]));
  const arenas: ArenaPicture[] = [];
  const large: LargePicture[] = [];
  let quarantinedBytes = 0;
  let usedBytes = 0;
  const i32 = h.i32;
  for (let a = 0; a < bases.length; a++) {
    const base = bases[a]!;
    const hb = headerIndex(base, h.arenaBytes);
    const owner = i32[hb + A_KIND_OWNER]! >>> 8;
    arenas.push({
      base,
      owner,
      carver: i32[hb + A_CARVER]!,
      exact: owner === h.slot || !liveOwners.has(owner),
      freeUnits: i32[hb + A_FREE_UNITS]!,
      dirtyUnits: i32[hb + A_DIRTY_UNITS]!,
      retainedUnits: i32[hb + A_RETAINED_UNITS]!,
    });
    usedBytes += h.metaBytes; // its header and records, in its region's slot 0
    const o = byOwner.get(owner);
    if (o !== undefined) o.arenas++;
    const at = a * units;
    for (let u = 0; u < units; u++) {
      const word = hb + (u >>> 5);
      const mask = 1 << (u & 31);
      if ((i32[word + A_UNIT_BITS]! & mask) === 0) {
        unitState[at + u] = (i32[word + A_RETAINED_BITS]! & mask) !== 0 ? UNIT_RETAINED : (i32[word + A_DIRTY_BITS]! & mask) !== 0 ? UNIT_DIRTY : UNIT_DECOMMITTED;
        continue;
      }
      usedBytes += UNIT;
      const ri = recordIndex(base, u, h.arenaBytes);
      const info = i32[ri + R_INFO]!;
      const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
      if (cls <= LARGE_CLASS) unitClass[at + u] = cls;
      if ((info & STATE_MASK) === STATE_CONT) {
        unitState[at + u] = UNIT_CONTINUATION;
        continue;
      }
      if ((info & STATE_MASK) !== STATE_HEAD || cls > LARGE_CLASS) continue; // being laid out: left decommitted
      const span = Math.max(1, Math.min(i32[ri + R_SPAN]!, units - u));
      const live = Math.max(0, i32[ri + R_LIVE]!);
      unitSpan[at + u] = span;
      unitLive[at + u] = live;
      if ((info & FLAG_QUARANTINE) !== 0) {
        unitState[at + u] = UNIT_QUARANTINED;
        quarantinedBytes += span * UNIT;
        continue;
      }
      const c = classes[cls]!;
      if (cls === LARGE_CLASS) {
        const bytes = h.u32[ri + R_SIZE]!;
        unitState[at + u] = live > 0 ? UNIT_LARGE : UNIT_PARKED;
        large.push({ address: base + (u << UNIT_SHIFT), bytes, owner, parked: live === 0 });
        c.slabs++;
        c.live += live;
        c.liveBytes += live * bytes;
        if (o !== undefined && live > 0) {
          o.liveByClass[cls]! += live;
          o.liveBytes += bytes;
        }
        continue;
      }
      const size = 32 << cls;
      const capacity = (span << UNIT_SHIFT) / size;
      const held = Math.min(live, capacity);
      unitState[at + u] = held > 0 ? UNIT_SLAB : UNIT_EMPTY_SLAB;
      c.slabs++;
      c.live += held;
      c.free += capacity - held;
      c.liveBytes += held * size;
      if (o !== undefined) {
        o.liveByClass[cls]! += held;
        o.liveBytes += held * size;
      }
    }
  }
  const exchange = exchangeHeld(h);
  return {
    unitBytes: UNIT,
    arenaBytes: h.arenaBytes,
    unitsPerArena: units,
    regionBytes: h.arenaBytes * 32,
    regions: h.regions.regionList().sort((x, y) => x - y),
    arenas,
    unitState,
    unitClass,
    unitLive,
    unitSpan,
    classes,
    large,
    owners,
    agents: agentPictures(h, arenas),
    quarantinedBytes,
    usedBytes,
    exchangeBlocks: exchange.blocks,
    exchangeBytes: exchange.bytes,
  };
}

/** Every owner slot taken so far, with its state and inbox (arenas and live figures are added by the walk). */
function ownerPictures(h: ArenaHeap): OwnerPicture[] {
  const out: OwnerPicture[] = [];
  const n = h.registry.ownerCount();
  for (let slot = 1; slot <= n; slot++) {
    const s = h.registry.slotState(slot);
    const state: OwnerPicture['state'] = (s & SLOT_ADOPTED) !== 0 ? 'adopted' : s === SLOT_DETACHED ? 'detached' : s === SLOT_LIVE ? 'live' : 'orphaned';
    out.push({
      slot,
      state,
      adoptedBy: (s & SLOT_ADOPTED) !== 0 ? s >>> 8 : 0,
      inboxPending: h.registry.inboxHead(slot) !== 0,
      arenas: 0,
      liveBytes: 0,
      liveByClass: new Array<number>(CLASS_COUNT + 1).fill(0),
    });
  }
  return out;
}

/** Every agent area on the heap's list, read with bounds on every count (another agent may be writing them). */
function agentPictures(h: ArenaHeap, arenas: ArenaPicture[]): AgentPicture[] {
  const space = h.space;
  const out: AgentPicture[] = [];
  for (const area of agentAreas(space, h.agentListHead())) {
    const aw = area >>> 2;
    const u32 = space.u32;
    const state = AGENT_STATE_NAMES[u32[aw + G_STATE]!] ?? 'crashed';
    const ownerSlot = u32[aw + G_OWNER_SLOT]!;
    const cacheBlocks: number[] = [];
    let cacheBytes = 0;
    let pendingChainObjects = 0;
    const stash: AgentPicture['stash'] = [];
    if (state !== 'vacant' && state !== 'reaped') {
      for (let c = 0; c < CLASS_COUNT; c++) {
        const n = Math.min(u32[aw + G_CACHE_COUNT + c]!, u32[aw + G_CACHE_DEPTH + c]!, CACHE_STRIDE);
        cacheBlocks.push(n);
        cacheBytes += n * (32 << c);
      }
      const map = u32[aw + G_MAP_ADDR]!;
      const cap = u32[aw + G_MAP_CAP]!;
      if (cap >= CHAIN_MAP_INITIAL && cap <= 1 << 24 && space.covers(map + cap * 8)) {
        for (let o = 1; o < cap; o++) pendingChainObjects += Math.min(u32[(map >>> 2) + 2 * o + 1]!, CHAIN_FLUSH);
      }
      const stashed = Math.min(u32[aw + G_STASH_COUNT]!, STASH_CAPACITY);
      for (let i = 0; i < stashed; i++) {
        const w = ((area + STASH_OFFSET) >>> 2) + 3 * i;
        stash.push({ base: u32[w]!, reservation: u32[w + 1]! * 1024, committed: u32[w + 2]! });
      }
    } else {
      for (let c = 0; c < CLASS_COUNT; c++) cacheBlocks.push(0);
    }
    let retainedBytes = 0;
    if (ownerSlot !== 0) for (const a of arenas) if (a.owner === ownerSlot) retainedBytes += a.retainedUnits * UNIT;
    out.push({
      agentId: u32[aw + G_AGENT_ID]!,
      state,
      ownerSlot,
      thread: u32[aw + G_THREAD]!,
      self: area === h.agentArea,
      cacheBlocks,
      cacheBytes,
      pendingChainObjects,
      flushing: Atomics.load(space.i32, aw + G_FLUSH_PHASE) === 1,
      stash,
      retainedBytes,
    });
  }
  return out;
}
