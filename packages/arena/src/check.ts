/**
 * Inspection: the figures of an agent's arenas (`stats`), and the walk that validates their invariants
 * (`check`). The rules one slab's record must keep are one function, `slabProblem`, which a reaper's repair
 * uses too to tell a slab it can trust from one a dead agent left half-updated.
 */
import { HeapError, formatAddress } from '@paddock/platform';
import type { ArenaHeap } from './arena-heap.js';
import {
  ARENA_MAGIC,
  A_DIRTY_BITS,
  A_DIRTY_UNITS,
  A_FREE_UNITS,
  A_KIND_OWNER,
  A_MAGIC,
  A_PARTIAL,
  A_RETAINED_BITS,
  A_RETAINED_UNITS,
  A_RUN_BOUND,
  A_UNITS,
  A_UNIT_BITS,
  CLASS_MASK,
  CLASS_SHIFT,
  FLAG_CURRENT,
  FLAG_PARTIAL,
  FLAG_QUARANTINE,
  KIND_ARENA,
  LARGE_CLASS,
  R_BUMP,
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
  headerIndex,
  recordIndex,
} from './layout.js';
import { CLASS_COUNT, LARGE_ROUND, MAX_CLASS_SIZE, spanOf } from './size-class.js';

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
  /** Emptied slabs kept for their class's next refill, and their bytes (see empty-slabs.ts). */
  keptSlabs: number;
  keptBytes: number;
  perClass: ClassStats[];
}

