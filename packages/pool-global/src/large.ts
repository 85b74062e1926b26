/**
 * Large blocks (above 1 MiB): each its own reservation, 1 MiB aligned, committed on malloc and decommitted
 * and released on free. A 64-byte header in front of the pointer holds the committed bytes and a live mark;
 * ENTRY of the first MiB says LARGE while the block is live, and a free claims the block by swapping that
 * entry's kind to 0 with one CAS, so two agents freeing it at once cannot both release it.
 */
import { HeapError, formatBytes, type AddressSpace } from '@paddock/platform';
import { H_ENTRY, LARGE, MiB, PAGE, clearedEntry, entryKind, publishedEntry } from './layout.js';
import { doubleFree, noBlock } from './errors.js';

/** Bytes of the header in front of a large block's pointer. */
export const LARGE_HEADER = 64;
const L_BYTES = 0;
const L_MARK = 1;

function liveMark(mapping: number): number {
  return (mapping ^ 0x4c617267) | 0;
}

/**
 * Maps a large block for `size` bytes and returns its pointer.
 * @throws HeapError `OUT_OF_MEMORY` when the space has no room, a size whose mapping (header and page rounding
 * included) is larger than the whole space included.
 */
export function mapLarge(space: AddressSpace, hdr: Int32Array, size: number): number {
  const bytes = Math.ceil((size + LARGE_HEADER) / PAGE) * PAGE;
  if (bytes > space.maxBytes) {
    throw new HeapError(
      'OUT_OF_MEMORY',
      `out of memory: a large block of ${formatBytes(size)} takes a mapping of ${formatBytes(bytes)}, more than the heap's maxBytes ${formatBytes(space.maxBytes)}`,
    );
  }
  const mapping = space.reserve(bytes, MiB);
  try {
    space.commit(mapping, bytes);
  } catch (err) {
    space.release(mapping, bytes); // a buffer that cannot grow (OUT_OF_MEMORY): the range is not lost
    throw err;
  }
  const i32 = space.i32;
  i32[(mapping >>> 2) + L_BYTES] = bytes;
  i32[(mapping >>> 2) + L_MARK] = liveMark(mapping);
  const at = H_ENTRY + (mapping >>> 20);
  Atomics.store(hdr, at, publishedEntry(Atomics.load(hdr, at), LARGE));
  return mapping + LARGE_HEADER;
}

/** The usable bytes of the live large block at `ptr` (its first MiB's entry says LARGE). */
export function largeUsable(space: AddressSpace, ptr: number, op: string): number {
  const mapping = ptr - LARGE_HEADER;
  if (mapping % MiB !== 0) throw noBlock(ptr, op, `inside the large block at ${mapping - (mapping % MiB) + LARGE_HEADER}, not its start`);
  space.covers(ptr);
  const i32 = space.i32;
  if (i32[(mapping >>> 2) + L_MARK] !== liveMark(mapping)) throw noBlock(ptr, op, 'the large block header there is damaged');
  return i32[(mapping >>> 2) + L_BYTES]! - LARGE_HEADER;
}

/** Frees the live large block at `ptr`: claims its entry, then returns its pages and its addresses. */
export function unmapLarge(space: AddressSpace, hdr: Int32Array, ptr: number): void {
  const usable = largeUsable(space, ptr, 'free');
  const mapping = ptr - LARGE_HEADER;
  const at = H_ENTRY + (mapping >>> 20);
  const e = Atomics.load(hdr, at);
  if (entryKind(e) !== LARGE || Atomics.compareExchange(hdr, at, e, clearedEntry(e)) !== e) throw doubleFree(ptr, 'large block');
  space.i32[(mapping >>> 2) + L_MARK] = 0;
  space.release(mapping, usable + LARGE_HEADER);
}
