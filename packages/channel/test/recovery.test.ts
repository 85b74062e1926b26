// Each branch of the rule for agents that die mid-step (docs/design/channel.md), made exact: a worker opens the
// channel and is terminated; its record and a slot are then written as a step killed at that instruction would
// have left them, and a live agent's next step (or `recover()`) must finish it: deliver a claimed send, free a send
// that never claimed, free a claimed or taken receive, and take the record back.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { HeapError, type Heap } from '@paddock/allocator';
import { H_HEAD, H_TAIL, HEADER_WORDS, R_OWNER, R_POS, R_PTR, R_STATE, RECORD_WORDS, S_RECV, S_SEND_CLAIMED, S_SEND_INTENT, STAMP_BITS, STAMP_MASK } from '../src/layout.js';
import { createChannel, type Channel } from '../src/index.js';
import { BACKENDS, conditionsOf, heapOf, type Backend } from './backends.js';

interface Dead {
  /** Int32 index of the dead agent's record, its claim bits, and the channel's words. */
  rec: number;
  tag: number;
  base: number;
  slots: number;
}

/** Opens `ch` in a worker, terminates it, and returns where its record is. */
async function deadAgent(backend: Backend, heap: Heap, ch: Channel): Promise<Dead> {
  const w = new Worker(new URL('./workers/open-and-hold.mjs', import.meta.url), { workerData: { heap: heap.handle, channel: ch.handle }, execArgv: conditionsOf(backend) });
  await new Promise((resolve, reject) => (w.once('message', resolve), w.once('error', reject)));
  await new Promise((r) => setTimeout(r, 50));
  const i32 = heap.i32;
  const base = ch.handle.ptr >>> 2;
  const own = (ch as unknown as { rec: number }).rec;
  let rec = -1;
  for (let k = 0; k < ch.handle.agents; k++) {
    const r = base + HEADER_WORDS + k * RECORD_WORDS;
    if (r !== own && Atomics.load(i32, r + R_OWNER) > 0) rec = r;
  }
  expect(rec).toBeGreaterThan(0);
  await w.terminate();
  const index = (rec - base - HEADER_WORDS) / RECORD_WORDS;
  return { rec, tag: ((index + 1) << STAMP_BITS) | 0, base, slots: base + HEADER_WORDS + ch.handle.agents * RECORD_WORDS };
}

/** Tries `step` until it gives a non-zero result (the live agent finds the dead claimer gone after a few ms). */
async function until(step: () => number): Promise<number> {
  for (let k = 0; k < 2000; k++) {
    const r = step();
    if (r !== 0) return r;
    await new Promise((r) => setTimeout(r, 2));
  }
  return 0;
}

function isFreed(heap: Heap, p: number): boolean {
  try {
    heap.usableSize(p);
    return false;
  } catch (err) {
    return err instanceof HeapError;
  }
}

