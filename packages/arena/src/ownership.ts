/**
 * Who owns an arena, and how that changes: an agent takes an owner slot with its first arena; it leaves by
 * detaching (its arenas handed over for adoption) or is marked crashed; an agent that finds a slot detached
 * takes it over with one CAS on the slot's state and rewrites the slot's arenas to name itself. The
 * registry's state word of a slot says where it stands (see docs/design/arena.md, "Detach, adoption, reap").
 */
import { AGENT_CRASHED, AGENT_DETACHED, AGENT_LIVE, G_AGENT_ID, G_OWNER_SLOT, G_STATE, G_THREAD } from './agent-layout.js';
import { HeapError, formatAddress } from '@paddock/platform';
import { SLOT_RECORD_BYTES } from '@paddock/registry';
import { vacateAgentArea } from './agent-area.js';
import type { ArenaHeap } from './arena-heap.js';
import { drain } from './drain.js';
import {
  ARENA_MAGIC,
  A_DIRTY_UNITS,
  A_FREE_UNITS,
  A_KIND_OWNER,
  A_MAGIC,
  FLAG_CURRENT,
  KIND_ARENA,
  R_BUMP,
  R_FREE,
  R_INFO,
  R_LIVE,
  R_SPAN,
  UNIT_SHIFT,
  headerIndex,
  recordIndex,
} from './layout.js';
import { reapArea } from './reap.js';
import { dropRetained, releaseArena, releaseIdle, releaseSlab, sweep } from './release.js';
import { CLASS_COUNT } from './size-class.js';
import { pushPartial } from './slab.js';

/** Owner-slot states (the registry's state word). */
export const SLOT_LIVE = 0;
export const SLOT_DETACHED = 1;
/** Its agent died without detaching (its thread crashed): it must be reaped (checked), not just adopted. */
export const SLOT_ORPHANED = 2;
/** Adopted: `SLOT_ADOPTED | adopter slot << 8`. */
export const SLOT_ADOPTED = 4;

/** Gives the agent an owner slot: its inbox, and its area names it for a reaper. */
export function takeSlot(h: ArenaHeap): void {
  const slot = h.registry.takeOwnerSlot();
  const inbox = h.registry.inboxAddress(slot);
  // The slot's segment may have been appended (by this agent or another) past this agent's views: the idle wake
  // waits on the inbox word and a detach reads it through them.
  if (!h.cover(h.registry.recordAddress(slot) + SLOT_RECORD_BYTES)) {
    throw new HeapError('CORRUPTION', `the inbox of owner slot ${slot} at ${formatAddress(inbox)} lies outside the buffer`, inbox);
  }
  h.slot = slot;
  h.inbox = inbox >>> 2;
  Atomics.store(h.i32, (h.agentArea >>> 2) + G_OWNER_SLOT, slot);
}

/**
 * Hands the agent's arenas over for adoption: its current slabs stop being current (empty ones are
 * released, ones with room go onto their partial lists), and its owner slot and agent area are marked
 * detached. Chains, cache and inbox must already be flushed and drained by the caller.
 *
 * A free may reach an inbox of this agent (its own, or one of a slot it took over) after the last drain and
 * before the slot reads detached. So after marking it, the inboxes are read once more: if one holds a batch,
 * the slot is taken back (a CAS from detached to live; failing it means another agent has already taken the
 * slot over, and with it the batch), drained, and marked again. A flusher reads the state after its push,
 * so every batch is seen by this agent or by the one that takes the slot over (docs/design/arena.md).
 */
