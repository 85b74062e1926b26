/**
 * The checked build's quarantine of closed scopes' chunks. A chunk a scope gives back is not freed at once:
 * its room (everything after the chunk header) is filled with {@link SCOPE_POISON} and its 32-byte slots in
 * the shared shadow table are marked "released scope" (live and poisoned together, a state no block ever has),
 * and the chunk stays allocated in the heap. So while it waits here no allocation can be handed its memory, and
 * `heap.free` of a pointer from it, by any agent, is refused with `SCOPE_RELEASED`: never taken for a live
 * block. The quarantine is bounded ({@link QUARANTINE_BYTES}, {@link QUARANTINE_CHUNKS}): past that the
 * oldest chunk is checked (its poison must be intact, else `CORRUPTION`: it was written after its scope
 * closed), its slots cleared, and freed to the heap like any block, after which a pointer into it is an
 * ordinary bad pointer. The heap object's `detach` (and `close`) first gives every quarantined chunk back.
 */
import { HeapError, formatAddress, type HeapErrorCode } from '@paddock/platform';
import { SCOPE_HEADER, scopeReleasedMessage } from './scope.js';
import type { Heap } from './types.js';

/** The byte a closed scope's memory is filled with in the checked build. */
export const SCOPE_POISON = 0x5c;
/** Bytes of closed scopes' chunks kept poisoned before the oldest go back to the heap. */
export const QUARANTINE_BYTES = 8 * 1024 * 1024;
/** At most this many chunks wait in the quarantine. */
export const QUARANTINE_CHUNKS = 64;
/** Bytes of each chunk whose poison is checked when it leaves the quarantine. */
const CHECKED_BYTES = 4096;
/** The shadow state of a released scope's memory: both bits, which no block ever has. */
export const SCOPE_RELEASED_STATE = 3;

/** The code the checked build refuses a closed scope's pointer with (only the checked build throws it). */
export const SCOPE_RELEASED: HeapErrorCode = 'SCOPE_RELEASED';

/** The error for `ptr`, a pointer into a closed scope's memory. */
export function scopeReleasedError(ptr: number): HeapError {
  return new HeapError(SCOPE_RELEASED, scopeReleasedMessage(ptr), ptr);
}

/** Sets the shadow state of every 32-byte slot in [from, to) (see instrument.ts). */
export type MarkSlots = (from: number, to: number, state: number) => void;

/** One agent's quarantine of closed scopes' chunks (see above). */
export class ScopeQuarantine {
  /** Chunk addresses and their sizes, oldest first. */
  private readonly chunks: number[] = [];
  private readonly sizes: number[] = [];
  private bytes = 0;

  constructor(private readonly markSlots: MarkSlots) {}

  /** What a closed scope does with each chunk in the checked build: poison it, mark it, keep it (a ChunkRelease). */
  readonly release = (heap: Heap, chunk: number, size: number): void => {
    heap.u8.fill(SCOPE_POISON, chunk + SCOPE_HEADER, chunk + size);
    this.markSlots(chunk + SCOPE_HEADER, chunk + size, SCOPE_RELEASED_STATE);
    this.chunks.push(chunk);
    this.sizes.push(size);
    this.bytes += size;
    while (this.chunks.length > 1 && (this.bytes > QUARANTINE_BYTES || this.chunks.length > QUARANTINE_CHUNKS)) this.evictOldest(heap);
  };

  /** Gives every quarantined chunk back to the heap (before the agent leaves it). */
  flush(heap: Heap): void {
    while (this.chunks.length > 0) this.evictOldest(heap);
  }

  /** Bytes of chunks waiting here. */
  get quarantinedBytes(): number {
    return this.bytes;
  }

  private evictOldest(heap: Heap): void {
    const chunk = this.chunks.shift()!;
    const size = this.sizes.shift()!;
    this.bytes -= size;
    const u8 = heap.u8;
    const end = Math.min(chunk + size, chunk + SCOPE_HEADER + CHECKED_BYTES);
    this.markSlots(chunk + SCOPE_HEADER, chunk + size, 0);
    for (let p = chunk + SCOPE_HEADER; p < end; p++) {
      if (u8[p] !== SCOPE_POISON) {
        heap.free(chunk);
        throw new HeapError('CORRUPTION', `checked: ${formatAddress(p)} was written after its scope closed`, p);
      }
    }
    heap.free(chunk);
  }
}
