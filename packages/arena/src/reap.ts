/**
 * Reaping: recovering an agent that died without detaching (a terminated worker, or one whose thread crashed),
 * found by its agent id. None of its structures are trusted: its arenas are repaired (half-updated slabs
 * quarantined) before they are adopted, a drain it was in the middle of is finished, and the blocks in its
 * cache and chains are checked before they are sent home. See docs/design/arena.md, "Reap".
 */
import { GRANULE } from '@paddock/platform';
import {
  AGENT_CRASHED,
  AGENT_LIVE,
  AGENT_REAPED,
  CACHE_STACKS_OFFSET,
  CACHE_STRIDE,
  FLUSH_HEAD_OFFSET,
  G_AGENT_ID,
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
  G_STATE,
  INLINE_MAP_OFFSET,
  INLINE_MAP_OWNERS,
} from './agent-layout.js';
import { findAgentArea, vacateAgentArea } from './agent-area.js';
import type { ArenaHeap } from './arena-heap.js';
import { drain, resumeDrain } from './drain.js';
import { emptyExchange, resolveDeadExchange } from './exchange.js';
import { isHeldFreed, onFreeList } from './free-check.js';
import {
  ARENA_MAGIC,
  A_CARVER,
  A_KIND_OWNER,
  A_MAGIC,
  CLASS_MASK,
  CLASS_SHIFT,
  FLAG_CURRENT,
  FLAG_PARTIAL,
  FLAG_QUARANTINE,
  KIND_ARENA,
  LARGE_CLASS,
  R_INFO,
  R_LIVE,
  R_SPAN,
  STATE_HEAD,
  STATE_MASK,
  UNIT_SHIFT,
  headerIndex,
  recordIndex,
} from './layout.js';
import { SLOT_ADOPTED, SLOT_LIVE, SLOT_ORPHANED, adoptArenas, releaseInherited, takeOverAdoptees, takeSlot } from './ownership.js';
import { CHAIN_FLUSH, releaseChainMap } from './remote-chains.js';
import { releaseSlab, returnArena } from './release.js';
import { repairArena } from './repair.js';
import { CLASS_COUNT } from './size-class.js';
import { unlinkPartial } from './slab.js';

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

/**
 * Recovers an agent that died without detaching (a terminated or crashed worker), found by its agent id:
 * its arenas are checked slab by slab (a slab it left half-updated is quarantined, never trusted), then
 * adopted; the blocks in its thread cache and its pending chains are checked and sent home; its inbox
 * is drained with this agent's from now on. Its stashed mappings are the large tier's to release.
 * With `releaseLive`, every live block of the arenas it carved is released too.
 * @throws RangeError when no such agent exists, it is this agent, or it was already detached or reaped.
 */
export function reapAgent(h: ArenaHeap, agentId: number, releaseLive: boolean): ReapReport {
  const area = claimDeadAgent(h, agentId);
  if (h.slot === 0) takeSlot(h);
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
  const quarantinedBefore = h.quarantinedBytes;
  recoverOpenings(h, area);
  const releaseFrom = takeOverDeadOwner(h, area, report, releaseLive);
  // A move between its cache and the exchange it was in the middle of: the blocks are in one or the other.
  resolveDeadExchange(h, area, agentId);
  sendCacheHome(h, area, report);
  // The blocks it held freed outside any list it owns: a chain being flushed, its chains, a block being routed.
  const held: number[] = [];
  const flushedOwner = collectFlushingBatch(h, area, report, held);
  collectChains(h, area, flushedOwner, report, held);
  // Its cache and chains went home first (into these very arenas, mostly), and so does the exchange (other agents
  // would hand its blocks out again); now drop what is still live.
  if (releaseFrom.length > 0) emptyExchange(h);
  for (const base of releaseFrom) if (h.arenas.includes(base)) report.liveBlocksReleased += releaseEverything(h, base);
  collectRoutedBlock(h, area, held);
  for (const p of held) h.freeValidated(p);
  report.chainObjects = held.length;
  h.chains.flushChains();
  drain(h);
  if (h.onReaped !== null) h.onReaped(area);
  // Whatever of its arenas is empty now goes back to the regions; the rest goes as its blocks are freed.
  releaseInherited(h);
  // The dead agent's area keeps its header page (the agent list runs through it); the rest goes back, and a
  // new agent may lay it out again.
  vacateAgentArea(h.space, area);
  report.quarantinedBytes = h.quarantinedBytes - quarantinedBefore;
  return report;
}

