/**
 * Making a channel's block and checking a handle before a channel object is built on it.
 */
import { HeapError, type Heap } from '@paddock/allocator';
import {
  DEFAULT_CAPACITY,
  DEFAULT_RECORDS,
  H_CAPACITY,
  H_ID,
  H_MAGIC,
  H_RECORDS,
  HEADER_WORDS,
  LAYOUT_VERSION,
  MAGIC,
  MAGIC_DROPPED,
  MAX_CAPACITY,
  MAX_RECORDS,
  MIN_CAPACITY,
  RECORD_WORDS,
  SLOT_WORDS,
  channelBytes,
} from './layout.js';

/** Options of `createChannel`. */
export interface ChannelOptions {
  /** Slots in the ring (a power of two, 2..65536; default 256). A full channel makes senders wait. */
  capacity?: number;
  /**
   * Agent records (1..4095; default 64): how many channel objects (one per `createChannel`/`openChannel` call) may
   * hold the channel open at once. A record of an agent that died or left is taken back when one is needed.
   */
  agents?: number;
}

/** What another agent needs to open the channel: plain numbers and a string, structured-cloneable. */
export interface ChannelHandle {
  readonly kind: 'paddock-channel';
  readonly version: number;
  /** The channel's block in the heap. */
  readonly ptr: number;
  /** The channel's random id, also in its block: a handle from another heap finds another number there. */
  readonly id: number;
  readonly capacity: number;
  readonly agents: number;
}

function describe(v: unknown): string {
  return typeof v === 'number' ? String(v) : typeof v === 'string' ? JSON.stringify(v) : v === null ? 'null' : typeof v;
}

/**
 * Checks `options` and allocates and lays out a channel block in `heap`. Returns its handle.
 * @throws RangeError for a capacity or an agent count out of range; what `heap.malloc` throws.
 */
export function makeChannelBlock(heap: Heap, options: ChannelOptions): ChannelHandle {
  if (options === null || typeof options !== 'object') throw new TypeError(`channel options must be an object, got ${describe(options)}`);
  const capacity = options.capacity ?? DEFAULT_CAPACITY;
  if (typeof capacity !== 'number' || !Number.isInteger(capacity) || capacity < MIN_CAPACITY || capacity > MAX_CAPACITY || (capacity & (capacity - 1)) !== 0) {
    throw new RangeError(`capacity must be a power of two from ${MIN_CAPACITY} to ${MAX_CAPACITY}, got ${describe(capacity)}`);
  }
  const agents = options.agents ?? DEFAULT_RECORDS;
  if (typeof agents !== 'number' || !Number.isInteger(agents) || agents < 1 || agents > MAX_RECORDS) {
    throw new RangeError(`agents must be an integer from 1 to ${MAX_RECORDS}, got ${describe(agents)}`);
  }
  const bytes = channelBytes(capacity, agents);
  const ptr = heap.malloc(bytes);
  const i32 = heap.i32;
  const base = ptr >>> 2;
  i32.fill(0, base, base + (bytes >>> 2));
  const slots = base + HEADER_WORDS + agents * RECORD_WORDS;
  for (let k = 0; k < capacity; k++) i32[slots + k * SLOT_WORDS] = k; // ready for the send at position k
  const id = crypto.getRandomValues(new Int32Array(1))[0]! | 1;
  i32[base + H_ID] = id;
  i32[base + H_CAPACITY] = capacity;
  i32[base + H_RECORDS] = agents;
  Atomics.store(i32, base + H_MAGIC, MAGIC);
  return { kind: 'paddock-channel', version: LAYOUT_VERSION, ptr, id, capacity, agents };
}

/**
 * Checks that `handle` names a live channel of `heap`.
 * @throws HeapError BAD_HANDLE for anything else (a handle of another heap finds another id, or no block, at its
 * address); CHANNEL_DROPPED for a channel that was dropped and whose block was not reused yet.
 */
export function checkHandle(heap: Heap, handle: ChannelHandle): void {
  const h = handle as Partial<ChannelHandle> | null;
  if (h === null || typeof h !== 'object' || h.kind !== 'paddock-channel') throw new HeapError('BAD_HANDLE', 'not a Paddock channel handle');
  if (h.version !== LAYOUT_VERSION) throw new HeapError('BAD_HANDLE', `channel handle version ${describe(h.version)}, this build reads ${LAYOUT_VERSION}`);
  const { ptr, id, capacity, agents } = h;
  if (typeof ptr !== 'number' || (ptr >>> 0) !== ptr || ptr === 0 || (ptr & 3) !== 0 || typeof id !== 'number' || typeof capacity !== 'number' || typeof agents !== 'number') {
    throw new HeapError('BAD_HANDLE', 'the channel handle is malformed');
  }
  let usable: number;
  try {
    usable = heap.usableSize(ptr);
  } catch (err) {
    if (err instanceof HeapError && err.code === 'DETACHED') throw err;
    throw new HeapError('BAD_HANDLE', `no channel of this heap at ${ptr} (not a live block here: a handle from another heap, or a channel dropped)`, ptr);
  }
  if (usable < channelBytes(MIN_CAPACITY, 1)) throw new HeapError('BAD_HANDLE', `no channel of this heap at ${ptr} (the block is too small)`, ptr);
  const i32 = heap.i32;
  const base = ptr >>> 2;
  const magic = Atomics.load(i32, base + H_MAGIC);
  if (magic === MAGIC_DROPPED && i32[base + H_ID] === id) throw new HeapError('CHANNEL_DROPPED', 'this channel has been dropped');
  if (magic !== MAGIC || i32[base + H_ID] !== id) {
    throw new HeapError('BAD_HANDLE', `no channel with this handle's id at ${ptr} in this heap (a handle from another heap?)`, ptr);
  }
  if (i32[base + H_CAPACITY] !== capacity || i32[base + H_RECORDS] !== agents || usable < channelBytes(capacity, agents)) {
    throw new HeapError('BAD_HANDLE', `the channel at ${ptr} does not match the handle's capacity or agents`, ptr);
  }
}
