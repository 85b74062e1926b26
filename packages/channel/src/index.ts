/**
 * @packageDocumentation
 * `@paddock/channel`: channels in a Paddock heap, the layer above the allocator. A block is filled by one agent and
 * handed to another through a channel: a bounded ring whose state lives in a block of the heap, so any agent opens it
 * from a structured-cloneable handle. Many producers and many consumers at once; every block sent is received
 * exactly once, in order per producer; senders wait while it is full and receivers while it is empty, blocking
 * where the agent may block and with `Atomics.waitAsync` everywhere. An agent that dies at any instruction of a send
 * or a receive never wedges the channel: a live agent finishes or undoes its step from the record it kept in the
 * channel (docs/design/channel.md).
 *
 * ```ts
 * import { createHeap } from '@paddock/allocator';
 * import { createChannel, openChannel } from '@paddock/channel';
 * const heap = createHeap({ maxBytes: 1 << 28 });
 * const ch = createChannel(heap, { capacity: 64 });   // post ch.handle to a worker: openChannel(itsHeap, handle)
 * const p = heap.malloc(64);
 * ch.send(p);                // the receiver owns the block now
 * const q = ch.recv();       // === p
 * heap.free(q);
 * ```
 */
import type { Heap } from '@paddock/allocator';
import { Channel } from './channel.js';
import { checkHandle, makeChannelBlock, type ChannelHandle, type ChannelOptions } from './open.js';

/**
 * Makes a channel in `heap` (its state in one block allocated there) and opens it for this agent.
 * @throws RangeError for options out of range; what `heap.malloc` throws.
 */
export function createChannel(heap: Heap, options: ChannelOptions = {}): Channel {
  return new Channel(heap, makeChannelBlock(heap, options));
}

/**
 * Opens in this agent the channel another agent made, from its handle (`heap` is this agent's heap object of the
 * same heap).
 * @throws HeapError BAD_HANDLE for a handle of another heap or anything that is not a channel handle;
 * CHANNEL_DROPPED for a channel that was dropped; CHANNEL_AGENTS when every agent record is held by a live agent.
 */
export function openChannel(heap: Heap, handle: ChannelHandle): Channel {
  checkHandle(heap, handle);
  return new Channel(heap, handle);
}

export { Channel, TIMED_OUT, type ChannelStats } from './channel.js';
export { ChannelAgent } from './agent.js';
export type { ChannelHandle, ChannelOptions } from './open.js';
export { DEFAULT_CAPACITY, DEFAULT_RECORDS as DEFAULT_AGENTS, MAX_CAPACITY, MAX_RECORDS as MAX_AGENTS, MIN_CAPACITY } from './layout.js';
