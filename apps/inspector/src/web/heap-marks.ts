// What two snapshots in a row show happened, as timeline marks: an owner slot taken over (its agent left or
// was reaped, and another agent adopted its arenas), an agent that attached, detached, left (its area free for
// the next), crashed or was reaped.
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
    if (x.state === was || x.state === 'claiming') continue;
    let what: string | null = x.state; // detached, crashed, reaped
    if (x.state === 'live') what = 'attached';
    else if (x.state === 'vacant') what = was === 'live' || was === 'detached' ? 'left' : null;
    else if (was === undefined) what = null; // first seen already gone: nothing happened between the two
    if (what !== null) marks.push({ t, label: `agent ${x.agentId} ${what}`, kind: 'heap' });
  }
  return marks;
}
