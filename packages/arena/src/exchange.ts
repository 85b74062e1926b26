/**
 * The exchange: where a full thread cache hands checked freed blocks of a small class to whichever agent needs
 * that class next, without sending them home. A consumer that only frees (its cache full for good) would
 * otherwise send every block it frees to its owner: a chain, a flush, the owner's inbox, the owner's walk over
 * every object. Through the exchange it moves the top {@link EXCHANGE_BATCH} pointers of its full stack into a
 * slot with one CAS and a copy of 128 bytes, and an agent whose stack of that class is empty takes the slot's
 * pointers onto its stack the same way. No block is read or written on the way (tcmalloc's transfer cache works
 * the same way between its per-CPU caches). The blocks stay live in their slabs, as on any cache stack, and keep
 * their freed mark; what waits in the exchange goes home when an agent goes idle, leaves or flushes its cache (it
 * empties the exchange), and a block taken is handed out again like any cached block. An agent's own blocks go the
 * same way: the exchange is then a second level of its cache, taken before its slabs.
 *
 * Layout: one committed range, its address in the heap header's user word {@link EXCHANGE_WORD}, made with the
 * heap. For each class below {@link EXCHANGE_CLASSES}, {@link EXCHANGE_SLOTS} slots of {@link SLOT_WORDS} Int32
 * words (a slot per 256 bytes, so no two share a cache line): word 0 the state, word 1 the count, words 2.. the
 * pointers. States: {@link X_EMPTY}, {@link X_FULL}, or held by one agent while it fills, takes or empties the slot
 * (its agent id shifted left by 2, ORed with {@link X_GIVING} or {@link X_TAKING}).
 *
 * Kills: before it claims a slot an agent names it in its agent area ({@link EXCHANGE_OFFSET}: the slot's word
 * and its cache count before the move, or -1 when it empties the slot), and its cache count moves in one store.
 * A reaper that finds the slot still held by the dead agent compares the count with the one named and knows
 * whether the pointers are in the slot or in the cache ({@link resolveDeadExchange}): nothing is lost and no
 * block ends up in both.
 */
import { GRANULE, type AddressSpace } from '@paddock/platform';
import type { Regions } from '@paddock/region';
import { CACHE_STACKS_OFFSET, CACHE_STRIDE, EXCHANGE_OFFSET, G_CACHE_COUNT, G_CACHE_DEPTH, G_ROUTING } from './agent-layout.js';
import type { ArenaHeap } from './arena-heap.js';
import { isHeldFreed } from './free-check.js';
import { CLASS_COUNT } from './size-class.js';

/** The heap header's user word that holds the exchange's address (0: the heap has none). */
export const EXCHANGE_WORD = 4;
/** Classes 0 (32 B) to 7 (4 KiB) go through the exchange. */
export const EXCHANGE_CLASSES = 8;
/** Slots per class. */
export const EXCHANGE_SLOTS = 64;
/** Blocks a full stack hands over at once. */
export const EXCHANGE_BATCH = 32;
/** Int32 words per slot. */
export const SLOT_WORDS = 64;
/** Bytes of the exchange. */
export const EXCHANGE_BYTES = EXCHANGE_CLASSES * EXCHANGE_SLOTS * SLOT_WORDS * 4;

export const X_EMPTY = 0;
export const X_FULL = 1;
export const X_GIVING = 2;
export const X_TAKING = 3;
/** Slot words: the count of pointers, then the pointers. */
export const X_COUNT = 1;
export const X_ENTRIES = 2;
/** Agent-area words (from EXCHANGE_OFFSET): the slot being moved (its Int32 index, 0: none) and the cache count before. */
export const XA_SLOT = 0;
export const XA_BASE = 1;

/** Makes the heap's exchange (the agent that creates the heap, before any other attaches). Returns its address. */
export function createExchange(space: AddressSpace, regions: Regions): number {
  const addr = space.reserve(Math.ceil(EXCHANGE_BYTES / GRANULE) * GRANULE);
  space.commit(addr, EXCHANGE_BYTES);
  space.u8.fill(0, addr, addr + EXCHANGE_BYTES); // a reused range keeps old bytes without native page return
  Atomics.store(space.i32, regions.userWord(EXCHANGE_WORD) >>> 2, addr);
  return addr;
}

/** Int32 index of the first slot of class `cls` in the exchange at Int32 index `xw`. */
function slotsOf(xw: number, cls: number): number {
  return xw + cls * EXCHANGE_SLOTS * SLOT_WORDS;
}

