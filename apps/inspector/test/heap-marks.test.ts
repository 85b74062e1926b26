// The timeline's heap marks: what two snapshots in a row show happened to agents and owner slots.
import { describe, expect, it } from 'vitest';
import { attachHeap, createHeap } from '@paddock/allocator';
import { heapMarks } from '../src/web/heap-marks.js';

describe('heap marks', () => {
  it('an agent attaches, leaves with live blocks, and its owner slot is taken over', () => {
    const heap = createHeap({ maxBytes: 256 << 20 });
    heap.malloc(100);
    const first = heap.snapshot();
    const other = attachHeap(heap.handle);
    const held = Array.from({ length: 50 }, () => other.malloc(2000));
    const attached = heap.snapshot();
    expect(heapMarks(null, attached)).toEqual([]);
    expect(heapMarks(first, attached).map((m) => m.label)).toEqual([`agent ${other.agentId} attached`]);
    const slot = attached.arena!.agents.find((a) => a.agentId === other.agentId)!.ownerSlot;
    other.detach();
    for (const p of held) heap.free(p);
    heap.tick(); // takes over the owner that left
    const after = heap.snapshot();
    const marks = heapMarks(attached, after);
    const adopter = after.arena!.owners.find((o) => o.slot === slot)!.adoptedBy;
    expect(adopter).toBe(attached.arena!.agents.find((a) => a.self)!.ownerSlot);
    expect(marks.map((m) => m.label).sort()).toEqual([`agent ${other.agentId} left`, `slot ${slot} taken over by ${adopter}`]);
    expect(marks.every((m) => m.kind === 'heap' && m.t === after.takenAt)).toBe(true);
    expect(heapMarks(after, heap.snapshot())).toEqual([]);
    heap.close();
  });
});
