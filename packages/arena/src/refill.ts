/**
 * The allocation slow path: when the current slab of a class is exhausted, delivered batches are reclaimed if any
 * wait (until the class has a block on its cache stack, and the allocation is taken from there), then a partial
 * slab of the class is taken, then a kept empty one (empty-slabs.ts), then a new slab in one of the agent's arenas
 * (newest first), then one in an arena taken over from an owner that left, then a new arena. Large objects take a
 * run of units the same way. Finding a run of units is unit-map.ts's part.
 */
import { HeapError } from '@paddock/platform';
import { CACHE_STACKS_OFFSET, G_CACHE_COUNT, G_CACHE_DEPTH, G_OPENING_ARENA } from './agent-layout.js';
import { popCached } from './cache-stack.js';
import type { ArenaHeap } from './arena-heap.js';
import { drain } from './drain.js';
import { EXCHANGE_BATCH, exchangeServes, takeFromExchange } from './exchange.js';
import { TRIM_EVERY } from './empty-slabs.js';
import {
  ARENA_MAGIC,
  A_CARVER,
  A_FREE_UNITS,
  A_HINT,
  A_KIND_OWNER,
  A_MAGIC,
  A_PARTIAL,
  A_RUN_BOUND,
  A_UNITS,
  A_UNIT_BITS,
  FLAG_CURRENT,
  KIND_ARENA,
  LARGE_CLASS,
  R_BUMP,
  R_LIVE,
  R_SIZE,
  UNIT,
  UNIT_SHIFT,
  arenaMeta,
  headerIndex,
  recordIndex,
} from './layout.js';
import { adoptOrphans, takeSlot } from './ownership.js';
import { sweepDue } from './release.js';
import { largeBytes, MAX_CLASS_SIZE, spanOf } from './size-class.js';
import { initSlab, setFlags, unlinkPartial } from './slab.js';
import { findRun, findUnit } from './unit-map.js';

/** Gives class `cls` a new current slab (the old one is full) and allocates from it. */
export function allocSlow(h: ArenaHeap, cls: number): number {
  if (h.detached) throw detachedError();
  const old = h.current[cls]!;
  if (old !== 0) {
    setFlags(h, old, 0, FLAG_CURRENT);
    h.current[cls] = 0;
  }
  // Blocks of the class that full caches handed to the exchange: batches onto the stack while it has room.
  if (exchangeServes(h, cls)) {
    const aw = h.agentArea >>> 2;
    const m = h.u32[aw + G_CACHE_COUNT + cls]!;
    let got = 0;
    for (let n = m; n + EXCHANGE_BATCH <= h.u32[aw + G_CACHE_DEPTH + cls]!; ) {
      const c = takeFromExchange(h, cls, n);
      if (c === 0) break;
      n += c;
      got += c;
    }
    if (got !== 0) {
      const p = popCached(h.u32, aw + G_CACHE_COUNT, (h.agentArea + CACHE_STACKS_OFFSET) >>> 2, cls);
      if (p !== 0) return p;
    }
  }
  // Frees delivered by other agents, batch by batch until this class has a block: every object onto its class's
  // cache stack while that has room (for this allocation and the next ones), the rest onto their slabs.
  if (batchesWaiting(h)) {
    drain(h, cls);
    const p = popCached(h.u32, (h.agentArea >>> 2) + G_CACHE_COUNT, (h.agentArea + CACHE_STACKS_OFFSET) >>> 2, cls);
    if (p !== 0) return p;
    if (h.current[cls] !== 0) return h.allocClass(cls);
  }
  // Sweeps and kept-slab trims wait SWEEP_DELAY_MS; a look at the clock costs, so every TRIM_EVERYth refill looks.
  if ((++h.refills & (TRIM_EVERY - 1)) === 0 && (h.sweepsDue.size !== 0 || h.emptySlabs.over)) sweepDue(h, false);
  let slab = popPartial(h, cls);
  if (slab === 0) slab = h.emptySlabs.take(h, cls);
  if (slab === 0) slab = reserveSpan(h, spanOf(cls), cls);
  setFlags(h, slab, FLAG_CURRENT, 0);
  h.current[cls] = slab;
  return h.allocClass(cls);
}

/** Whether frees other agents delivered wait for this agent: in its inbox, or in its queue of batches not begun. */
function batchesWaiting(h: ArenaHeap): boolean {
  return h.slot !== 0 && (Atomics.load(h.i32, h.inbox) !== 0 || h.u32[h.drainQueue] !== 0);
}