/** Int32 index of slot `k` of class `cls` in the exchange of `h` (its state word; 0 when the heap has none). */
export function exchangeSlot(h: ArenaHeap, cls: number, k: number): number {
  return h.exchangeWord === 0 ? 0 : slotsOf(h.exchangeWord, cls) + k * SLOT_WORDS;
}

/**
 * Hands the top {@link EXCHANGE_BATCH} blocks of class `cls`'s stack (full: `n` blocks, at least a batch) to an
 * empty slot. Returns whether it did (false: no exchange, or every slot of the class is taken).
 */
export function giveToExchange(h: ArenaHeap, cls: number, n: number): boolean {
  const s = claimSlot(h, cls, X_EMPTY, X_GIVING, n, cls);
  if (s === 0) return false;
  const i32 = h.i32;
  const from = ((h.agentArea + CACHE_STACKS_OFFSET) >>> 2) + cls * CACHE_STRIDE + n - EXCHANGE_BATCH;
  for (let i = 0; i < EXCHANGE_BATCH; i++) i32[s + X_ENTRIES + i] = i32[from + i]!;
  i32[s + X_COUNT] = EXCHANGE_BATCH;
  i32[(h.agentArea >>> 2) + G_CACHE_COUNT + cls] = n - EXCHANGE_BATCH; // from here the blocks are the slot's
  Atomics.store(i32, s, X_FULL);
  i32[((h.agentArea + EXCHANGE_OFFSET) >>> 2) + XA_SLOT] = 0;
  return true;
}

/**
 * Takes a full slot of class `cls` onto its cache stack, which holds `m` blocks and has room for a batch.
 * Returns the blocks taken (0: every slot of the class is empty or taken).
 */
export function takeFromExchange(h: ArenaHeap, cls: number, m: number): number {
  const s = claimSlot(h, cls, X_FULL, X_TAKING, m, EXCHANGE_CLASSES + cls);
  if (s === 0) return 0;
  const i32 = h.i32;
  const c = i32[s + X_COUNT]!;
  const to = ((h.agentArea + CACHE_STACKS_OFFSET) >>> 2) + cls * CACHE_STRIDE + m;
  let end = 0;
  for (let i = 0; i < c; i++) {
    const p = i32[s + X_ENTRIES + i]!;
    i32[to + i] = p;
    end = Math.max(end, p >>> 0);
  }
  i32[(h.agentArea >>> 2) + G_CACHE_COUNT + cls] = m + c; // from here the blocks are the cache's
  i32[s + X_COUNT] = 0;
  Atomics.store(i32, s, X_EMPTY);
  i32[((h.agentArea + EXCHANGE_OFFSET) >>> 2) + XA_SLOT] = 0;
  // The blocks may lie in arenas another agent carved past this agent's views (it grew the buffer): the views
  // must reach them before the mallocs that pop them write their first words.
  h.cover(end + 8);
  return c;
}

/**
 * Claims a slot of class `cls` that is in state `from` for this agent (`held`: giving or taking), naming it and
 * the cache count `base` in the agent area first. The look starts at the slot after the last one this agent
 * claimed this way (hint `hint`): a giver and the takers behind it go round the slots like a ring. Returns the
 * slot's Int32 index, or 0 when none is in state `from` (the agent area then names none).
 */
function claimSlot(h: ArenaHeap, cls: number, from: number, held: number, base: number, hint: number): number {
  const i32 = h.i32;
  const first = slotsOf(h.exchangeWord, cls);
  const xa = (h.agentArea + EXCHANGE_OFFSET) >>> 2;
  const start = h.exchangeHints[hint]!;
  for (let j = 0; j < EXCHANGE_SLOTS; j++) {
    const k = (start + j) & (EXCHANGE_SLOTS - 1);
    const s = first + k * SLOT_WORDS;
    // A plain read to look (an Atomics.load costs about five times as much, and a taker that finds nothing reads
    // every slot of the class): a stale value only passes a slot by or makes the CAS below fail, and what the slot
    // holds is read only after that CAS.
    if (i32[s] !== from) continue;
    i32[xa + XA_SLOT] = s;
    i32[xa + XA_BASE] = base;
    if (Atomics.compareExchange(i32, s, from, h.exchangeTag | held) !== from) continue;
    h.exchangeHints[hint] = k + 1;
    return s;
  }
  i32[xa + XA_SLOT] = 0;
  return 0;
}