export function detachOwner(h: ArenaHeap): void {
  for (let cls = 0; cls < CLASS_COUNT; cls++) {
    const s = h.current[cls]!;
    if (s === 0) continue;
    h.current[cls] = 0;
    const base = (s & h.arenaMask) >>> 0;
    const u = (s - base) >>> UNIT_SHIFT;
    const ri = recordIndex(base, u, h.arenaBytes);
    h.i32[ri + R_INFO] &= ~FLAG_CURRENT;
    const live = h.i32[ri + R_LIVE]!;
    if (live === 0) releaseSlab(h, base, u, h.i32[ri + R_SPAN]!, false);
    else if (h.u32[ri + R_FREE] !== 0 || h.u32[ri + R_BUMP]! + (32 << cls) <= s + (h.i32[ri + R_SPAN]! << UNIT_SHIFT)) {
      pushPartial(h, base, s, cls);
    }
  }
  Atomics.store(h.i32, (h.agentArea >>> 2) + G_STATE, AGENT_DETACHED);
  while (h.slot !== 0) {
    h.registry.setSlotState(h.slot, SLOT_DETACHED);
    h.registry.noteDeparture();
    if (!inboxesHoldBatches(h)) break;
    if (h.registry.casSlotState(h.slot, SLOT_DETACHED, SLOT_LIVE) !== SLOT_DETACHED) break; // taken over
    drain(h);
    releaseIdle(h, false);
  }
  // Nothing of the area is needed any more (cache, chains and stash are empty): a grown chain map goes back,
  // and the area is left for the next agent that attaches.
  h.chains.releaseMap();
  vacateAgentArea(h.space, h.agentArea);
}

/** Whether the agent's inbox, or that of a slot it took over, holds a batch. */
function inboxesHoldBatches(h: ArenaHeap): boolean {
  if (h.registry.inboxHead(h.slot) !== 0) return true;
  for (let i = 0; i < h.adopted.length; i++) if (h.registry.inboxHead(h.adopted[i]!) !== 0) return true;
  return false;
}

/**
 * Marks the agent as crashed (its thread is ending by an exception nobody caught, so its state may be
 * half-updated): it does not detach; any agent's idle visit, the next agent that needs memory or frees to
 * it, or the parent's `watch`, reaps it with every check. Nothing is called on it afterwards.
 */
export function markCrashed(h: ArenaHeap): void {
  h.detached = true;
  if (Atomics.compareExchange(h.i32, (h.agentArea >>> 2) + G_STATE, AGENT_LIVE, AGENT_CRASHED) !== AGENT_LIVE) return;
  if (h.slot !== 0) h.registry.casSlotState(h.slot, SLOT_LIVE, SLOT_ORPHANED);
  h.registry.noteDeparture();
}

/**
 * Agent ids of the agents that ran on the thread whose key is `thread` (see the platform's `threadKey`)
 * and have not left: live ones, and crashed ones not reaped yet.
 */
export function agentsOnThread(h: ArenaHeap, thread: number): number[] {
  const ids: number[] = [];
  if (thread === 0) return ids;
  for (const area of h.agentAreas()) {
    const w = area >>> 2;
    const state = Atomics.load(h.i32, w + G_STATE);
    if (h.i32[w + G_THREAD] === thread && (state === AGENT_LIVE || state === AGENT_CRASHED)) ids.push(h.i32[w + G_AGENT_ID]!);
  }
  return ids;
}

/**
 * Adopts every owner slot that is detached or orphaned (its agent reaped): one CAS on the slot's state
 * claims it, then its arenas take this agent as owner and its inbox is drained with this agent's from now
 * on. Returns the slots adopted.
 */
export function adoptOrphans(h: ArenaHeap): number {
  const departures = h.registry.departures();
  if (departures === h.seenDepartures) return 0;
  h.seenDepartures = departures; // read first: a departure counted from here on is seen next time
  let adopted = 0;
  // Agents whose thread crashed: reaped (checked), whether or not they ever owned an arena.
  for (const area of h.agentAreas()) {
    if (area !== h.agentArea && Atomics.load(h.i32, (area >>> 2) + G_STATE) === AGENT_CRASHED) {
      if (reapArea(h, area)) adopted++;
    }
  }
  const count = h.registry.ownerCount();
  for (let slot = 1; slot <= count; slot++) {
    if (slot === h.slot) continue;
    const state = h.registry.slotState(slot);
    if (state === SLOT_DETACHED && adoptSlot(h, slot, state)) adopted++;
  }
  return adopted;
}