/** Finds agent `agentId`'s area and claims it for this reaper (live or crashed, to reaped, by CAS). */
function claimDeadAgent(h: ArenaHeap, agentId: number): number {
  const area = findAgentArea(h.space, h.agentListHead(), agentId);
  if (area === 0) throw new RangeError(`no agent ${agentId} has attached to this heap`);
  if (area === h.agentArea) throw new RangeError('an agent cannot reap itself');
  h.sync();
  const aw = area >>> 2;
  const was = Atomics.load(h.i32, aw + G_STATE);
  if ((was !== AGENT_LIVE && was !== AGENT_CRASHED) || Atomics.compareExchange(h.i32, aw + G_STATE, was, AGENT_REAPED) !== was) {
    throw new RangeError(`agent ${agentId} is not live (it detached or was reaped already)`);
  }
  return area;
}

/** A region the dead agent was opening, or an arena it was laying out or giving back, when it died: listed or released. */
function recoverOpenings(h: ArenaHeap, area: number): void {
  const aw = area >>> 2;
  const opening = h.u32[aw + G_OPENING_REGION]!;
  if (opening !== 0 && h.regions.recoverRegion(opening) === 'pushed') releaseUnlaidArena(h, opening + h.arenaBytes);
  const openingArena = h.u32[aw + G_OPENING_ARENA]!;
  if (openingArena !== 0) releaseUnlaidArena(h, openingArena);
  h.u32[aw + G_OPENING_REGION] = 0;
  h.u32[aw + G_OPENING_ARENA] = 0;
}

/**
 * Repairs the dead agent's arenas, takes its owner slot over (unless another agent did: then its arenas go
 * with the slot), releases the empty slabs the repairs found, and finishes a drain it was in the middle of.
 * Returns the arenas whose live blocks go too (with `releaseLive`: the ones it carved, not those it had taken
 * over from agents that left, whose blocks others may hold).
 */
function takeOverDeadOwner(h: ArenaHeap, area: number, report: ReapReport, releaseLive: boolean): number[] {
  const dead = h.i32[(area >>> 2) + G_OWNER_SLOT]!;
  let releaseFrom: number[] = [];
  if (dead === 0 || dead === h.slot || dead > h.registry.ownerCount()) return releaseFrom;
  report.ownerSlot = dead;
  const emptySlabs: number[] = [];
  for (const base of h.regions.carvedArenas()) {
    if (!h.coverMeta(base)) continue;
    const hb = headerIndex(base, h.arenaBytes);
    if (Atomics.load(h.i32, hb + A_MAGIC) === ARENA_MAGIC && h.i32[hb + A_KIND_OWNER] === (KIND_ARENA | (dead << 8))) {
      const found = repairArena(h, base);
      h.quarantinedBytes += found.quarantinedBytes;
      emptySlabs.push(...found.emptySlabs);
    }
  }
  let tookSlot = false;
  const slotWas = h.registry.slotState(dead); // live, or orphaned when its thread crashed
  if ((slotWas === SLOT_LIVE || slotWas === SLOT_ORPHANED) && h.registry.casSlotState(dead, slotWas, SLOT_ADOPTED | (h.slot << 8)) === slotWas) {
    const before = new Set(h.arenas);
    report.arenasAdopted = adoptArenas(h, dead);
    h.adopted.push(dead);
    takeOverAdoptees(h, dead);
    tookSlot = true;
    h.registry.noteDeparture(); // its slot is no longer live: flushers look at it again
    if (releaseLive) releaseFrom = h.arenas.filter((a) => !before.has(a) && h.i32[headerIndex(a, h.arenaBytes) + A_CARVER] === dead);
  }
  releaseEmptySlabs(h, emptySlabs);
  // A drain it was in the middle of: the runs it had taken from its inbox and not reclaimed yet.
  if (tookSlot) report.drainedObjects = resumeDrain(h, area);
  return releaseFrom;
}

