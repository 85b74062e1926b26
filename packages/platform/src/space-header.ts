/**
 * The address space's header: the shared record every agent reads to find what is reserved and committed.
 *
 * It sits at `base` (0 for a buffer Paddock created; the end of the caller's data for a wasm memory that
 * already holds some). Every granule up to the end of the header is marked reserved, so address 0 is never
 * handed out. Int32 words:
 *
 *   0 magic 'PDCK' (written last)   1 version   2 maxBytes in granules   3 backing kind   4 header bytes
 *   5 base in granules   6 the buffer's length in pages as agents have published it   7 reserved granules
 *   8 agents opened   9 wasm grow target (pages)   16..23 root words
 *   64... the reservation bitmap (one bit per 64 KiB granule of [0, maxBytes)),
 *   then the commit bitmap (one bit per 4 KiB page of [0, maxBytes)).
 */
import { WASM_PAGE, type BackingKind } from './backing.js';
import { setBitRange } from './bitmap.js';

/** Reservation granularity: every reserved range starts and ends on a 64 KiB boundary. */
export const GRANULE = WASM_PAGE;
/** Commit granularity, the OS page. */
export const PAGE_SIZE = 4096;
/** Number of root words upper layers may use to find their own structures. */
export const ROOT_COUNT = 8;

export const SPACE_MAGIC = 0x4b434450; // 'PDCK'
export const SPACE_VERSION = 1;

export const H_MAGIC = 0;
const H_VERSION = 1;
const H_GRANULES = 2;
const H_BACKING = 3;
export const H_HEADER_BYTES = 4;
const H_BASE_GRANULE = 5;
/** The buffer's length in pages as the agents that grew or measured it have published it (never lowered). */
export const H_BUFFER_PAGES = 6;
export const H_RESERVED_GRANULES = 7;
export const H_AGENTS = 8;
export const H_GROW_PAGES = 9;
export const H_ROOTS = 16;
/** The Int32 index, from the space's base, of root word 0 (what reads a root through another view of the buffer). */
export const ROOT_WORD = H_ROOTS;
/** First word of the reservation bitmap. */
export const RESERVE_BITMAP = 64;
/** Header words an opener reads before it knows the header's size. */
const FIXED_WORDS = 64;

const BACKING_CODES: Record<BackingKind, number> = { growable: 1, wasm: 2, fixed: 3 };

/**
 * First word of the commit bitmap, which follows the reservation bitmap on a word of its own: when maxBytes is not
 * a multiple of 2 MiB (32 granules), the reservation bitmap's last word is only partly used, and the commit bitmap
 * starts after it (it once started at a fractional word, which the bitmaps' reads truncated onto that last word).
 */
export function commitBitmapAt(maxBytes: number): number {
  return RESERVE_BITMAP + Math.ceil(maxBytes / GRANULE / 32);
}

/** Header bytes for a space of `maxBytes`: fixed words plus both bitmaps, rounded up to a granule. */
export function headerBytesFor(maxBytes: number): number {
  const words = commitBitmapAt(maxBytes) + maxBytes / PAGE_SIZE / 32;
  return Math.ceil((words * 4) / GRANULE) * GRANULE;
}

/**
 * Writes a new space's header into `hdr` (a view of its `headerBytesFor(maxBytes)` bytes at `base`): the
 * geometry, everything below the header's end reserved, the header's own pages committed, the magic last.
 */
export function writeSpaceHeader(hdr: Int32Array, kind: BackingKind, base: number, maxBytes: number, growPages: number): void {
  const headerBytes = hdr.byteLength;
  hdr.fill(0);
  hdr[H_VERSION] = SPACE_VERSION;
  hdr[H_GRANULES] = maxBytes / GRANULE;
  hdr[H_BACKING] = BACKING_CODES[kind];
  hdr[H_HEADER_BYTES] = headerBytes;
  hdr[H_BASE_GRANULE] = base / GRANULE;
  hdr[H_GROW_PAGES] = growPages;
  // Everything below the end of the header is taken: foreign data, the header, and address 0.
  const taken = (base + headerBytes) / GRANULE;
  setBitRange(hdr, RESERVE_BITMAP, 0, taken);
  hdr[H_RESERVED_GRANULES] = taken;
  const firstPage = base / PAGE_SIZE;
  setBitRange(hdr, commitBitmapAt(maxBytes), firstPage, (base + headerBytes) / PAGE_SIZE - firstPage);
  hdr[H_BUFFER_PAGES] = 0;
  Atomics.store(hdr, H_MAGIC, SPACE_MAGIC);
}

/**
 * Checks the header an opener finds at `base` of `buffer` (`length` bytes long) against the handle's
 * geometry. Returns what is wrong, or null when it is the header of that space.
 */
export function spaceHeaderMismatch(buffer: SharedArrayBuffer, length: number, kind: BackingKind, base: number, maxBytes: number): string | null {
  if (length < base + FIXED_WORDS * 4) return 'the buffer is shorter than its header';
  const probe = new Int32Array(buffer, base, FIXED_WORDS);
  if (Atomics.load(probe, H_MAGIC) !== SPACE_MAGIC) return 'no Paddock header at its base';
  if (probe[H_GRANULES] !== maxBytes / GRANULE || probe[H_BACKING] !== BACKING_CODES[kind] || probe[H_BASE_GRANULE] !== base / GRANULE) {
    return 'the header does not match the handle';
  }
  const headerBytes = probe[H_HEADER_BYTES]!;
  if (headerBytes !== headerBytesFor(maxBytes) || length < base + headerBytes) return 'the header size does not match';
  return null;
}