/**
 * Sends every block waiting in the exchange home (an agent going idle or leaving, or flushing its cache), each
 * after the check a dead agent's cache gets (a block that no longer looks held freed, in a live slab with its
 * freed mark, is left alone). Returns the blocks sent. A slot another agent holds right now is left to it.
 */
export function emptyExchange(h: ArenaHeap): number {
  if (h.exchangeWord === 0) return 0;
  const i32 = h.i32;
  const xa = (h.agentArea + EXCHANGE_OFFSET) >>> 2;
  const routing = (h.agentArea >>> 2) + G_ROUTING;
  let sent = 0;
  for (let s = h.exchangeWord, end = h.exchangeWord + EXCHANGE_BYTES / 4; s < end; s += SLOT_WORDS) {
    if (Atomics.load(i32, s) !== X_FULL) continue;
    i32[xa + XA_SLOT] = s;
    i32[xa + XA_BASE] = -1;
    if (Atomics.compareExchange(i32, s, X_FULL, h.exchangeTag | X_TAKING) !== X_FULL) continue;
    // Each block comes off the slot (its count) and is then named in the routing word until it is on a list: a
    // reaper finds the rest in the slot and this one by that word (a stop between the two loses one block at
    // most, left live, never sends one home twice).
    for (let i = Math.min(i32[s + X_COUNT]!, EXCHANGE_BATCH) - 1; i >= 0; i--) {
      const p = i32[s + X_ENTRIES + i]! >>> 0;
      i32[s + X_COUNT] = i;
      h.u32[routing] = p;
      if (isHeldFreed(h, p)) {
        h.freeValidated(p);
        sent++;
      }
      h.u32[routing] = 0;
    }
    Atomics.store(h.i32, s, X_EMPTY);
    i32[xa + XA_SLOT] = 0;
  }
  return sent;
}

/**
 * A slot the dead agent at `area` (agent id `agentId`) held when it died: given back as full or empty according
 * to where its pointers are, which the dead agent's cache count for the slot's class tells (see the file's
 * comment). Call before the dead agent's cache is sent home.
 */
export function resolveDeadExchange(h: ArenaHeap, area: number, agentId: number): void {
  const xa = (area + EXCHANGE_OFFSET) >>> 2;
  const s = h.i32[xa + XA_SLOT]!;
  const base = h.i32[xa + XA_BASE]!;
  h.i32[xa + XA_SLOT] = 0;
  const xw = h.exchangeWord;
  if (xw === 0 || s < xw || s >= xw + EXCHANGE_BYTES / 4 || (s - xw) % SLOT_WORDS !== 0) return;
  const state = Atomics.load(h.i32, s);
  if (state >>> 2 !== agentId) return;
  const cls = Math.floor((s - xw) / (EXCHANGE_SLOTS * SLOT_WORDS));
  const count = h.i32[(area >>> 2) + G_CACHE_COUNT + cls]!;
  let inSlot: boolean;
  if ((state & 3) === X_GIVING) inSlot = count < base;
  else if ((state & 3) === X_TAKING) inSlot = base === -1 ? h.i32[s + X_COUNT]! > 0 : count <= base;
  else return;
  if (!inSlot) h.i32[s + X_COUNT] = 0;
  Atomics.store(h.i32, s, inSlot ? X_FULL : X_EMPTY);
}

/** Blocks waiting in the exchange now, per class (0-15), and their bytes (plain loads: a moment old if others move them). */
export function exchangeHeld(h: ArenaHeap): { blocks: number[]; bytes: number } {
  const blocks = new Array<number>(CLASS_COUNT).fill(0);
  let bytes = 0;
  if (h.exchangeWord === 0) return { blocks, bytes };
  for (let cls = 0; cls < EXCHANGE_CLASSES; cls++) {
    for (let k = 0; k < EXCHANGE_SLOTS; k++) {
      const s = slotsOf(h.exchangeWord, cls) + k * SLOT_WORDS;
      if (Atomics.load(h.i32, s) !== X_FULL) continue;
      const c = h.i32[s + X_COUNT]!;
      blocks[cls]! += c;
      bytes += c * (32 << cls);
    }
  }
  return { blocks, bytes };
}

/** Whether class `cls`'s cache can go through the exchange: the heap has one and a stack holds a batch and more. */
export function exchangeServes(h: ArenaHeap, cls: number): boolean {
  return h.exchangeWord !== 0 && cls < EXCHANGE_CLASSES && h.u32[(h.agentArea >>> 2) + G_CACHE_DEPTH + cls]! > EXCHANGE_BATCH;
}
