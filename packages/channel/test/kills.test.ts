// Agents that die in the middle of sends and receives: producers and consumers (real workers) are terminated at
// random moments, round after round, and replaced, while the others go on. The survivors must finish (the channel is
// never wedged), no block is received twice or out of order per producer, and every block that was not received is
// accounted for by the rule of docs/design/channel.md: at most one per agent killed (the block it was sending or had
// just received), and the channel's own recoveries (deliveries and frees of dead agents' steps) stay within that.
import type { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../tools/test-utils/prng.mjs';
import { createChannel } from '../src/index.js';
import { BACKENDS, heapOf, type Backend } from './backends.js';
import { SHARED_WORDS, resultOf, startAgent } from './agents.js';

const ROUNDS: Record<Backend, number> = { pool_arena: 40, pool_classic: 15, pool_global: 15 };

describe.each(BACKENDS)('agents killed mid-send and mid-receive: %s', (backend) => {
  it(`${ROUNDS[backend]} rounds of worker.terminate() on producers and consumers; the survivors finish and every block is accounted for`, async () => {
    const seed = (Date.now() ^ 0x5bd1e995) >>> 0;
    const random = mulberry32(seed);
    const heap = await heapOf(backend, { maxBytes: 1 << 28 });
    // A small ring (producers block on it) and few agent records (those of the dead must be taken back).
    const ch = createChannel(heap, { capacity: 8, agents: 8 });
    const ledger = new SharedArrayBuffer(4 << 20);
    const shared = new SharedArrayBuffer(SHARED_WORDS * 4);
    const w = new Int32Array(shared);
    const base = { heapHandle: heap.handle, channelHandle: ch.handle, ledger, shared, count: 0, ids: 'shared' };
    let incarnation = 0;
    const start = (role: 'producer' | 'consumer'): Worker => {
      const mode = role === 'producer' ? (incarnation % 2 === 0 ? 'send' : 'async') : incarnation % 2 === 0 ? 'recv' : 'async';
      const worker = startAgent(backend, { ...base, role, mode, producer: incarnation++ });
      heap.watch(worker);
      worker.on('error', () => {});
      return worker;
    };
    const producers = [start('producer'), start('producer')];
    const consumers = [start('consumer'), start('consumer')];
    let producersKilled = 0;
    let consumersKilled = 0;
    for (let round = 0; round < ROUNDS[backend]; round++) {
      // Mid-traffic: after at least 20 more blocks went through since the last kill (a wedged channel never gets
      // there, and the test times out), and a random few ms more.
      const target = Atomics.load(w, 6) + 20;
      while (Atomics.load(w, 6) < target) await new Promise((r) => setTimeout(r, 1));
      await new Promise((r) => setTimeout(r, random() % 15));
      const side = random() % 2 === 0 ? producers : consumers;
      const k = random() % side.length;
      await side[k]!.terminate();
      if (side === producers) producersKilled++;
      else consumersKilled++;
      side[k] = start(side === producers ? 'producer' : 'consumer');
    }
    Atomics.store(w, 1, 1); // stop: the producers finish their current send and report
    await Promise.all(producers.map((p) => resultOf(p)));
    ch.close();
    await Promise.all(consumers.map((c) => resultOf(c)));
    await Promise.all([...producers, ...consumers].map((x) => x.terminate()));

    const found = { seed, duplicates: w[2], order: w[3], bad: w[4], phantoms: w[5] };
    expect(found).toEqual({ seed, duplicates: 0, order: 0, bad: 0, phantoms: 0 });
    const book = new Int32Array(ledger);
    const made = Atomics.load(w, 0);
    let received = 0;
    let inSend = 0; // its producer was in the send (killed there, or its consumer killed before it could mark it)
    let sentNotReceived = 0;
    for (let id = 0; id < Math.min(made, book.length); id++) {
      const s = book[id]!;
      if (s === 3) received++;
      else if (s === 1) inSend++;
      else if (s === 2) sentNotReceived++;
    }
    const kills = producersKilled + consumersKilled;
    // A consumer killed between its ledger mark and its count leaves one more marked than counted.
    const counted = Atomics.load(w, 6);
    expect(received - counted, `seed ${seed}`).toBeGreaterThanOrEqual(0);
    expect(received - counted, `seed ${seed}`).toBeLessThanOrEqual(consumersKilled);
    expect(received).toBeGreaterThan(0);
    expect(inSend + sentNotReceived, `seed ${seed}: blocks not received, ${kills} agents killed`).toBeLessThanOrEqual(kills);
    // What is left of the dead: their records are cleaned, their parked counts taken off, nothing is queued.
    // (A thread just terminated may still answer a ping for a moment: its record is cleaned on a later look.)
    for (let look = 0; look < 400 && (ch.recover(), ch.stats().agents > 1); look++) await new Promise((r) => setTimeout(r, 10));
    const stats = ch.stats();
    if (process.env.CHANNEL_TEST_VERBOSE) console.log(backend, { kills, inSend, sentNotReceived, received }, stats);
    const seen = `seed ${seed}, ${kills} killed: ${JSON.stringify(stats)}`;
    expect({ queued: stats.queued, parkedSenders: stats.parkedSenders, parkedReceivers: stats.parkedReceivers, agents: stats.agents }, seen).toEqual({
      queued: 0,
      parkedSenders: 0,
      parkedReceivers: 0,
      agents: 1,
    });
    expect(stats.recoveredFrees + stats.recoveredSends, seen).toBeLessThanOrEqual(kills);
    expect(ch.done).toBe(true);
    ch.drop();
  });
});
