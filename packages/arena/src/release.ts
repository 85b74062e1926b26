/**
 * Giving memory back: a slab whose last object was freed is released (its units cleared in the bitmap and
 * decommitted at once, marked dirty for a later sweep, or kept committed for the large tier; a large block the
 * large tier parks stays laid out whole), dirty units are
 * swept once they have stayed above the threshold for a while, and an arena left empty goes back to its region
 * (or stays as the agent's one spare). An idle agent gives back what it can in one go.
 */
import type { ArenaHeap } from './arena-heap.js';
import { clearBitRange, setBitRange } from '@paddock/platform';
import {
  A_DIRTY_BITS,
  A_DIRTY_UNITS,
  A_FREE_UNITS,
  A_HINT,
  A_MAGIC,
  A_RETAINED_BITS,
  A_RETAINED_UNITS,
  A_RUN_BOUND,
  A_UNIT_BITS,
  FLAG_CURRENT,
  R_BUMP,
  R_FREE,
  R_INFO,
  R_LIVE,
  R_SPAN,
  STATE_FREE,
  UNIT_SHIFT,
  arenaMeta,
  headerIndex,
  recordIndex,
} from './layout.js';
import { G_OPENING_ARENA } from './agent-layout.js';
import { CLASS_COUNT } from './size-class.js';
import { runAround } from './unit-map.js';

/**
 * An arena whose dirty units reach the sweep threshold is swept once it has stayed there this long: units
 * released and soon carved again (a producer whose slabs its consumers keep emptying, an agent whose own random
 * churn of 32 KiB blocks releases and carves two-unit slabs all the time) are then never decommitted and faulted
 * back in between. 10 ms was short for the second (docs/design/arena.md). The idle tick and the idle return
 * sweep whatever is due.
 */
export const SWEEP_DELAY_MS = 100;

/**
 * How a large block's units may stay committed after it is freed (the large tier's retention ledger).
 * Admission is all or nothing.
 */
export interface SpanRetention {
  /** Whether `units` units of a freed large block may be kept committed; if so they are on the ledger. */
  admitUnits(units: number): boolean;
  /** `units` retained units left the ledger (carved again, or their arena was released). */
  unitsTaken(units: number): void;
  /**
   * Whether the freed large block at `s` on `span` units may stay parked: laid out whole with nothing live
   * (its units in use, its records kept), so that the next large block of the same span takes it back without
   * a search or a record rewrite. If so its units are on the ledger and the block on the tier's park list.
   */
  parkRun(s: number, span: number): boolean;
  /**
   * A parked block for a large block of `span` units, off the list and the ledger (0 when none is parked on
   * exactly `span` units; a larger one, if any, is released first so that the carve finds its units retained).
   */
  takeParked(span: number): number;
  /** Releases every parked block (its units retained where the ledger admits them); returns how many. */
  releaseParked(): number;
}

/**
 * Releases the slab (or large block, with `large`) on units [u, u + span) of the arena at `base`. A large block
 * the tier parks stays as it is, empty; otherwise its records go free and its units are cleared in the bitmap,
 * then kept committed for the large tier, decommitted at once (a span of at least the decommit span, or an
 * inherited arena), or marked dirty for a sweep.
 */
export function releaseSlab(h: ArenaHeap, base: number, u: number, span: number, large: boolean): void {
  if (large && h.retention !== null && !(h.inherited.size !== 0 && h.inherited.has(base)) && h.retention.parkRun(base + (u << UNIT_SHIFT), span)) {
    // Parked: an empty large block that never handed anything out, as a reaper's repair reads it (and releases it).
    const ri = recordIndex(base, u, h.arenaBytes);
    h.u32[ri + R_FREE] = 0;
    h.u32[ri + R_BUMP] = base + (u << UNIT_SHIFT);
    return;
  }
  freeUnits(h, base, u, span, large);
}

/**
 * Releases a parked large block (see {@link SpanRetention.parkRun}; the tier has taken it off its list and
 * ledger): its units go free as a freed large block's do, retained if the ledger admits them.
 */
export function unparkRun(h: ArenaHeap, s: number): void {
  const base = (s & h.arenaMask) >>> 0;
  const u = (s - base) >>> UNIT_SHIFT;
  freeUnits(h, base, u, h.i32[recordIndex(base, u, h.arenaBytes) + R_SPAN]!, true);
}

