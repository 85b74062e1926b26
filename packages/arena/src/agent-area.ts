/**
 * The agent area: what a reaper must reach of one agent (its thread cache, chain map and stash), kept in the
 * shared buffer. This file reserves, publishes and finds areas; their word layout is in agent-layout.ts.
 */
import { GRANULE, HeapError, formatAddress, type AddressSpace } from '@paddock/platform';
import { AGENT_AREA_COMMIT, AGENT_LIVE, AGENT_MAGIC, G_AGENT_ID, G_MAGIC, G_MAP_ADDR, G_MAP_CAP, G_NEXT, G_STATE, INLINE_MAP_OFFSET, INLINE_MAP_OWNERS } from './agent-layout.js';

export * from './agent-layout.js';

/**
 * Reserves, lays out and publishes a new agent area on the list whose head word is at byte `listHead`.
 * Returns its address.
 */
export function createAgentArea(space: AddressSpace, listHead: number, agentId: number): number {
  const area = space.reserve(GRANULE);
  space.commit(area, AGENT_AREA_COMMIT);
  space.u8.fill(0, area, area + AGENT_AREA_COMMIT);
  const i32 = space.i32;
  const w = area >>> 2;
  i32[w + G_AGENT_ID] = agentId;
  i32[w + G_STATE] = AGENT_LIVE;
  space.u32[w + G_MAP_ADDR] = area + INLINE_MAP_OFFSET;
  i32[w + G_MAP_CAP] = INLINE_MAP_OWNERS;
  Atomics.store(i32, w + G_MAGIC, AGENT_MAGIC);
  const hw = listHead >>> 2;
  for (;;) {
    const head = Atomics.load(i32, hw);
    i32[w + G_NEXT] = head;
    if (Atomics.compareExchange(i32, hw, head, area | 0) === head) return area;
  }
}

/** Every agent area on the list, newest first. */
export function agentAreas(space: AddressSpace, listHead: number): number[] {
  const areas: number[] = [];
  space.refresh();
  let a = Atomics.load(space.i32, listHead >>> 2) >>> 0;
  while (a !== 0) {
    if (!space.covers(a + 64) || space.i32[(a >>> 2) + G_MAGIC] !== AGENT_MAGIC || areas.length > 1 << 20) {
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
