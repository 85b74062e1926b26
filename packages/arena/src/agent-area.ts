/**
 * The agent area: what a reaper must reach of one agent (its thread cache, chain map and stash), kept in the
 * shared buffer. This file reserves, publishes and finds areas; their word layout is in agent-layout.ts.
 */
import { GRANULE, HeapError, formatAddress, type AddressSpace } from '@paddock/platform';
import { AGENT_AREA_COMMIT, AGENT_CLAIMING, AGENT_LIVE, AGENT_MAGIC, AGENT_VACANT, G_AGENT_ID, G_MAGIC, G_MAP_ADDR, G_MAP_CAP, G_NEXT, G_STATE, G_THREAD, INLINE_MAP_OFFSET, INLINE_MAP_OWNERS } from './agent-layout.js';

export * from './agent-layout.js';

/** The region layer's user word that holds the head of the agent-area list. */
export const AGENT_LIST_WORD = 2;

/**
 * Lays out an agent area for agent `agentId` running on the thread whose key is `thread`, on the list whose
 * head word is at byte `listHead`: a vacant one (an agent that left) is claimed with one CAS and laid out
 * again in place (its magic and list link stay as they are, so walkers never lose the list); otherwise a new
 * one is reserved and pushed onto the list. Returns its address.
 */
export function createAgentArea(space: AddressSpace, listHead: number, agentId: number, thread: number): number {
  for (const area of agentAreas(space, listHead)) {
    const w = area >>> 2;
    if (Atomics.load(space.i32, w + G_STATE) !== AGENT_VACANT) continue;
    if (Atomics.compareExchange(space.i32, w + G_STATE, AGENT_VACANT, AGENT_CLAIMING) !== AGENT_VACANT) continue;
    space.commit(area, AGENT_AREA_COMMIT);
    space.u8.fill(0, area + (G_STATE + 1) * 4, area + G_NEXT * 4);
    space.u8.fill(0, area + (G_NEXT + 1) * 4, area + AGENT_AREA_COMMIT);
    layOut(space, area, agentId, thread);
    Atomics.store(space.i32, w + G_STATE, AGENT_LIVE);
    return area;
  }
  const area = space.reserve(GRANULE);
  space.commit(area, AGENT_AREA_COMMIT);
  space.u8.fill(0, area, area + AGENT_AREA_COMMIT);
  const i32 = space.i32;
  const w = area >>> 2;
  layOut(space, area, agentId, thread);
  i32[w + G_STATE] = AGENT_LIVE;
  Atomics.store(i32, w + G_MAGIC, AGENT_MAGIC);
  const hw = listHead >>> 2;
  for (;;) {
    const head = Atomics.load(i32, hw);
    i32[w + G_NEXT] = head;
    if (Atomics.compareExchange(i32, hw, head, area | 0) === head) return area;
  }
}

/** Writes a zeroed area's own words: its agent, thread and inline chain map. */
function layOut(space: AddressSpace, area: number, agentId: number, thread: number): void {
  const w = area >>> 2;
  space.i32[w + G_AGENT_ID] = agentId;
  space.i32[w + G_THREAD] = thread;
  space.u32[w + G_MAP_ADDR] = area + INLINE_MAP_OFFSET;
  space.i32[w + G_MAP_CAP] = INLINE_MAP_OWNERS;
}

/**
 * Gives up an area whose agent has left, once nothing reads it any more: everything past its first page is
 * decommitted (the list runs through that page) and it is marked vacant for the next agent to claim.
 */
export function vacateAgentArea(space: AddressSpace, area: number): void {
  space.decommit(area + 4096, AGENT_AREA_COMMIT - 4096);
  Atomics.store(space.i32, (area >>> 2) + G_STATE, AGENT_VACANT);
}

/** Bytes of an area's header words (0 .. 63): a walk makes sure the space's views reach them. */
export const AGENT_HEADER_BYTES = 256;

/**
 * Every agent area on the list, newest first. The space's views reach every one of them whole when this returns
 * (an area is committed before it is pushed); views an agent keeps of its own (the arena's) need a `sync`.
 */
export function agentAreas(space: AddressSpace, listHead: number): number[] {
  const areas: number[] = [];
  space.refresh();
  let a = Atomics.load(space.i32, listHead >>> 2) >>> 0;
  while (a !== 0) {
    if (!space.covers(a + AGENT_HEADER_BYTES) || space.i32[(a >>> 2) + G_MAGIC] !== AGENT_MAGIC || areas.length > 1 << 20) {
      throw new HeapError('CORRUPTION', `the agent list is broken at ${formatAddress(a)}`, a);
    }
    areas.push(a);
    a = space.u32[(a >>> 2) + G_NEXT]!;
  }
  return areas;
}

/** The area of agent `agentId`, or 0. */
export function findAgentArea(space: AddressSpace, listHead: number, agentId: number): number {
  for (const a of agentAreas(space, listHead)) if (space.i32[(a >>> 2) + G_AGENT_ID] === agentId) return a;
  return 0;
}