/** The agent's arenas, counted. */
export function stats(h: ArenaHeap): ArenaStats {
  const perClass: ClassStats[] = [];
  for (let c = 0; c < CLASS_COUNT; c++) perClass.push({ size: 32 << c, slabs: 0, live: 0, free: 0 });
  const i32 = h.i32;
  let used = 0;
  let dirty = 0;
  let retained = 0;
  let largeObjects = 0;
  let largeBytes = 0;
  let liveBytes = 0;
  for (const base of h.arenas) {
    const hb = headerIndex(base, h.arenaBytes);
    used += h.usableUnits - i32[hb + A_FREE_UNITS]!;
    dirty += i32[hb + A_DIRTY_UNITS]!;
    retained += i32[hb + A_RETAINED_UNITS]!;
    for (let u = 0; u < h.units; u++) {
      const ri = recordIndex(base, u, h.arenaBytes);
      const info = i32[ri + R_INFO]!;
      if ((info & STATE_MASK) !== STATE_HEAD || (info & FLAG_QUARANTINE) !== 0) continue;
      const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
      const live = i32[ri + R_LIVE]!;
      if (cls === LARGE_CLASS) {
        largeObjects += live;
        largeBytes += live * h.u32[ri + R_SIZE]!;
        liveBytes += live * h.u32[ri + R_SIZE]!;
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
    ownerSlot: h.slot,
    arenas: h.arenas.length,
    liveBytes,
    usedUnits: used,
    dirtyUnits: dirty,
    retainedUnits: retained,
    largeObjects,
    largeBytes,
    pendingChainObjects: h.chains.pendingObjects(),
    quarantinedBytes: h.quarantinedBytes,
    keptSlabs: h.emptySlabs.count,
    keptBytes: h.emptySlabs.bytes,
    perClass,
  };
}

/**
 * Walks every arena the agent owns and validates its invariants: header, bitmaps and counts, unit
 * records, every free list (inside its slab, aligned, below the bump, no cycle), live counts, partial
 * lists and the current slabs. Other agents' arenas get the header checks their owners cannot race with.
 * @throws HeapError CORRUPTION naming the first broken invariant.
 */
export function check(h: ArenaHeap): void {
  for (const base of h.regions.carvedArenas()) {
    if (!h.coverMeta(base)) continue; // carved elsewhere, header not committed yet
    const i32 = h.i32;
    const hb = headerIndex(base, h.arenaBytes);
    const magic = Atomics.load(i32, hb + A_MAGIC);
    if (magic === 0) continue; // being laid out, or not an arena of this tier
    if (magic !== ARENA_MAGIC) throw corrupt(base, `bad magic ${magic}`);
    if ((i32[hb + A_KIND_OWNER]! & 255) !== KIND_ARENA) throw corrupt(base, 'bad kind');
    if (i32[hb + A_UNITS] !== h.units) throw corrupt(base, `unit count ${i32[hb + A_UNITS]}`);
  }
  for (const base of h.arenas) checkArena(h, base);
  for (let cls = 0; cls < CLASS_COUNT; cls++) {
    const s = h.current[cls]!;
    if (s === 0) continue;
    const base = (s & h.arenaMask) >>> 0;
    const info = h.i32[recordIndex(base, (s - base) >>> UNIT_SHIFT, h.arenaBytes) + R_INFO]!;
    if ((info & FLAG_CURRENT) === 0 || ((info >>> CLASS_SHIFT) & CLASS_MASK) !== cls || (info & STATE_MASK) !== STATE_HEAD) {
      throw corrupt(s, `current slab of class ${cls} has info ${info}`);
    }
  }
}

function checkArena(h: ArenaHeap, base: number): void {
  const i32 = h.i32;
  const u32 = h.u32;
  const hb = headerIndex(base, h.arenaBytes);
  if (i32[hb + A_MAGIC] !== ARENA_MAGIC) throw corrupt(base, 'own arena lost its magic');
  if (i32[hb + A_KIND_OWNER]! >>> 8 !== h.slot) throw corrupt(base, `owner ${i32[hb + A_KIND_OWNER]! >>> 8}, expected ${h.slot}`);
  let free = 0;
  let dirty = 0;
  let retained = 0;
  let longest = 0;
  let run = 0;
  for (let u = 0; u < h.units; u++) {
    const inUse = (i32[hb + A_UNIT_BITS + (u >>> 5)]! & (1 << (u & 31))) !== 0;
    const isDirty = (i32[hb + A_DIRTY_BITS + (u >>> 5)]! & (1 << (u & 31))) !== 0;
    const isRetained = (i32[hb + A_RETAINED_BITS + (u >>> 5)]! & (1 << (u & 31))) !== 0;
    const state = i32[recordIndex(base, u, h.arenaBytes) + R_INFO]! & STATE_MASK;
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
    for (let s = u32[hb + A_PARTIAL + cls]!; s !== 0; s = u32[recordIndex(base, (s - base) >>> UNIT_SHIFT, h.arenaBytes) + R_PNEXT]!) {
      if ((s & h.arenaMask) >>> 0 !== base || ++steps > h.units) throw corrupt(base, `partial list of class ${cls} is broken at ${formatAddress(s)}`);
      const ri = recordIndex(base, (s - base) >>> UNIT_SHIFT, h.arenaBytes);
      const info = i32[ri + R_INFO]!;
      if ((info & FLAG_PARTIAL) === 0 || ((info >>> CLASS_SHIFT) & CLASS_MASK) !== cls || u32[ri + R_PPREV] !== prev) {
        throw corrupt(s, `partial slab of class ${cls} has inconsistent links or flags`);
      }
      onPartial.add(s);
      prev = s;
    }
  }
  for (let u = 0; u < h.units; u++) {
    const ri = recordIndex(base, u, h.arenaBytes);
    const info = i32[ri + R_INFO]!;
    if ((info & STATE_MASK) !== STATE_HEAD) continue;
    if ((info & FLAG_QUARANTINE) !== 0) {
      if (i32[ri + R_SPAN] !== 1 || (info & (FLAG_PARTIAL | FLAG_CURRENT)) !== 0) throw corrupt(base, `quarantined unit ${u} is on a list`);
      continue;
    }
    const problem = slabProblem(h, base, u);
    if (problem !== null) throw problem;
    // The record is consistent; what is left are its flags against the lists.
    const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
    const s = base + (u << UNIT_SHIFT);
    if (cls === LARGE_CLASS) {
      if ((info & (FLAG_CURRENT | FLAG_PARTIAL)) !== 0) throw corrupt(s, 'large block record is inconsistent');
      continue;
    }
    const live = i32[ri + R_LIVE]!;
    const capacity = (i32[ri + R_SPAN]! << UNIT_SHIFT) / (32 << cls);
    const partial = (info & FLAG_PARTIAL) !== 0;
    if (partial !== onPartial.has(s)) throw corrupt(s, 'partial flag does not match the partial list');
    if ((info & FLAG_CURRENT) !== 0 && h.current[cls] !== s) throw corrupt(s, 'marked current but is not');
    if (partial && (live === 0 || live === capacity)) throw corrupt(s, `on the partial list with ${live} of ${capacity} live`);
  }
}

/**
 * What is wrong with the record of the slab whose head is unit `u` of the arena at `base` (a head record, not
 * quarantined), as the error {@link check} throws for it; null when it is consistent. Consistent: its span fits
 * the arena, its units are marked used and each continuation names its distance back to the head; a large
 * block's size is a 1 KiB multiple above 1 MiB that fills its span, with one live object and the bump at its
 * end (or, parked, none and the bump at its start) and no free list; a class slab spans what its class does,
 * its bump lies inside on the class grid, its free list stays inside below the bump on the grid without a
 * cycle, and live + listed + unbumped = capacity.
 * The flags (partial, current) are not looked at: check() compares them with the lists, a repair rebuilds both.
 */
export function slabProblem(h: ArenaHeap, base: number, u: number): HeapError | null {
  const i32 = h.i32;
  const u32 = h.u32;
  const hb = headerIndex(base, h.arenaBytes);
  const ri = recordIndex(base, u, h.arenaBytes);
  const cls = (i32[ri + R_INFO]! >>> CLASS_SHIFT) & CLASS_MASK;
  const span = i32[ri + R_SPAN]!;
  if (u + span > h.units) return corrupt(base, `unit ${u}: span ${span} runs past the arena`);
  for (let k = 0; k < span; k++) {
    if (k > 0) {
      const rk = recordIndex(base, u + k, h.arenaBytes);
      if ((i32[rk + R_INFO]! & STATE_MASK) !== STATE_CONT || i32[rk + R_SPAN] !== k) return corrupt(base, `unit ${u + k}: bad continuation`);
    }
    if ((i32[hb + A_UNIT_BITS + ((u + k) >>> 5)]! & (1 << ((u + k) & 31))) === 0) return corrupt(base, `unit ${u + k}: marked free inside a slab`);
  }
  const s = base + (u << UNIT_SHIFT);
  const bump = u32[ri + R_BUMP]!;
  const live = i32[ri + R_LIVE]!;
  if (cls === LARGE_CLASS) {
    const bytes = u32[ri + R_SIZE]!;
    if (bytes <= MAX_CLASS_SIZE || bytes % LARGE_ROUND !== 0 || span !== Math.ceil(bytes / UNIT)) return corrupt(s, `large block of ${bytes} bytes on ${span} units`);
    // Live, or parked by the large tier (empty: nothing live, the bump at its start).
    if (live !== (bump === s ? 0 : 1) || (live === 1 && bump !== s + bytes) || u32[ri + R_FREE] !== 0) return corrupt(s, 'large block record is inconsistent');
    return null;
  }
  if (cls >= CLASS_COUNT || span !== spanOf(cls)) return corrupt(base, `unit ${u}: span ${span} for class ${cls}`);
  const size = 32 << cls;
  const end = s + (span << UNIT_SHIFT);
  if (bump < s || bump > end || (bump - s) % size !== 0) return corrupt(s, `bump ${formatAddress(bump)} outside the slab`);
  const capacity = (span << UNIT_SHIFT) / size;
  let listed = 0;
  for (let p = u32[ri + R_FREE]!; p !== 0; p = u32[p >>> 2]!) {
    if (p < s || p >= bump || ((p - s) & (size - 1)) !== 0) return corrupt(s, `free list member ${formatAddress(p)} is outside the slab or misaligned`);
    if (++listed > capacity) return corrupt(s, 'free list has a cycle');
  }
  const unbumped = (end - bump) / size;
  if (live < 0 || live + listed + unbumped !== capacity) return corrupt(s, `live ${live} + free ${listed} + unbumped ${unbumped} != capacity ${capacity}`);
  return null;
}

function corrupt(at: number, why: string): HeapError {
  return new HeapError('CORRUPTION', `arena check failed at ${formatAddress(at)}: ${why}`, at);
}