/** Releases the empty slabs repairs found (at `slabs`) that are still empty and in this agent's arenas. */
function releaseEmptySlabs(h: ArenaHeap, slabs: readonly number[]): void {
  for (const s of slabs) {
    const base = (s & h.arenaMask) >>> 0;
    const u = (s - base) >>> UNIT_SHIFT;
    const ri = recordIndex(base, u, h.arenaBytes);
    const info = h.i32[ri + R_INFO]!;
    if (!h.arenas.includes(base) || h.i32[ri + R_LIVE] !== 0 || (info & (FLAG_QUARANTINE | FLAG_CURRENT | FLAG_PARTIAL)) !== 0) continue;
    releaseSlab(h, base, u, h.i32[ri + R_SPAN]!, ((info >>> CLASS_SHIFT) & CLASS_MASK) === LARGE_CLASS);
  }
}

/** The dead agent's thread cache: every entry that still looks like a freed block is sent home; the rest are lost. */
function sendCacheHome(h: ArenaHeap, area: number, report: ReapReport): void {
  const aw = area >>> 2;
  for (let c = 0; c < CLASS_COUNT; c++) {
    const n = Math.min(h.u32[aw + G_CACHE_COUNT + c]!, h.u32[aw + G_CACHE_DEPTH + c]!, CACHE_STRIDE);
    for (let i = 0; i < n; i++) {
      const p = h.u32[((area + CACHE_STACKS_OFFSET) >>> 2) + c * CACHE_STRIDE + i]!;
      if (isHeldFreed(h, p)) {
        h.freeValidated(p);
        report.cacheBlocks++;
      } else report.lostBlocks++;
    }
    h.u32[aw + G_CACHE_COUNT + c] = 0;
  }
}

/**
 * A chain the dead agent was flushing when it died: the batch named in its area, not pushed (the push and the
 * phase reset follow each other with no point between where an agent can be stopped). Its objects, walked from
 * the head while they look like blocks held freed, go into `held`. Returns the owner of that chain (whose
 * chain-map entry is stale), or -1 when none.
 */
function collectFlushingBatch(h: ArenaHeap, area: number, report: ReapReport, held: number[]): number {
  const aw = area >>> 2;
  const flushing = Atomics.load(h.i32, aw + G_FLUSH_PHASE) === 1;
  const flushOwner = h.i32[aw + G_FLUSH_OWNER]!;
  if (!flushing) return -1;
  const n = Math.min(h.i32[aw + G_FLUSH_COUNT]!, CHAIN_FLUSH);
  let p = h.u32[(area + FLUSH_HEAD_OFFSET) >>> 2]!;
  for (let k = 0; k < n; k++) {
    if (!isHeldFreed(h, p)) {
      report.lostBlocks += n - k;
      break;
    }
    const next = h.u32[p >>> 2]!;
    held.push(p);
    p = next;
  }
  return flushOwner;
}

/**
 * The dead agent's chains: each is walked to its end (the count may lag the head by one), stopping at the
 * first node that fails a check, into `held`; the chain of `flushedOwner` is in the scratch instead. Its
 * chain map is emptied, and given back if it had grown.
 */