/** Takes a partial slab of class `cls` off its list (newest arena first); 0 when there is none. */
function popPartial(h: ArenaHeap, cls: number): number {
  const u32 = h.u32;
  for (let i = h.arenas.length - 1; i >= 0; i--) {
    const base = h.arenas[i]!;
    const s = u32[headerIndex(base, h.arenaBytes) + A_PARTIAL + cls]!;
    if (s !== 0) {
      unlinkPartial(h, base, s, cls);
      return s;
    }
  }
  return 0;
}

/**
 * Allocates a large object: above 1 MiB up to `largeMax`, rounded up to 1 KiB, one object on its own run of
 * units. Frees delivered by other agents are drained first, so their blocks (often parked whole, or their units
 * retained, committed) serve this request.
 * @throws RangeError for a size outside (1 MiB, largeMax].
 */
export function allocLarge(h: ArenaHeap, size: number): number {
  if ((size >>> 0) !== size || size <= MAX_CLASS_SIZE || size > h.largeMax) {
    throw new RangeError(`large size must be an integer above ${MAX_CLASS_SIZE} up to ${h.largeMax} bytes, got ${String(size)}`);
  }
  if (h.detached) throw detachedError();
  if (batchesWaiting(h)) drain(h);
  const bytes = largeBytes(size);
  const span = (bytes + UNIT - 1) >>> UNIT_SHIFT;
  // A parked block of the same span is laid out already: no search, no record to rewrite.
  let s = h.retention !== null ? h.retention.takeParked(span) : 0;
  if (s === 0) s = reserveSpan(h, span, LARGE_CLASS);
  const base = (s & h.arenaMask) >>> 0;
  const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT, h.arenaBytes);
  h.u32[ri + R_SIZE] = bytes;
  h.u32[ri + R_BUMP] = s + bytes;
  h.i32[ri + R_LIVE] = 1;
  h.i32[(s >>> 2) + 1] = 0;
  return s;
}

/**
 * Finds `span` free units for a new slab of class `cls` in the agent's arenas (newest first, skipping those
 * whose free count or run bound is too low), else in arenas taken over from owners that left, else in a new
 * arena, and lays the slab out there. Returns its address.
 */
function reserveSpan(h: ArenaHeap, span: number, cls: number): number {
  const i32 = h.i32;
  for (let i = h.arenas.length - 1; i >= 0; i--) {
    const base = h.arenas[i]!;
    const hb = headerIndex(base, h.arenaBytes);
    if (i32[hb + A_FREE_UNITS]! < span || i32[hb + A_RUN_BOUND]! < span) continue;
    const u = span === 1 ? findUnit(h, base) : findRun(h, base, span);
    if (u >= 0) return initSlab(h, base, u, span, cls);
  }
  // Before carving: emptied slabs kept for other classes and parked large blocks go back to the units, and
  // owners that left may have arenas with room (and frees waiting for someone to take them).
  if (h.emptySlabs.count !== 0) {
    h.emptySlabs.releaseAll(h);
    return reserveSpan(h, span, cls);
  }
  if (h.retention !== null && h.retention.releaseParked() !== 0) return reserveSpan(h, span, cls);
  if (h.registry.departures() !== h.seenDepartures && adoptOrphans(h) !== 0) return reserveSpan(h, span, cls);
  const base = newArena(h);
  const u = span === 1 ? findUnit(h, base) : findRun(h, base, span);
  return initSlab(h, base, u, span, cls);
}

/** Carves a new arena for the agent (taking an owner slot on the first) and lays out its header. */
function newArena(h: ArenaHeap): number {
  const base = h.regions.carveArena();
  Atomics.store(h.i32, (h.agentArea >>> 2) + G_OPENING_ARENA, base | 0); // for a reaper, until the magic
  if (h.slot === 0) takeSlot(h);
  const space = h.space;
  // The header and records live in the region's slot 0 (layout.ts): their pages, not the arena's.
  const meta = arenaMeta(base, h.arenaBytes);
  space.commit(meta, h.metaBytes);
  h.sync();
  space.u8.fill(0, meta, meta + h.metaBytes); // contents of a re-carved range are undefined
  const i32 = h.i32;
  const hb = meta >>> 2;
  i32[hb + A_KIND_OWNER] = KIND_ARENA | (h.slot << 8);
  i32[hb + A_CARVER] = h.slot;
  i32[hb + A_FREE_UNITS] = h.usableUnits;
  i32[hb + A_RUN_BOUND] = h.usableUnits;
  i32[hb + A_HINT] = 0;
  i32[hb + A_UNITS] = h.units;
  Atomics.store(i32, hb + A_MAGIC, ARENA_MAGIC);
  Atomics.store(i32, (h.agentArea >>> 2) + G_OPENING_ARENA, 0);
  h.arenas.push(base);
  return base;
}

function detachedError(): HeapError {
  return new HeapError('DETACHED', 'this agent has detached from the heap');
}