/** Frees units [u, u + span) of the arena at `base` (see {@link releaseSlab}). */
function freeUnits(h: ArenaHeap, base: number, u: number, span: number, large: boolean): void {
  const i32 = h.i32;
  const hb = headerIndex(base, h.arenaBytes);
  for (let k = u; k < u + span; k++) {
    const rk = recordIndex(base, k, h.arenaBytes);
    i32[rk + R_INFO] = STATE_FREE;
    i32[rk + R_SPAN] = 0;
  }
  clearBitRange(i32, hb + A_UNIT_BITS, u, span);
  const free = i32[hb + A_FREE_UNITS]! + span;
  i32[hb + A_FREE_UNITS] = free;
  if (u < i32[hb + A_HINT]!) i32[hb + A_HINT] = u;
  const run = runAround(h, base, u, span);
  if (run > i32[hb + A_RUN_BOUND]!) i32[hb + A_RUN_BOUND] = run;
  if (large && h.retention !== null && h.retention.admitUnits(span)) {
    // Retained: the units stay committed for the next large block; the sweep leaves them alone.
    setBitRange(i32, hb + A_RETAINED_BITS, u, span);
    i32[hb + A_RETAINED_UNITS] += span;
  } else if (span >= h.decommitSpan || (h.inherited.size !== 0 && h.inherited.has(base))) {
    h.space.decommit(base + (u << UNIT_SHIFT), span << UNIT_SHIFT);
  } else {
    setBitRange(i32, hb + A_DIRTY_BITS, u, span);
    i32[hb + A_DIRTY_UNITS] += span;
    if (i32[hb + A_DIRTY_UNITS]! >= h.sweepThreshold && !h.sweepsDue.has(base)) h.sweepsDue.set(base, performance.now());
  }
  if (free === h.usableUnits) arenaEmptied(h, base);
}

/**
 * Trims the kept empty slabs (empty-slabs.ts) and sweeps the arenas whose dirty units have stayed at or above
 * the threshold for {@link SWEEP_DELAY_MS} (all of them with `force`); an arena whose dirty units were carved
 * again below it is let off.
 * Returns the units decommitted.
 */
export function sweepDue(h: ArenaHeap, force: boolean): number {
  if (h.emptySlabs.over) h.emptySlabs.trim(h, force);
  let swept = 0;
  const now = force ? 0 : performance.now();
  for (const [base, since] of h.sweepsDue) {
    const hb = headerIndex(base, h.arenaBytes);
    const empty = h.i32[hb + A_FREE_UNITS] === h.usableUnits;
    if (!h.arenas.includes(base) || (!empty && h.i32[hb + A_DIRTY_UNITS]! < h.sweepThreshold)) {
      h.sweepsDue.delete(base);
    } else if (force || now - since >= SWEEP_DELAY_MS) {
      h.sweepsDue.delete(base);
      // An arena still empty goes back to its region unless it is the agent's only empty one (the spare).
      if (empty && emptyArenas(h) > 1) releaseArena(h, base);
      else swept += sweep(h, base);
    }
  }
  return swept;
}

/** How many of the agent's arenas hold no slab. */
function emptyArenas(h: ArenaHeap): number {
  let n = 0;
  for (const a of h.arenas) if (h.i32[headerIndex(a, h.arenaBytes) + A_FREE_UNITS] === h.usableUnits) n++;
  return n;
}

/** Decommits every dirty unit of the arena, run by run. Returns the units decommitted. */
export function sweep(h: ArenaHeap, base: number): number {
  const swept = decommitMarked(h, base, A_DIRTY_BITS);
  h.i32[headerIndex(base, h.arenaBytes) + A_DIRTY_UNITS] = 0;
  h.sweepsDue.delete(base);
  return swept;
}

/**
 * Decommits every run of units whose bit is set in the arena's bitmap at word `bits` (the dirty or the
 * retained one) and clears those bits. Returns the units decommitted.
 */
function decommitMarked(h: ArenaHeap, base: number, bits: number): number {
  const i32 = h.i32;
  const at = headerIndex(base, h.arenaBytes) + bits;
  let done = 0;
  let u = 0;
  while (u < h.units) {
    if ((i32[at + (u >>> 5)]! & (1 << (u & 31))) === 0) {
      u++;
      continue;
    }
    const start = u;
    while (u < h.units && (i32[at + (u >>> 5)]! & (1 << (u & 31))) !== 0) u++;
    clearBitRange(i32, at, start, u - start);
    h.space.decommit(base + (start << UNIT_SHIFT), (u - start) << UNIT_SHIFT);
    done += u - start;
  }
  return done;
}