/**
 * Takes over owner slot `slot`, which left (state `state`, detached): one CAS on its state claims it,
 * then its arenas name this agent as owner, the slots it had taken over become this agent's, and its inbox
 * is drained with this agent's from now on. Arenas that are or become empty go back to their regions at
 * once. Returns false when another agent claimed it first.
 */
export function adoptSlot(h: ArenaHeap, slot: number, state: number): boolean {
  if (h.slot === 0) takeSlot(h);
  if (h.registry.casSlotState(slot, state, SLOT_ADOPTED | (h.slot << 8)) !== state) return false;
  adoptArenas(h, slot);
  h.adopted.push(slot);
  takeOverAdoptees(h, slot);
  drain(h);
  releaseInherited(h);
  return true;
}

/**
 * Takes over the slots that `from` had adopted (it is gone now): their inboxes may still receive frees
 * that other agents chained to those owners before any adoption, so someone live must keep draining
 * them. Their arenas name `from` (rewritten with its own), except where `from` died in the middle of an
 * adoption: after its CAS of the slot and before its last arena was renamed. Those still name the adoptee and
 * are taken here too, or a batch for them would reach this agent's drain from arenas it does not own.
 */
export function takeOverAdoptees(h: ArenaHeap, from: number): void {
  const count = h.registry.ownerCount();
  const theirs = SLOT_ADOPTED | (from << 8);
  for (let slot = 1; slot <= count; slot++) {
    if (slot === h.slot || h.registry.slotState(slot) !== theirs) continue;
    if (h.registry.casSlotState(slot, theirs, SLOT_ADOPTED | (h.slot << 8)) !== theirs) continue;
    h.adopted.push(slot);
    adoptArenas(h, slot);
  }
}

/**
 * Takes over every arena owned by `slot`: retained units are decommitted (their ledger is gone). They are
 * inherited (see {@link ArenaHeap.inherited}) until this agent allocates from them. Returns how many.
 */
export function adoptArenas(h: ArenaHeap, slot: number): number {
  let n = 0;
  for (const base of h.regions.carvedArenas()) {
    if (!h.coverMeta(base)) continue;
    const hb = headerIndex(base, h.arenaBytes);
    if (Atomics.load(h.i32, hb + A_MAGIC) !== ARENA_MAGIC || h.i32[hb + A_KIND_OWNER] !== (KIND_ARENA | (slot << 8))) continue;
    Atomics.store(h.i32, hb + A_KIND_OWNER, KIND_ARENA | (h.slot << 8));
    dropRetained(h, base);
    h.arenas.push(base);
    h.inherited.add(base);
    n++;
  }
  return n;
}

/** Releases the inherited arenas that are empty now and sweeps the dirty units of the others. */
export function releaseInherited(h: ArenaHeap): void {
  for (const base of [...h.inherited]) {
    if (!h.arenas.includes(base)) h.inherited.delete(base);
    else if (h.i32[headerIndex(base, h.arenaBytes) + A_FREE_UNITS] === h.usableUnits) {
      h.inherited.delete(base);
      releaseArena(h, base);
    } else if (h.i32[headerIndex(base, h.arenaBytes) + A_DIRTY_UNITS] !== 0) sweep(h, base);
  }
}

/**
 * The owner slot of the arena holding `p` (0: not in a laid-out arena). A block an agent was handed from
 * its thread cache may lie in another agent's arena: this names whose arena it is now.
 */
export function arenaOwnerOf(h: ArenaHeap, p: number): number {
  if ((p >>> 0) !== p || !h.cover(p + 1)) return 0;
  const hb = headerIndex((p & h.arenaMask) >>> 0, h.arenaBytes);
  if (Atomics.load(h.i32, hb + A_MAGIC) !== ARENA_MAGIC || (h.i32[hb + A_KIND_OWNER]! & 255) !== KIND_ARENA) return 0;
  return h.i32[hb + A_KIND_OWNER]! >>> 8;
}
