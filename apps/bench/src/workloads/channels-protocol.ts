/**
 * What the `channels` group's main thread and its agents share: the lanes (a system, a shape, a mode), the
 * control words, the jobs posted to the agents and what they answer, and the slice of `@paddock/channel`
 * the agents call (the bench loads that package at run time from its build, as it loads the allocator).
 */
import type { HeapHandle } from '@paddock/allocator';

/**
 * How blocks go from producers to consumers in a lane:
 * - `channel`: a Paddock channel over the heap; producers malloc, write, `send` / `sendBatch`; consumers
 *   `recv` / `recvBatch`, read, free.
 * - `post-offsets`: the same blocks of the same heap, their offsets posted on a MessagePort (one number per
 *   message, or a Uint32Array of `batch` offsets).
 * - `post-clone`: the payload itself, an Int32Array of the message's size, structured-cloned by postMessage.
 * - `post-transfer`: the payload in an ArrayBuffer of the message's size, transferred.
 * - `ringbuf`: ringbuf.js (SPSC): the bytes copied into its ring and out of it.
 * - `native`: the C limit (`native/channels.c`): a bounded MPMC queue of pointers, pthreads, mimalloc.
 */
export type LaneKind = 'channel' | 'post-offsets' | 'post-clone' | 'post-transfer' | 'ringbuf' | 'native';

export interface Lane {
  /** As the table names it. */
  readonly name: string;
  readonly kind: LaneKind;
  readonly producers: number;
  readonly consumers: number;
  /** Messages per send (1: one at a time). */
  readonly batch: number;
}

/** Control words (Int32) of a run. */
export const C_STOP = 0; // 1: producers stop
export const C_LEFT = 1; // producers still producing
export const C_READY = 2; // agents ready
export const C_GO = 3; // 1: start
export const C_RECEIVED = 4; // post-*: messages the consumer has taken (the producer's window)
export const C_WAITING = 5; // post-*: 1 while the producer waits for room in its window
export const C_ARMED = 6; // wake-up: 1 once the main thread is about to wait
export const C_WORDS = 8;
/** Float64 slot of the wake-up runs: the sender's clock (µs) just before it sends. */
export const WAKE_SENT_AT = 0;

/** Messages a postMessage producer may have in flight (the channel's own bound is its capacity). */
export const POST_WINDOW = 4096;
/** Slots of the channel's ring and of the C queue; ringbuf.js gets room for as many messages. */
export const CAPACITY = 256;

/** One agent's part of one run. */
export interface ChannelJob {
  readonly kind: Exclude<LaneKind, 'native'> | 'wake-channel' | 'wake-port' | 'echo-port';
  readonly role: 'producer' | 'consumer';
  /** Its index among the producers (the tag's top byte) or the consumers. */
  readonly index: number;
  readonly size: number;
  readonly batch: number;
  readonly control: SharedArrayBuffer;
  /** Float64 slots (wake-up runs). */
  readonly clock: SharedArrayBuffer;
  /** channel, post-offsets, wake-channel: the heap. */
  readonly heap: HeapHandle | null;
  /** channel, wake-channel: the channel's handle. */
  readonly channel: unknown;
  /** ringbuf: its storage. */
  readonly ring: SharedArrayBuffer | null;
  /** wake-up runs: how many messages. */
  readonly count: number;
}

/** What an agent answers when its part of a run ends. */
export interface ChannelJobResult {
  readonly ok: boolean;
  readonly error?: string;
  /** Messages received (consumers) or sent (producers). */
  readonly count: number;
  /** Sum of the tags, mod 2^32. */
  readonly sum: number;
  /** Messages whose words disagree with their tag. */
  readonly bad: number;
  /** `clockUs()` at its end. */
  readonly end: number;
}

/** The slice of `@paddock/channel` the bench calls. */
export interface BenchChannel {
  readonly handle: unknown;
  send(ptr: number): void;
  sendBatch(ptrs: ArrayLike<number>, count?: number): void;
  recv(timeoutMs?: number): number;
  recvBatch(out: Uint32Array, max?: number, timeoutMs?: number): number;
  recvAsync(timeoutMs?: number): Promise<number>;
  close(): void;
  drop(): void;
}
export interface ChannelModule {
  createChannel(heap: unknown, options?: { capacity?: number }): BenchChannel;
  openChannel(heap: unknown, handle: unknown): BenchChannel;
}

/** Worker data of every agent: where the allocator (pool_arena) and the channel package were built. */
export interface ChannelWorkerData {
  readonly paddockUrl: string;
  /** null: `@paddock/channel` is not built (the other lanes still run). */
  readonly channelUrl: string | null;
}

/** A clock shared by the threads of this process, in µs (process.hrtime: monotonic, process-wide). */
export function clockUs(): number {
  const t = process.hrtime();
  return t[0] * 1e6 + t[1] / 1e3;
}
