// The bars beside the map: per size class (a bar as long as the class's slabs hold, filled as far as their
// objects are live), per agent (what its owner slot holds live, its thread cache, the units it retains, the
// frees waiting in its chains), and a chip per owner slot (taken over ones say by whom).
import type { HeapSnapshot } from '@paddock/allocator';
import { bytes, classColour, ownerColour } from './palette.js';

/** What the bars showed last (for tests). */
export interface BarsDrawn {
  classes: number;
  agents: { agentId: number; state: string; ownerSlot: number }[];
  owners: { slot: number; state: string; adoptedBy: number }[];
}

function bar(label: string, parts: { width: number; colour: string }[], text: string): HTMLElement {
  const row = document.createElement('div');
  row.className = 'row';
  const name = document.createElement('span');
  name.className = 'label';
  name.textContent = label;
  name.title = label;
  const track = document.createElement('div');
  track.className = 'bar';
  let left = 0;
  for (const p of parts) {
    const seg = document.createElement('i');
    seg.style.left = `${left * 100}%`;
    seg.style.width = `${Math.max(0, p.width) * 100}%`;
    seg.style.background = p.colour;
    track.append(seg);
    left += p.width;
  }
  const em = document.createElement('em');
  em.textContent = text;
  track.append(em);
  row.append(name, track);
  return row;
}

export function drawBars(s: HeapSnapshot, classes: HTMLElement, agents: HTMLElement, owners: HTMLElement): BarsDrawn {
  const a = s.arena;
  const classRows: HTMLElement[] = [];
  if (a) {
    const capacity = a.classes.map((c, i) => (i < 16 ? (c.live + c.free) * c.size : c.liveBytes));
    const largest = Math.max(1, ...capacity);
    a.classes.forEach((c, i) => {
      if (c.slabs === 0) return;
      const total = c.live + c.free;
      const label = i < 16 ? `${bytes(c.size)}` : 'large';
      const fill = total > 0 ? c.live / total : 1;
      const width = capacity[i]! / largest;
      const text = i < 16 ? `${c.live}/${total} · ${bytes(c.liveBytes)} · ${c.slabs} slabs` : `${c.live} live, ${c.slabs - c.live} parked · ${bytes(c.liveBytes)}`;
      classRows.push(bar(label, [{ width: width * fill, colour: classColour(i) }, { width: width * (1 - fill), colour: '#2a313c' }], text));
    });
  } else {
    const largest = Math.max(1, ...s.classes.map((c) => (c.live + c.free) * c.size));
    s.classes.forEach((c) => {
      if (c.live + c.free === 0) return;
      const width = ((c.live + c.free) * c.size) / largest;
      const fill = c.live / (c.live + c.free);
      classRows.push(bar(bytes(c.size), [{ width: width * fill, colour: '#5b9cf5' }, { width: width * (1 - fill), colour: '#2a313c' }], `${c.live}/${c.live + c.free} · ${bytes(c.liveBytes)}`));
    });
  }
  if (classRows.length === 0) classRows.push(Object.assign(document.createElement('p'), { className: 'note', textContent: 'nothing allocated' }));
  classes.replaceChildren(...classRows);

  const agentRows: HTMLElement[] = [];
  const shown = (a?.agents ?? []).filter((x) => x.state !== 'vacant');
  const ownerOf = (slot: number) => a?.owners.find((o) => o.slot === slot);
  const largestAgent = Math.max(1, ...shown.map((x) => (ownerOf(x.ownerSlot)?.liveBytes ?? 0) + x.cacheBytes + x.retainedBytes));
  for (const x of shown) {
    const live = x.state === 'live' || x.state === 'detached' ? (ownerOf(x.ownerSlot)?.liveBytes ?? 0) : 0;
    const label = `agent ${x.agentId}${x.self ? ' (page)' : ''}`;
    const pending = x.pendingChainObjects > 0 ? ` · ${x.pendingChainObjects} frees pending${x.flushing ? ', flushing' : ''}` : '';
    const text = `${x.state} · slot ${x.ownerSlot || '-'} · live ${bytes(live)} · cache ${bytes(x.cacheBytes)}${x.retainedBytes ? ` · retained ${bytes(x.retainedBytes)}` : ''}${pending}`;
    agentRows.push(
      bar(
        label,
        [
          { width: live / largestAgent, colour: ownerColour(x.ownerSlot) },
          { width: x.cacheBytes / largestAgent, colour: '#d6dde6' },
          { width: x.retainedBytes / largestAgent, colour: '#5a3f99' },
        ],
        text,
      ),
    );
  }
  if (!a) agentRows.push(Object.assign(document.createElement('p'), { className: 'note', textContent: `${s.backend} keeps no unit map: classes and figures only` }));
  agents.replaceChildren(...agentRows);

  const chips = (a?.owners ?? []).map((o) => {
    const chip = document.createElement('span');
    chip.className = `owner ${o.state}`;
    const sw = document.createElement('i');
    sw.className = 'swatch';
    sw.style.background = ownerColour(o.slot);
    chip.append(sw, `slot ${o.slot} ${o.state === 'adopted' ? `taken over by ${o.adoptedBy}` : o.state} · ${o.arenas} arenas${o.inboxPending ? ' · inbox' : ''}`);
    return chip;
  });
  owners.replaceChildren(...chips);
  return {
    classes: classRows.length,
    agents: shown.map((x) => ({ agentId: x.agentId, state: x.state, ownerSlot: x.ownerSlot })),
    owners: (a?.owners ?? []).map((o) => ({ slot: o.slot, state: o.state, adoptedBy: o.adoptedBy })),
  };
}
