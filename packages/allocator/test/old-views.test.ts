// An agent's views are fixed-length and refreshed when an address lies past them. Every path that reaches a word
// outside the fast paths (agent areas and their walks, its inbox and registry slot, the idle wake, detach, reaps,
// adoption) must reach it through views that cover it: here another agent grows the buffer (commits far up, appends
// registry segments, creates agent areas) after this agent took its views, and then this agent runs the path.
import { describe, expect, it } from 'vitest';
import type { Worker } from 'node:worker_threads';
import { attachArenaHeap as attachHeap, createArenaHeap as createHeap, type ArenaBackedHeap } from '../src/heap.js';
import { nextMessage, startWorker } from './workers.js';

const MiB = 1 << 20;
const GiB = 1 << 30;
const GRANULE = 64 * 1024;

/** Bytes this agent's arena views reach (what its paths index through). */
const viewBytes = (h: ArenaBackedHeap) => h.engine.i32.byteLength;
const armWake = (h: ArenaBackedHeap) => (h as unknown as { armIdleWake(d: number, w: () => void): void }).armIdleWake(10, () => {});

/**
 * Another agent grows the buffer far past `h`'s views (an oversized mapping, committed and touched) and takes the
 * address space still free below their end, so that what is reserved next (an agent area, a registry segment)
 * lies past them too.
 */
function growPast(h: ArenaBackedHeap): ArenaBackedHeap {
  const other = attachHeap(h.handle);
  const p = other.malloc(64 * MiB);
  other.u8[p + 64 * MiB - 1] = 1;
  const end = other.space.viewBytes;
  expect(end).toBeGreaterThan(viewBytes(h) + 32 * MiB);
  for (let i = 0; i < end / GRANULE; i++) {
    const a = other.space.reserve(GRANULE);
    if (a >= end) {
      other.space.release(a, GRANULE);
      break;
    }
  }
  return other;
}

/** Another agent takes `n` owner slots (the registry appends segments for them, past `h`'s views). */
function takeSlots(by: ArenaBackedHeap, n: number): void {
  for (let i = 0; i < n; i++) by.engine.registry.takeOwnerSlot();
}

describe('old views on the main thread', () => {
  it('the idle visit walks agent areas created past its views', () => {
    const heap = createHeap({ maxBytes: GiB });
    heap.malloc(64);
    growPast(heap);
    const late = attachHeap(heap.handle); // its area lies past the main agent's views
    const kept = late.malloc(64);
    const lateSlot = late.stats().ownerSlot;
    expect(late.engine.agentArea).toBeGreaterThanOrEqual(viewBytes(heap));
    late.detach(); // a departure: the next visit walks the areas and adopts the slot
    heap.tick();
    expect(heap.stats().adoptedSlots).toContain(lateSlot);
    heap.free(kept);
    heap.check();
  });

  it('a slot taken in a segment another agent appended past its views: the wake and the detach reach its inbox', () => {
    const heap = createHeap({ maxBytes: GiB }); // no slot yet
    const other = growPast(heap);
    takeSlots(other, 300); // segment 1 is appended, past the main agent's views
    const leaving = attachHeap(heap.handle);
    const kept = leaving.malloc(64);
    leaving.detach();
    heap.tick(); // adopts the slot: takes a slot of its own first, in segment 1
    const slot = heap.stats().ownerSlot;
    expect(slot).toBeGreaterThan(256);
    expect(heap.engine.inbox * 4 + 4).toBeLessThanOrEqual(viewBytes(heap));
    armWake(heap);
    heap.stopIdle();
    heap.free(kept);
    heap.check();
    heap.detach(); // reads its inboxes once more after marking the slot detached
  });

  it('a freer takes its first slot adopting the owner it frees to (no walk before): the wake and the detach reach its inbox', () => {
    const heap = createHeap({ maxBytes: GiB }); // it only frees: no slot yet
    const owner = attachHeap(heap.handle);
    const p = owner.malloc(64);
    heap.free(p); // into its cache (its views now reach the owner's arena)
    const other = growPast(heap);
    takeSlots(other, 300); // segment 1 is appended, past the freer's views
    owner.detach(); // its arena, p live in it, waits for an adopter
    heap.flushCache();
    heap.flush(); // the chain's owner left: the freer adopts its slot, taking a slot of its own in segment 1
    expect(heap.stats().ownerSlot).toBeGreaterThan(256);
    expect(heap.engine.inbox * 4 + 4).toBeLessThanOrEqual(viewBytes(heap));
    armWake(heap);
    heap.stopIdle();
    heap.check();
    heap.detach(); // reads its inboxes once more after marking the slot detached
  });

  it('an agent that never allocated detaches after others grew the heap and the registry', () => {
    const heap = createHeap({ maxBytes: GiB });
    const quiet = attachHeap(heap.handle);
    const other = growPast(quiet);
    takeSlots(other, 300);
    const leaving = attachHeap(heap.handle);
    leaving.malloc(64);
    leaving.detach();
    quiet.tick();
    quiet.detach();
    heap.tick();
    heap.check();
  });

  it("a watch reaps a worker whose agent area lies past the watcher's views", async () => {
    const heap = createHeap({ maxBytes: GiB });
    heap.malloc(64);
    growPast(heap); // the worker's area goes past the main agent's views
    const w = startWorker('old-views.mjs', { handle: heap.handle, job: 'hold' });
    heap.watch(w);
    const { agentId } = await nextMessage<{ kind: string; agentId: number }>(w, (m) => m.kind === 'holding');
    expect(heap.engine.areaOf(agentId)).toBeGreaterThanOrEqual(viewBytes(heap));
    const exited = new Promise((r) => w.once('exit', r));
    await w.terminate();
    await exited;
    expect(() => heap.reap(agentId)).toThrow(/not live/); // the watch did it
    heap.check();
  });
});

describe('old views in a worker', () => {
  it("a worker's idle visit, wake and detach after the parent grew the heap, the registry and the agent list", async () => {
    const heap = createHeap({ maxBytes: GiB });
    heap.malloc(64);
    const w: Worker = startWorker('old-views.mjs', { handle: heap.handle, job: 'tick-when-told' });
    const { viewBytes: workerView } = await nextMessage<{ kind: string; viewBytes: number }>(w, (m) => m.kind === 'attached');
    growPast(heap);
    takeSlots(heap, 300);
    const leaving = attachHeap(heap.handle); // an area past the worker's views, and a slot in segment 1
    const kept = leaving.malloc(64);
    const leavingSlot = leaving.stats().ownerSlot;
    expect(leaving.engine.agentArea).toBeGreaterThanOrEqual(workerView);
    leaving.detach();
    const done = nextMessage<{ kind: string; adopted?: number[]; step?: string; error?: string }>(w, (m) => m.kind === 'done' || m.kind === 'failed');
    w.postMessage('go');
    const result = await done;
    expect(result).toEqual({ kind: 'done', adopted: [leavingSlot] });
    await w.terminate();
    heap.free(kept);
    heap.tick();
    heap.check();
  });
});
