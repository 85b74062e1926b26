/**
 * The inspector's scenario agent, the same in a module Web Worker (the in-page source) and in a Node worker
 * thread (the demo workload of `pnpm inspect`): producers allocate messages of mixed sizes in the shared heap
 * (each stamped with a serial and its size) and send them through one channel in the same heap
 * (`@paddock/channel`: the blocks change hands, no address is posted) to the consumer; the consumer holds a
 * window of them, freeing the oldest (blocks another agent allocated). Commands pause the producers, send every agent idle
 * (the consumer frees all it holds and what still arrives, the idle tick hands the memory back) and start them
 * again. Only the control link differs between the two hosts: each passes its own {@link Link}.
 */
import type { Heap, HeapHandle } from '@paddock/allocator';
import { openChannel, type Channel, type ChannelHandle } from '@paddock/channel';

/** A message port as both hosts have it: post, and hear what arrives. */
export interface Link {
  post(message: unknown): void;
  listen(on: (message: unknown) => void): void;
}

/** What the page or the workload tells an agent. */
export type Command = 'start' | 'pause' | 'idle';

/** What an agent reports to whoever started it. */
export type Report = { kind: 'attached'; agentId: number };

/** The consumer holds at most this many bytes of messages (it frees the oldest beyond it). */
export const CONSUMER_WINDOW = 24 << 20;
/** A producer allocates about this many bytes per step, one step every {@link STEP_MS}. */
export const STEP_BYTES = 384 << 10;
export const STEP_MS = 20;
/** Slots of the scenario's channel: a producer's step waits (asynchronously) while it is full. */
export const SCENARIO_CAPACITY = 1024;

/** Message sizes: mostly small objects, some pages, a few large blocks. */
export function messageSize(seed: number): number {
  const r = seed % 1000;
  if (r < 600) return 16 + (seed % 1009);
  if (r < 900) return 1024 + (seed % (15 << 10));
  if (r < 990) return (16 << 10) + (seed % (112 << 10));
  return (256 << 10) + (seed % (1280 << 10));
}

const nextSeed = (seed: number) => (Math.imul(seed, 1664525) + 1013904223) >>> 0;

/** Runs a producer: a step of messages every STEP_MS while started, each batch sent through the channel. */
export function runProducer(heap: Heap, channel: Channel, id: number, control: Link): void {
  let seed = (0x9e3779b9 ^ Math.imul(id, 0x85ebca6b)) >>> 0;
  let serial = id * 1_000_000;
  let running = false;
  let stepping = false;
  const step = async () => {
    stepping = true;
    const batch: number[] = [];
    for (let made = 0; made < STEP_BYTES; ) {
      seed = nextSeed(seed);
      const size = messageSize(seed);
      const p = heap.malloc(size);
      heap.u32[p >>> 2] = ++serial;
      heap.u32[(p >>> 2) + 1] = size;
      batch.push(p);
      made += size;
    }
    await channel.sendBatchAsync(batch); // waits (without blocking the worker) while the channel is full
    stepping = false;
    if (running) setTimeout(step, STEP_MS);
    else heap.flush();
  };
  control.listen((c) => {
    if (c === 'start' && !running) {
      running = true;
      if (!stepping) void step();
    } else if (c === 'pause' || c === 'idle') {
      running = false;
      heap.flush();
    }
  });
  heap.startIdle();
  control.post(attached(heap));
}

/** Runs the consumer: holds a window of the messages that arrive through the channel, frees the oldest. */
export function runConsumer(heap: Heap, channel: Channel, control: Link): void {
  const held: number[] = [];
  let first = 0;
  let bytes = 0;
  let idle = false;
  const release = (p: number) => {
    bytes -= heap.u32[(p >>> 2) + 1]!;
    heap.free(p);
  };
  const receive = async () => {
    const got = new Uint32Array(256);
    for (;;) {
      const n = await channel.recvBatchAsync(got, got.length); // the end (0) never comes: the scenario never closes it
      if (n <= 0) return;
      for (let i = 0; i < n; i++) {
        const p = got[i]!;
        held.push(p);
        bytes += heap.u32[(p >>> 2) + 1]!;
      }
      while ((idle || bytes > CONSUMER_WINDOW) && first < held.length) release(held[first++]!);
      if (first > 4096) held.splice(0, first), (first = 0);
      heap.flush();
    }
  };
  control.listen((c) => {
    if (c === 'start') idle = false;
    if (c !== 'idle') return;
    idle = true; // what is still on its way is freed as it arrives
    while (first < held.length) release(held[first++]!);
    held.length = 0;
    first = 0;
    heap.flush();
  });
  heap.startIdle();
  control.post(attached(heap));
  void receive();
}

/** The agent's id (its owner slot comes with its first allocation: the snapshots tell it). */
function attached(heap: Heap): Report {
  return { kind: 'attached', agentId: heap.agentId };
}

/** What starts an agent: the heap's handle and the channel's (posted once), its role and id. */
export interface Setup {
  handle: HeapHandle;
  channel: ChannelHandle;
  role: 'producer' | 'consumer';
  id: number;
}

/** Starts the agent `setup` describes on a heap attached here; `control` is the link to whoever started it. */
export function startAgent(setup: Setup, control: Link, attach: (handle: HeapHandle) => Heap): void {
  const heap = attach(setup.handle);
  const channel = openChannel(heap, setup.channel);
  if (setup.role === 'producer') runProducer(heap, channel, setup.id, control);
  else runConsumer(heap, channel, control);
}
