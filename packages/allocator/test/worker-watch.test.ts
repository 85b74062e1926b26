// A heap object watches every worker its thread creates, with no call of the user's (worker-watch.ts): one
// `worker` listener per thread however many heap objects watch, gone with the last one closed; a worker that never
// attaches leaves nothing behind; a worker created by a worker is its parent thread's to reap; until a worker
// exits, a reap of its agent is refused; errors of such a reap reach onError; `watchWorkers: false` turns it off.
import { afterEach, describe, expect, it } from 'vitest';
import { Worker } from 'node:worker_threads';
import { AGENT_MAGIC, G_MAGIC } from '@paddock/arena';
import { HeapError } from '@paddock/platform';
import { attachArenaHeap, createArenaHeap, type ArenaBackedHeap } from '../src/heap.js';
import { threadWatchState } from '../src/worker-watch.js';
import { nextMessage, startWorker } from './workers.js';

const MiB = 1 << 20;
const open: ArenaBackedHeap[] = [];
const started: Worker[] = [];

/** A heap closed after the test (an open one would go on watching the next tests' workers). */
function heapOf(options: Parameters<typeof createArenaHeap>[0] = {}): ArenaBackedHeap {
  const heap = createArenaHeap({ maxBytes: 256 * MiB, ...options });
  open.push(heap);
  return heap;
}

function exitOf(w: Worker): Promise<number> {
  return new Promise((r) => w.once('exit', r));
}

/** A worker that holds blocks (see workers/old-views.mjs, job 'hold'), once it says so. */
async function holder(heap: ArenaBackedHeap): Promise<{ w: Worker; agentId: number }> {
  const w = startWorker('old-views.mjs', { handle: heap.handle, job: 'hold' });
  started.push(w);
  const { agentId } = await nextMessage<{ kind: string; agentId: number }>(w, (m) => m.kind === 'holding');
  return { w, agentId };
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((w) => w.terminate()));
  for (const heap of open.splice(0)) heap.close();
});

describe('a heap object watches the workers its thread creates', () => {
  it('reaps a terminated worker at its exit, with no watch call; until then a reap of it is refused', async () => {
    const heap = heapOf();
    const { w, agentId } = await holder(heap);
    const thread = w.threadId + 1;
    expect(() => heap.reap(agentId)).toThrow(/is watched and has not exited/);
    expect(heap.engine.agentsOnThread(thread)).toEqual([agentId]);
    const exited = exitOf(w); // registered after the heap object's: the reap has run when it resolves
    await w.terminate();
    await exited;
    expect(heap.engine.agentsOnThread(thread)).toEqual([]);
    expect(() => heap.reap(agentId)).toThrow(RangeError); // the watch did it
    heap.check();
  });

  it('many heap objects in one thread keep one worker listener, dropped when the last one closes', async () => {
    const before = process.listenerCount('worker');
    const heaps = Array.from({ length: 12 }, () => heapOf());
    const attached = attachArenaHeap(heaps[0]!.handle); // a second heap object of the same heap watches too
    expect(process.listenerCount('worker')).toBe(before + 1);
    expect(threadWatchState()).toEqual({ watchers: 13, listening: true });
    // Each heap object reaps what the worker left in its own heap; the second object of heaps[0] finds it reaped.
    const { w, agentId } = await holder(heaps[0]!);
    const exited = exitOf(w);
    await w.terminate();
    await exited;
    expect(w.listenerCount('exit')).toBe(0); // the watch's exit listener went with the exit
    expect(() => heaps[0]!.reap(agentId)).toThrow(RangeError);
    attached.close();
    for (const heap of open.splice(0)) heap.close();
    expect(threadWatchState()).toEqual({ watchers: 0, listening: false });
    expect(process.listenerCount('worker')).toBe(before);
  });

  it('a worker that never attaches leaves nothing: no error, no listener', async () => {
    const heap = heapOf();
    const errors: unknown[] = [];
    heap.onError = (err) => errors.push(err);
    const w = new Worker('setTimeout(() => {}, 50)', { eval: true });
    const code = await exitOf(w);
    expect(code).toBe(0);
    expect(w.listenerCount('exit')).toBe(0);
    expect(errors).toEqual([]);
    expect(heap.engine.agentsOnThread(w.threadId + 1)).toEqual([]);
    heap.check();
  });

  it('a worker created by a worker is reaped by its parent thread\'s heap object', async () => {
    const heap = heapOf({ watchWorkers: false }); // this thread's object watches nothing: the parent reaps
    const parent = startWorker('nested-parent.mjs', { handle: heap.handle });
    started.push(parent);
    const child = await nextMessage<{ kind: string; agentId: number; thread: number }>(parent, (m) => m.kind === 'child');
    expect(heap.engine.agentsOnThread(child.thread)).toEqual([child.agentId]);
    const killed = nextMessage<{ kind: string; before: number; after: number }>(parent, (m) => m.kind === 'killed');
    parent.postMessage('kill');
    expect(await killed).toEqual({ kind: 'killed', before: 1, after: 0 });
    expect(() => heap.reap(child.agentId)).toThrow(RangeError);
    heap.check();
  });

  it('an error of such a reap reaches onError; the heap object goes on', async () => {
    const heap = heapOf();
    const errors: { err: unknown; during: string }[] = [];
    heap.onError = (err, during) => errors.push({ err, during });
    const { w, agentId } = await holder(heap);
    const area = heap.engine.areaOf(agentId);
    heap.i32[(area >>> 2) + G_MAGIC] = 0x0bad; // the agent list is broken at its area: the walk of the reap refuses it
    const exited = exitOf(w);
    await w.terminate();
    await exited;
    expect(errors).toHaveLength(1);
    expect(errors[0]!.during).toBe('reap');
    expect((errors[0]!.err as HeapError).code).toBe('CORRUPTION');
    heap.i32[(area >>> 2) + G_MAGIC] = AGENT_MAGIC; // mended
    heap.reap(agentId);
    heap.check();
  });

  it('a worker terminated while it gives an arena back: its exit reaps it and the arena goes back', async () => {
    const heap = heapOf();
    const w = startWorker('die-releasing-arena.mjs', { handle: heap.handle });
    started.push(w);
    const dying = await nextMessage<{ kind: string; agentId: number; arena: number }>(w, (m) => m.kind === 'dying');
    expect(heap.engine.regions.isCarved(dying.arena)).toBe(true); // its magic is gone, the region still has it out
    const exited = exitOf(w);
    await w.terminate();
    await exited;
    expect(() => heap.reap(dying.agentId)).toThrow(RangeError); // the watch did it
    expect(heap.engine.regions.carvedArenas()).toEqual([]);
    heap.check();
  });

  it('watchWorkers: false leaves a terminated worker to reap by hand; the option is checked', async () => {
    const heap = heapOf({ watchWorkers: false });
    const { w, agentId } = await holder(heap);
    const thread = w.threadId + 1;
    const exited = exitOf(w);
    await w.terminate();
    await exited;
    expect(heap.engine.agentsOnThread(thread)).toEqual([agentId]);
    heap.reap(agentId); // still live in the heap: nothing reaped it
    expect(heap.engine.agentsOnThread(thread)).toEqual([]);
    heap.check();
    expect(() => createArenaHeap({ maxBytes: MiB * 64, watchWorkers: 1 as never })).toThrow(TypeError);
    expect(() => attachArenaHeap(heap.handle, { watchWorkers: 'no' as never })).toThrow(TypeError);
  });
});
