// Many producers and many consumers on one channel, each a real worker_threads Worker running the built packages,
// on each backend: every block received exactly once, in order per producer, its contents intact (see
// workers/agent.mjs for the ledger). And a parked receiver and a parked sender woken by another agent's step: the
// channel's wake count shows the wake came from a notify, not from the wait's bound.
import { describe, expect, it } from 'vitest';
import type { Heap } from '@paddock/allocator';
import { createChannel, type Channel } from '../src/index.js';
import { SHARED_WORDS, resultOf, startAgent } from './agents.js';
import { BACKENDS, heapOf } from './backends.js';

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 2));
}

describe.each(BACKENDS)('producers x consumers: %s', (backend) => {
  it('4 producers x 3 consumers, every send and receive form: each block received once, in order per producer', async () => {
    const heap: Heap = await heapOf(backend, { maxBytes: 1 << 28 });
    const ch: Channel = createChannel(heap, { capacity: 32 });
    const producers = 4;
    const count = 3000;
    const ledger = new SharedArrayBuffer(producers * count * 4);
    const shared = new SharedArrayBuffer(SHARED_WORDS * 4);
    const base = { heapHandle: heap.handle, channelHandle: ch.handle, ledger, shared, count, ids: 'own' };
    const sendModes = ['send', 'batch', 'async', 'batch-async'];
    const recvModes = backend === 'pool_arena' ? ['recv', 'async', 'batch'] : ['iterate', 'batch-async', 'try'];
    const ps = sendModes.map((mode, producer) => startAgent(backend, { ...base, role: 'producer', mode, producer }));
    const cs = recvModes.map((mode) => startAgent(backend, { ...base, role: 'consumer', mode, producer: -1 }));
    for (const w of [...ps, ...cs]) heap.watch(w);
    const consumed = Promise.all(cs.map((w) => resultOf<{ received: number }>(w)));
    consumed.catch(() => {});
    await Promise.all(ps.map((w) => resultOf(w)));
    ch.close();
    const got = await consumed;
    const w = new Int32Array(shared);
    expect({ duplicates: w[2], order: w[3], bad: w[4], phantoms: w[5] }).toEqual({ duplicates: 0, order: 0, bad: 0, phantoms: 0 });
    expect(got.reduce((n, r) => n + r.received, 0)).toBe(producers * count);
    const book = new Int32Array(ledger);
    expect(book.every((s) => s === 3)).toBe(true);
    expect(ch.done).toBe(true);
    expect(ch.stats()).toMatchObject({ queued: 0, sent: producers * count, received: producers * count, parkedSenders: 0, parkedReceivers: 0 });
    await Promise.all([...ps, ...cs].map((x) => x.terminate()));
    ch.drop();
  });

  it('a receiver parked in recv() is woken by a send, and a sender parked in send() by a receive', async () => {
    const heap = await heapOf(backend, { maxBytes: 1 << 28 });
    const ch = createChannel(heap, { capacity: 2 });
    const ledger = new SharedArrayBuffer(16);
    const shared = new SharedArrayBuffer(SHARED_WORDS * 4);
    const base = { heapHandle: heap.handle, channelHandle: ch.handle, ledger, shared, ids: 'own', producer: 0 };
    // The consumer: blocking recv(), no timeout, parks on the empty channel.
    const consumer = startAgent(backend, { ...base, role: 'consumer', mode: 'recv', count: 0 });
    await until(() => ch.stats().parkedReceivers === 1);
    const wakes = ch.stats().wakes;
    const p = heap.malloc(64);
    const i = heap.i32;
    [0, 0, 0, 0].forEach((_, k) => (i[(p >>> 2) + k] = 0));
    i[(p >>> 2) + 3] = 0; // check(0, 0, 0) is 0
    Atomics.store(new Int32Array(ledger), 0, 1);
    expect(ch.trySend(p)).toBe(true);
    const w = new Int32Array(shared);
    await until(() => Atomics.load(w, 6) === 1);
    expect(ch.stats().wakes).toBe(wakes + 1);
    expect(Atomics.load(new Int32Array(ledger), 0)).toBe(3);
    ch.close();
    expect(await resultOf<{ received: number }>(consumer)).toEqual({ received: 1 });

    // The producer: blocking send() of 4 blocks into a ring of 2 parks when full.
    const ch2 = createChannel(heap, { capacity: 2 });
    const producer = startAgent(backend, { ...base, channelHandle: ch2.handle, ledger: new SharedArrayBuffer(16), role: 'producer', mode: 'send', count: 4 });
    const sent = resultOf(producer);
    sent.catch(() => {});
    await until(() => ch2.stats().parkedSenders === 1);
    const wakes2 = ch2.stats().wakes;
    const first = ch2.tryRecv();
    expect(first).toBeGreaterThan(0);
    await until(() => ch2.stats().sent >= 3);
    expect(ch2.stats().wakes).toBeGreaterThanOrEqual(wakes2 + 1);
    for (let got = 1; got < 4; ) {
      const q = await ch2.recvAsync(5000);
      expect(q).toBeGreaterThan(0);
      heap.free(q);
      got++;
    }
    await sent;
    heap.free(first);
    await Promise.all([consumer.terminate(), producer.terminate()]);
  });
});
