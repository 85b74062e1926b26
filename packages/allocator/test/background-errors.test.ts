// Errors of background work (a visit of the idle tick that throws, a reap that `watch` starts) reach the handler the
// user set, or a warning said once; the process lives on (this file running to its end is the proof) and so does the
// tick.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AGENT_MAGIC, B_LENGTH, G_MAGIC } from '@paddock/arena';
import { HeapError } from '@paddock/platform';
import { attachArenaHeap as attachHeap, createArenaHeap as createHeap, type ArenaBackedHeap } from '../src/heap.js';
import { nextMessage, startWorker } from './workers.js';

const MiB = 1 << 20;

/** Puts a batch of `heap`'s blocks, freed by another agent, in its inbox and breaks the batch's length word. */
function forgeBadBatch(heap: ArenaBackedHeap): void {
  const blocks = Array.from({ length: 8 }, () => heap.malloc(64));
  const other = attachHeap(heap.handle);
  for (const p of blocks) other.free(p);
  other.flushCache();
  other.flush();
  const batch = heap.engine.registry.inboxHead(heap.stats().ownerSlot);
  expect(batch).not.toBe(0);
  heap.i32[(batch >>> 2) + B_LENGTH] = 1 << 20; // no batch is that long
}

/** Counts the visits of `heap`'s idle tick. */
function countVisits(heap: ArenaBackedHeap): { visits: number } {
  const seen = { visits: 0 };
  const tick = heap.tick;
  heap.tick = function (this: ArenaBackedHeap) {
    seen.visits++;
    return tick.call(this);
  };
  return seen;
}

const until = async (what: () => boolean, ms = 3000) => {
  for (const end = Date.now() + ms; !what() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 5));
  return what();
};

afterEach(() => vi.restoreAllMocks());

describe('errors of the idle tick', () => {
  it("a corruption the idle tick finds reaches the user's handler; the tick goes on", async () => {
    const errors: { err: unknown; during: string }[] = [];
    const heap = createHeap({ maxBytes: 256 * MiB, onError: (err, during) => errors.push({ err, during }) });
    forgeBadBatch(heap);
    const seen = countVisits(heap);
    heap.startIdle();
    expect(await until(() => errors.length > 0)).toBe(true);
    expect(errors[0]!.during).toBe('idle tick');
    expect(errors[0]!.err).toBeInstanceOf(HeapError);
    expect((errors[0]!.err as HeapError).code).toBe('CORRUPTION');
    const after = seen.visits;
    expect(await until(() => seen.visits >= after + 2)).toBe(true); // rescheduled: it keeps visiting
    heap.stopIdle();
    // The heap object stays usable: the bad batch was dropped, the agent allocates and frees.
    const p = heap.malloc(100);
    heap.free(p);
    heap.close();
  });

  it('without a handler, a warning says it once, with the code; the tick goes on', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const heap = createHeap({ maxBytes: 256 * MiB });
    const seen = countVisits(heap);
    let failures = 0;
    const tick = heap.tick;
    heap.tick = function (this: ArenaBackedHeap) {
      failures++;
      tick.call(this);
      throw new HeapError('CORRUPTION', 'forged: every visit fails');
    };
    heap.startIdle();
    expect(await until(() => failures >= 3)).toBe(true);
    heap.stopIdle();
    expect(seen.visits).toBeGreaterThanOrEqual(3);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toContain('CORRUPTION');
    heap.close();
  });

  it('a handler that throws is reported by the warning in its place; heap.onError can be set and cleared', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const heap = createHeap({ maxBytes: 256 * MiB });
    expect(heap.onError).toBe(null);
    heap.onError = () => {
      throw new TypeError('the handler itself fails');
    };
    forgeBadBatch(heap);
    heap.startIdle();
    expect(await until(() => warn.mock.calls.length > 0)).toBe(true);
    heap.stopIdle();
    expect(String(warn.mock.calls[0]![0])).toContain('TypeError');
    heap.onError = null;
    expect(heap.onError).toBe(null);
    expect(() => {
      (heap as { onError: unknown }).onError = 42;
    }).toThrow(TypeError);
    expect(() => createHeap({ maxBytes: 256 * MiB, onError: 42 as never })).toThrow(TypeError);
    heap.close();
  });
});

describe('errors of a reap that watch starts', () => {
  it("a corruption the reap meets when the worker exits reaches the user's handler; the process lives on", async () => {
    const errors: { err: unknown; during: string }[] = [];
    const heap = createHeap({ maxBytes: 256 * MiB });
    heap.onError = (err, during) => errors.push({ err, during });
    const w = startWorker('old-views.mjs', { handle: heap.handle, job: 'hold' });
    heap.watch(w);
    const { agentId } = await nextMessage<{ kind: string; agentId: number }>(w, (m) => m.kind === 'holding');
    const area = heap.engine.areaOf(agentId);
    heap.i32[(area >>> 2) + G_MAGIC] = 0x0bad; // the agent list is broken at its area: the walk of the reap refuses it
    const exited = new Promise((r) => w.once('exit', r));
    await w.terminate();
    await exited;
    expect(errors).toHaveLength(1);
    expect(errors[0]!.during).toBe('reap');
    expect((errors[0]!.err as HeapError).code).toBe('CORRUPTION');
    heap.i32[(area >>> 2) + G_MAGIC] = AGENT_MAGIC; // mended: the heap object goes on
    heap.reap(agentId);
    heap.check();
    heap.close();
  });
});
