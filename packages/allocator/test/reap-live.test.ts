// Reaping is for agents that are gone: a reap of an agent that is alive (its worker watched and not exited, or its
// thread answering the ping of its presence word) is refused with HeapError AGENT_ALIVE, and the agent goes on
// allocating and freeing with every check passing. A worker that is really gone is still reaped at once.
import { afterEach, describe, expect, it } from 'vitest';
import type { Worker } from 'node:worker_threads';
import { HeapError } from '@paddock/platform';
import { createArenaHeap as createHeap } from '../src/heap.js';
import { nextMessage, startWorker } from './workers.js';

const GiB = 1 << 30;
const started: Worker[] = [];

async function liveWorker(handle: unknown): Promise<{ w: Worker; agentId: number }> {
  const w = startWorker('presence.mjs', { handle });
  started.push(w);
  const { agentId } = await nextMessage<{ kind: string; agentId: number }>(w, (m) => m.kind === 'attached');
  return { w, agentId };
}

async function work(w: Worker, rounds = 20): Promise<{ kind: string; live?: number; error?: string }> {
  const done = nextMessage<{ kind: string; live?: number; error?: string }>(w, (m) => m.kind === 'worked' || m.kind === 'failed');
  w.postMessage({ kind: 'work', rounds });
  return done;
}

/** `heap.reap(agentId)`, again for up to 3 s while it is refused as not having answered since a ping found it alive. */
async function reapWithinGrace(heap: ReturnType<typeof createHeap>, agentId: number): Promise<ReturnType<ReturnType<typeof createHeap>['reap']>> {
  const until = Date.now() + 3000;
  for (;;) {
    try {
      return heap.reap(agentId);
    } catch (err) {
      if (!(err instanceof HeapError) || !/has not answered since/.test(err.message) || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

function refusal(f: () => unknown): HeapError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(HeapError);
    expect((err as HeapError).code).toBe('AGENT_ALIVE');
    return err as HeapError;
  }
  throw new Error('the reap was accepted');
}

const heaps: { close(): void }[] = [];
/** Closed after the test: a heap object left open would go on watching the workers of the tests after it. */
function track<H extends { close(): void }>(heap: H): H {
  heaps.push(heap);
  return heap;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((w) => w.terminate()));
  for (const heap of heaps.splice(0)) heap.close();
});

describe('a reap of a live agent', () => {
  it('is refused for a live worker nobody watches; it goes on allocating and its check passes', async () => {
    const heap = track(createHeap({ maxBytes: GiB, watchWorkers: false })); // nobody watches
    heap.malloc(64);
    const { w, agentId } = await liveWorker(heap.handle);
    expect((await work(w)).kind).toBe('worked');
    for (let i = 0; i < 3; i++) {
      refusal(() => heap.reap(agentId));
      expect((await work(w)).kind).toBe('worked'); // it answered: the next reap finds it again
    }
    refusal(() => heap.reap(agentId, { releaseLive: true }));
    const after = await work(w, 50);
    expect(after).toEqual({ kind: 'worked', live: expect.any(Number) });
    heap.check();
    // Once it is gone it is reaped: at once, or, where the last reap's ping found it alive and a loaded machine has
    // not seen it answer since, once the grace after that ping has passed (the refusal says so).
    await w.terminate();
    const report = await reapWithinGrace(heap, agentId);
    expect(report.arenasAdopted).toBeGreaterThan(0);
    heap.check();
  });

  it('is refused for a watched worker until it exits; the watch then reaps it', async () => {
    const heap = track(createHeap({ maxBytes: GiB }));
    const { w, agentId } = await liveWorker(heap.handle);
    heap.watch(w);
    await work(w);
    expect(refusal(() => heap.reap(agentId)).message).toMatch(/watched/);
    expect((await work(w)).kind).toBe('worked');
    await w.terminate();
    expect(() => heap.reap(agentId)).toThrow(/not live/); // the watch reaped it
    heap.check();
  });

  it("an exit reported while the worker's thread still runs (Deno emits it early) reaps nothing until the thread is gone", async () => {
    const heap = track(createHeap({ maxBytes: GiB, watchWorkers: false }));
    const { w, agentId } = await liveWorker(heap.handle);
    expect((await work(w)).kind).toBe('worked');
    const thread = w.threadId + 1;
    heap.workerExited(thread, {}); // what the thread's watch does at a worker's exit event
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 60));
      const after = await work(w, 20); // it answered the pings: not reaped, and its blocks are its own
      expect(after.kind).toBe('worked');
    }
    refusal(() => heap.reap(agentId)); // still live
    await w.terminate();
    // The reap comes once its thread no longer answers (looked at every 50 ms).
    const until = Date.now() + 5000;
    let reaped = false;
    while (!reaped && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      try {
        heap.reap(agentId);
      } catch (err) {
        reaped = err instanceof RangeError; // reaped by the deferred exit, not by this call
        if (!reaped && !(err instanceof HeapError)) throw err;
      }
    }
    expect(reaped).toBe(true);
    heap.check();
  });

  it('is refused for a worker busy in a loop that never yields, twice in a row; it goes on and its check passes', async () => {
    const heap = track(createHeap({ maxBytes: GiB, watchWorkers: false })); // nobody watches: only the ping can tell
    const { w, agentId } = await liveWorker(heap.handle);
    const done = nextMessage<{ kind: string; live?: number; error?: string }>(w, (m) => m.kind === 'worked' || m.kind === 'failed');
    const busy = nextMessage(w, (m: { kind: string }) => m.kind === 'busy');
    w.postMessage({ kind: 'busy', ms: 400 });
    await busy;
    refusal(() => heap.reap(agentId)); // its wait is there although its thread is busy
    expect(refusal(() => heap.reap(agentId)).message).toMatch(/not answered/); // woken, not come round yet
    expect((await done).kind).toBe('worked');
    expect((await work(w)).kind).toBe('worked');
    heap.check();
  });

  it('several live workers try to reap one another: every reap is refused; one that is terminated is reaped once', async () => {
    const heap = track(createHeap({ maxBytes: GiB, watchWorkers: false })); // the workers reap, not this thread at the exit
    const workers = await Promise.all(Array.from({ length: 4 }, () => liveWorker(heap.handle)));
    const ids = workers.map((x) => x.agentId);
    const results = await Promise.all(
      workers.map(({ w }) => {
        const r = nextMessage<{ kind: string; codes: Record<string, number> }>(w, (m) => m.kind === 'reaped-others');
        w.postMessage({ kind: 'reap-others', ids, times: 50 });
        return r;
      }),
    );
    for (const r of results) expect(r.codes).toEqual({ AGENT_ALIVE: 150 });
    for (const { w } of workers) expect((await work(w)).kind).toBe('worked'); // all answered since
    await workers[0]!.w.terminate();
    const reaps = await Promise.all(
      workers.slice(1).map(({ w }) => {
        const r = nextMessage<{ kind: string; ok: boolean; code?: string }>(w, (m) => m.kind === 'reap');
        w.postMessage({ kind: 'reap', id: ids[0] });
        return r;
      }),
    );
    expect(reaps.filter((r) => r.ok)).toHaveLength(1);
    // The others find it reaped (RangeError), or, racing the winner's ping, a wait of the dead thread not yet torn
    // down that answered: refused as alive, which never harms (a CI run on a loaded machine saw one of each).
    for (const r of reaps.filter((x) => !x.ok)) expect(['RangeError', 'AGENT_ALIVE']).toContain(r.code);
    for (const { w } of workers.slice(1)) expect((await work(w)).kind).toBe('worked');
    heap.check();
  });
});