/**
 * An arena of the agent has no slab left. It is released (or kept as the one spare, dirty units swept)
 * {@link SWEEP_DELAY_MS} later by {@link sweepDue}, if it is still empty then: an agent whose blocks all come
 * home together (a producer whose consumer frees everything it sent) empties its arena and carves the same
 * units again at once, and releasing or sweeping here made every one of them fault back in (measured on the
 * bench's producer-consumer: 248,006 page faults in one run, 265-306 arenas released per producer; docs/design/arena.md).
 * An inherited arena (see {@link ArenaHeap.inherited}) goes back at once: nobody is about to reuse it.
 */
function arenaEmptied(h: ArenaHeap, base: number): void {
  if (h.inherited.size !== 0 && h.inherited.delete(base)) releaseArena(h, base);
  else h.sweepsDue.set(base, performance.now());
}

/**
 * Gives an empty arena back to its region: its magic is cleared first so stale pointers are refused. From then until
 * the region has it back (two decommits later) the arena is carved with no magic, which no reaper would recognize as
 * anyone's: the agent names it in its area meanwhile (G_OPENING_ARENA, as while carving one), so that a reaper of an
 * agent stopped in between gives it back (reap.ts, releaseUnlaidArena). The word is cleared right after the region
 * cleared the arena's bit, with no call between where the agent could be stopped.
 */
export function releaseArena(h: ArenaHeap, base: number): void {
  const at = h.arenas.indexOf(base);
  if (at >= 0) h.arenas.splice(at, 1);
  const retained = h.i32[headerIndex(base, h.arenaBytes) + A_RETAINED_UNITS]!;
  if (retained !== 0 && h.retention !== null) h.retention.unitsTaken(retained);
  const i32 = h.i32; // its own area: this view reaches it whatever the buffer does meanwhile
  const releasing = (h.agentArea >>> 2) + G_OPENING_ARENA;
  Atomics.store(i32, releasing, base | 0);
  Atomics.store(i32, headerIndex(base, h.arenaBytes) + A_MAGIC, 0);
  returnArena(h, base);
  Atomics.store(i32, releasing, 0);
}

/**
 * Hands a carved arena back to its region with no page of it committed: its metadata chunk (in the region's
 * slot 0) is decommitted first, then the region decommits the arena and clears its slot bit, so nobody can
 * carve it again while its metadata still holds pages.
 */
export function returnArena(h: ArenaHeap, base: number): void {
  h.space.decommit(arenaMeta(base, h.arenaBytes), h.metaBytes);
  h.regions.releaseArena(base);
}

/**
 * What an idle agent gives back of its arenas: kept empty slabs, parked large blocks and current slabs with
 * nothing live are released, every dirty unit is decommitted, and empty arenas go back to their regions but one
 * spare (its metadata pages only), or all of them when `keepSpare` is false (an agent that leaves).
 */
export function releaseIdle(h: ArenaHeap, keepSpare: boolean): void {
  h.emptySlabs.releaseAll(h);
  // Parked large blocks too (a drain after the tier's purge may have parked one): an arena handed over must
  // hold no empty block that only this agent's list knows of.
  if (h.retention !== null) h.retention.releaseParked();
  for (let cls = 0; cls < CLASS_COUNT; cls++) {
    const s = h.current[cls]!;
    if (s === 0) continue;
    const base = (s & h.arenaMask) >>> 0;
    const u = (s - base) >>> UNIT_SHIFT;
    const ri = recordIndex(base, u, h.arenaBytes);
    if (h.i32[ri + R_LIVE] !== 0) continue;
    h.current[cls] = 0;
    h.i32[ri + R_INFO] &= ~FLAG_CURRENT;
    releaseSlab(h, base, u, h.i32[ri + R_SPAN]!, false);
  }
  for (const base of [...h.arenas]) if (h.arenas.includes(base)) sweep(h, base);
  const i32 = h.i32;
  const empty = h.arenas.filter((a) => i32[headerIndex(a, h.arenaBytes) + A_FREE_UNITS] === h.usableUnits);
  for (let i = keepSpare ? 1 : 0; i < empty.length; i++) releaseArena(h, empty[i]!);
}

/** Decommits every retained unit of the agent's arenas; returns the units given back. */
export function purgeRetained(h: ArenaHeap): number {
  let purged = 0;
  for (const base of h.arenas) purged += dropRetained(h, base);
  return purged;
}

/** Decommits the arena's retained units and zeroes their count; returns how many there were. */
export function dropRetained(h: ArenaHeap, base: number): number {
  if (h.i32[headerIndex(base, h.arenaBytes) + A_RETAINED_UNITS] === 0) return 0;
  const dropped = decommitMarked(h, base, A_RETAINED_BITS);
  h.i32[headerIndex(base, h.arenaBytes) + A_RETAINED_UNITS] = 0;
  return dropped;
}