function collectChains(h: ArenaHeap, area: number, flushedOwner: number, report: ReapReport, held: number[]): void {
  const aw = area >>> 2;
  const mapCap = h.i32[aw + G_MAP_CAP]!;
  const map = h.u32[aw + G_MAP_ADDR]!;
  if (mapCap < INLINE_MAP_OWNERS || mapCap > 1 << 24 || !h.cover(map + mapCap * 8)) return;
  for (let o = 1; o < mapCap; o++) {
    const e = (map >>> 2) + 2 * o;
    let p = h.u32[e]!;
    if (o !== flushedOwner) {
      for (let k = 0; k <= CHAIN_FLUSH && p !== 0; k++) {
        if (!isHeldFreed(h, p)) {
          report.lostBlocks++;
          break;
        }
        const next = h.u32[p >>> 2]!;
        held.push(p);
        p = next;
      }
    }
    h.u32[e] = 0;
    h.u32[e + 1] = 0;
  }
  // Its map, untrusted: given back only if it is a whole reserved range apart from the area.
  if (map !== area + INLINE_MAP_OFFSET && map % GRANULE === 0 && h.space.isReserved(map, mapCap * 8)) releaseChainMap(h.space, area, map, mapCap);
}

/** A cached block the dead agent was sending home: off its cache, maybe not yet on a chain or a free list. */
function collectRoutedBlock(h: ArenaHeap, area: number, held: number[]): void {
  const aw = area >>> 2;
  const routing = h.u32[aw + G_ROUTING]!;
  if (routing !== 0 && !held.includes(routing) && isHeldFreed(h, routing) && !onFreeList(h, routing)) held.push(routing);
  h.u32[aw + G_ROUTING] = 0;
}

/**
 * Releases every slab of an adopted arena that is not quarantined, live objects included; the arena goes
 * back to its region when nothing is quarantined in it. Returns the live objects dropped.
 */
function releaseEverything(h: ArenaHeap, base: number): number {
  const i32 = h.i32;
  let dropped = 0;
  for (let u = 0; u < h.units; ) {
    if (h.arenas.indexOf(base) < 0) break; // the arena itself went back with its last slab
    const ri = recordIndex(base, u, h.arenaBytes);
    const info = i32[ri + R_INFO]!;
    if ((info & STATE_MASK) !== STATE_HEAD) {
      u++;
      continue;
    }
    const span = i32[ri + R_SPAN]!;
    if ((info & FLAG_QUARANTINE) !== 0) {
      u += span;
      continue;
    }
    dropped += i32[ri + R_LIVE]!;
    const cls = (info >>> CLASS_SHIFT) & CLASS_MASK;
    if ((info & FLAG_PARTIAL) !== 0) unlinkPartial(h, base, base + (u << UNIT_SHIFT), cls);
    i32[ri + R_LIVE] = 0;
    releaseSlab(h, base, u, span, false);
    u += span;
  }
  return dropped;
}

/** Releases a carved arena with no magic: a dead agent carved it and died before laying it out, or died giving it back. */
function releaseUnlaidArena(h: ArenaHeap, base: number): void {
  if (base % h.arenaBytes !== 0 || !h.regions.isCarved(base)) return;
  if (h.coverMeta(base) && Atomics.load(h.i32, headerIndex(base, h.arenaBytes) + A_MAGIC) === ARENA_MAGIC) return;
  returnArena(h, base);
}

/** Reaps the crashed agent whose area is `area` (see {@link reapAgent}); false when another agent got to it first. */
export function reapArea(h: ArenaHeap, area: number): boolean {
  const id = h.i32[(area >>> 2) + G_AGENT_ID]!;
  try {
    reapAgent(h, id, false);
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
export function reapOwner(h: ArenaHeap, slot: number): boolean {
  for (const area of h.agentAreas()) {
    if (h.i32[(area >>> 2) + G_OWNER_SLOT] === slot && area !== h.agentArea) {
      return Atomics.load(h.i32, (area >>> 2) + G_STATE) === AGENT_CRASHED && reapArea(h, area);
    }
  }
  return false;
}
