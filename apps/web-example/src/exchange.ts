// What the example page and its workers say to each other, and what a message in the heap looks like: word 0
// its sequence number, word 1 its size, every other byte the low byte of the sequence number. The consumer
// checks a message before it holds it, so a block handed over corrupt or half-written shows up as `intact: false`.
import type { Heap, HeapHandle } from '@paddock/allocator';
import type { ChannelHandle } from '@paddock/channel';

/** The page's first message to a worker: the heap's handle and the channel's, posted once. */
export type Job =
  | { role: 'producer'; handle: HeapHandle; channel: ChannelHandle; id: number; bytes: number }
  | { role: 'consumer'; handle: HeapHandle; channel: ChannelHandle };

/** The page's later orders: free what you hold (consumer), start the idle tick, leave the heap and end. */
export type Order = 'free' | 'idle' | 'close';

/** What a worker tells the page. */
export type Report =
  | { kind: 'attached'; backend: string; agentId: number }
  | { kind: 'produced'; messages: number; bytes: number }
  | { kind: 'holding'; messages: number; bytes: number; intact: boolean; viaChannel: number }
  | { kind: 'freed'; messages: number }
  | { kind: 'closed' };

/** Sizes of messages: 2 KiB to 32 KiB, drawn from a small generator so a run is the same every time. */
export function messageSize(seed: number): number {
  return 2048 + (seed % (30 * 1024));
}

/** Next state of the generator (a 32-bit LCG). */
export function nextSeed(seed: number): number {
  return (Math.imul(seed, 1664525) + 1013904223) >>> 0;
}

/** Writes message `seq` of `size` bytes at `p`. */
export function writeMessage(heap: Heap, p: number, seq: number, size: number): void {
  heap.u32[p >>> 2] = seq;
  heap.u32[(p >>> 2) + 1] = size;
  heap.u8.fill(seq & 255, p + 8, p + size);
}

/** Whether the message at `p` is as its writer left it (its first, middle and last fill byte). Returns its size, or -1. */
export function checkMessage(heap: Heap, p: number): number {
  const seq = heap.u32[p >>> 2]!;
  const size = heap.u32[(p >>> 2) + 1]!;
  const u8 = heap.u8;
  const fill = seq & 255;
  if (size < 8 || u8[p + 8] !== fill || u8[p + (size >>> 1)] !== fill || u8[p + size - 1] !== fill) return -1;
  return size;
}
