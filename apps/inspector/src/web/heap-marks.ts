// What two snapshots in a row show happened, as timeline marks: an owner slot taken over (its agent left or
// was reaped, and another agent adopted its arenas), an agent that attached, left, crashed or was reaped.
import type { HeapSnapshot } from '@paddock/allocator';
import type { Mark } from '../stream.js';

export function heapMarks(prev: HeapSnapshot | null, next: HeapSnapshot): Mark[] {
  if (!prev?.arena || !next.arena) return [];
  const t = next.takenAt;
  const marks: Mark[] = [];
  const before = new Map(prev.arena.owners.map((o) => [o.slot, o.state]));
  for (const o of next.arena.owners) {
    if (o.state === 'adopted' && before.get(o.slot) !== 'adopted') marks.push({ t, label: `slot ${o.slot} taken over by ${o.adoptedBy}`, kind: 'heap' });
  }
  const agents = new Map(prev.arena.agents.map((x) => [x.agentId, x.state]));
  for (const x of next.arena.agents) {
    const was = agents.get(x.agentId);
    if (x.state === was || x.state === 'vacant' || x.state === 'claiming') continue;
    if (x.state === 'live') marks.push({ t, label: `agent ${x.agentId} attached`, kind: 'heap' });
    else if (was !== undefined) marks.push({ t, label: `agent ${x.agentId} ${x.state}`, kind: 'heap' });
  }
  return marks;
}