describe.each(BACKENDS)('finishing a dead agent\'s step: %s', (backend) => {
  it('a send killed after its claim is delivered, in its place in the order', async () => {
    const heap = await heapOf(backend, { maxBytes: 1 << 28 });
    const ch = createChannel(heap, { capacity: 4, agents: 4 });
    const dead = await deadAgent(backend, heap, ch);
    const [p, q] = [heap.malloc(64), heap.malloc(64)];
    const i32 = heap.i32;
    // It named p at position 0 and claimed slot 0, and stopped before anything else (the tail not moved).
    Atomics.store(i32, dead.rec + R_PTR, p);
    Atomics.store(i32, dead.rec + R_POS, 0);
    Atomics.store(i32, dead.rec + R_STATE, S_SEND_INTENT);
    Atomics.store(i32, dead.slots, dead.tag | 0);
    expect(ch.trySend(q)).toBe(true); // a live sender moves the hint past the claimed slot and takes position 1
    expect(await until(() => ch.tryRecv())).toBe(p);
    expect(ch.tryRecv()).toBe(q);
    expect(ch.stats()).toMatchObject({ recoveredSends: 1, recoveredFrees: 0, recordsCleaned: 1, agents: 1, queued: 0 });
  });

  it('a send killed after its claim and its state store (send-claimed), before publishing, is delivered', async () => {
    const heap = await heapOf(backend, { maxBytes: 1 << 28 });
    const ch = createChannel(heap, { capacity: 4, agents: 4 });
    const dead = await deadAgent(backend, heap, ch);
    const p = heap.malloc(64);
    const i32 = heap.i32;
    Atomics.store(i32, dead.rec + R_PTR, p);
    Atomics.store(i32, dead.rec + R_POS, 0);
    Atomics.store(i32, dead.rec + R_STATE, S_SEND_CLAIMED);
    Atomics.store(i32, dead.slots, dead.tag | 0);
    Atomics.store(i32, dead.base + H_TAIL, 1);
    expect(await until(() => ch.tryRecv())).toBe(p);
    expect(ch.stats()).toMatchObject({ recoveredSends: 1, recoveredFrees: 0 });
  });

  it('a send killed before its claim has its block freed, and nothing enters the ring', async () => {
    const heap = await heapOf(backend, { maxBytes: 1 << 28 });
    const ch = createChannel(heap, { capacity: 4, agents: 4 });
    const dead = await deadAgent(backend, heap, ch);
    const p = heap.malloc(64);
    const i32 = heap.i32;
    Atomics.store(i32, dead.rec + R_PTR, p);
    Atomics.store(i32, dead.rec + R_POS, 0);
    Atomics.store(i32, dead.rec + R_STATE, S_SEND_INTENT);
    let cleaned = 0;
    for (let k = 0; k < 2000 && cleaned === 0; k++) {
      cleaned = ch.recover();
      if (cleaned === 0) await new Promise((r) => setTimeout(r, 2));
    }
    expect(cleaned).toBe(1);
    expect(ch.stats()).toMatchObject({ recoveredSends: 0, recoveredFrees: 1, queued: 0, agents: 1 });
    expect(ch.tryRecv()).toBe(0);
    if (backend !== 'pool_global') expect(isFreed(heap, p)).toBe(true); // the global pool cannot tell a freed block
  });

  it('a send that published and was killed before its record went idle is not freed (it was delivered)', async () => {
    const heap = await heapOf(backend, { maxBytes: 1 << 28 });
    const ch = createChannel(heap, { capacity: 4, agents: 4 });
    const dead = await deadAgent(backend, heap, ch);
    const p = heap.malloc(64);
    expect(ch.trySend(p)).toBe(true); // as if the dead agent had sent it: the slot is published
    const i32 = heap.i32;
    Atomics.store(i32, dead.rec + R_PTR, p);
    Atomics.store(i32, dead.rec + R_POS, 0);
    Atomics.store(i32, dead.rec + R_STATE, S_SEND_CLAIMED);
    for (let k = 0; k < 2000 && ch.recover() === 0; k++) await new Promise((r) => setTimeout(r, 2));
    expect(ch.stats()).toMatchObject({ recoveredFrees: 0, recoveredSends: 0, recordsCleaned: 1 });
    expect(ch.tryRecv()).toBe(p);
    heap.free(p); // still live: not freed by the recovery
  });

  it('a receive killed after its claim has its block freed; the next blocks flow on', async () => {
    const heap = await heapOf(backend, { maxBytes: 1 << 28 });
    const ch = createChannel(heap, { capacity: 4, agents: 4 });
    const dead = await deadAgent(backend, heap, ch);
    const [p, q] = [heap.malloc(64), heap.malloc(64)];
    ch.trySend(p);
    ch.trySend(q);
    const i32 = heap.i32;
    // It claimed slot 0 (full for position 0, stamp 1) and stopped there; the head moved on by it.
    Atomics.store(i32, dead.rec + R_PTR, 0);
    Atomics.store(i32, dead.rec + R_POS, 0);
    Atomics.store(i32, dead.rec + R_STATE, S_RECV);
    Atomics.store(i32, dead.slots, dead.tag | 1);
    Atomics.store(i32, dead.base + H_HEAD, 1);
    expect(ch.tryRecv()).toBe(q);
    // The claimed slot holds up the senders a lap later: filling the ring reaches it, and the step finds it stuck.
    const more = [heap.malloc(64), heap.malloc(64), heap.malloc(64), heap.malloc(64)];
    expect(ch.trySendBatch(more)).toBe(2); // positions 2 and 3; position 4 is the claimed slot 0
    expect(await until(() => (ch.trySend(more[2]!) ? 1 : 0))).toBe(1);
    expect(ch.trySend(more[3]!)).toBe(true);
    expect(ch.stats()).toMatchObject({ recoveredFrees: 1, recordsCleaned: 1, queued: 4 });
    if (backend !== 'pool_global') expect(isFreed(heap, p)).toBe(true);
    expect([ch.tryRecv(), ch.tryRecv(), ch.tryRecv(), ch.tryRecv()]).toEqual(more);
  });

  it('a receive killed after taking its block out, before handing it over, has it freed', async () => {
    const heap = await heapOf(backend, { maxBytes: 1 << 28 });
    const ch = createChannel(heap, { capacity: 4, agents: 4 });
    const dead = await deadAgent(backend, heap, ch);
    const p = heap.malloc(64);
    ch.trySend(p);
    const i32 = heap.i32;
    // It took p out of slot 0 and stamped it consumed (position 0 + capacity), its record still naming p.
    Atomics.store(i32, dead.slots + 1, p);
    Atomics.store(i32, dead.slots, 4 & STAMP_MASK);
    Atomics.store(i32, dead.base + H_HEAD, 1);
    Atomics.store(i32, dead.rec + R_PTR, p);
    Atomics.store(i32, dead.rec + R_POS, 0);
    Atomics.store(i32, dead.rec + R_STATE, S_RECV);
    for (let k = 0; k < 2000 && ch.recover() === 0; k++) await new Promise((r) => setTimeout(r, 2));
    expect(ch.stats()).toMatchObject({ recoveredFrees: 1, recordsCleaned: 1, agents: 1 });
    if (backend !== 'pool_global') expect(isFreed(heap, p)).toBe(true);
    expect(ch.tryRecv()).toBe(0);
  });

  it('a cleaner killed mid-clean is itself taken for gone, and the record is cleaned once', async () => {
    const heap = await heapOf(backend, { maxBytes: 1 << 28 });
    const ch = createChannel(heap, { capacity: 4, agents: 4 });
    const dead = await deadAgent(backend, heap, ch);
    const cleaner = await deadAgent(backend, heap, ch);
    const p = heap.malloc(64);
    const i32 = heap.i32;
    // The first dead agent was mid-send of p (not claimed); the second took its record to clean it, and died.
    Atomics.store(i32, dead.rec + R_PTR, p);
    Atomics.store(i32, dead.rec + R_POS, 0);
    Atomics.store(i32, dead.rec + R_STATE, S_SEND_INTENT);
    Atomics.store(i32, dead.rec + R_OWNER, -Atomics.load(i32, cleaner.rec + R_OWNER));
    for (let k = 0; k < 2000 && ch.stats().agents > 1; k++) {
      ch.recover();
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(ch.stats()).toMatchObject({ recoveredFrees: 1, recordsCleaned: 2, agents: 1 });
  });
});
