/**
 * The classic pool's numbers and the layout of everything it keeps in the shared buffer.
 *
 * Pool header (one 64 KiB granule, found through root word 2), as Int32 words:
 *
 *   0 magic 'PCLS'            1 version               2 flags (bit 0: retain)   3 MiB count of the space
 *   4 agents opened           5 newest agent-record page                         6 global large list head
 *   7 MiBs on that list       8 blocks on that list   9-15 spare
 *   16-31 objects on the global stack of class 0-15
 *   32-63 the global stack heads of class 0-15, one BigInt64 each (bytes 128-255): low 32 bits the
 *         list's first object, high 32 bits a generation tag bumped by every successful push and pop
 *   64 ...              ENTRY[m]: one word per MiB of the space (what the MiB is, see below)
 *   64 + M ...          PAGES[m]: a live large block's size in 4 KiB pages (at its first MiB)
 *   64 + 2M ...         LINK[m]:  the next block on the global large list (at its first MiB)
 *
 * ENTRY[m]: bits 0-4 the kind, bits 8-28 a number that depends on it.
 *   0              nothing the pool hands out starts here (not pool memory, or inside a large block)
 *   1 + c          a 1 MiB block of size class c (0-15); the number is the bump high-water offset: every
 *                  object below it has been handed out at least once, none above it ever has
 *   LARGE_LIVE     the first MiB of a live large block; the number is its footprint in MiBs
 *   LARGE_LOCAL    the first MiB of a free large block on some agent's local list; footprint
 *   LARGE_GLOBAL   the first MiB of a free large block on the global large list; footprint
 *
 * A freed small object keeps, in its first words: next object (u32), a free mark (i32, derived from its
 * address and class), and, when it heads a list on a global stack, the list's length (u32) and the next
 * list on the stack (u32).
 */

/** The root word that holds the pool header's address (0 and 1 belong to the region layer and the registry). */
export const POOL_ROOT = 2;

export const KiB = 1024;
export const MiB = 1024 * KiB;

/** Size classes: class i holds objects of 32 << i bytes, 32 B to 1 MiB. */
export const CLASS_COUNT = 16;
/** The smallest object: it must hold the four words a freed list head carries. */
export const MIN_OBJECT = 32;
/** The largest class size; anything bigger is a large block. */
export const MAX_CLASS_SIZE = MiB;
/** Large sizes are rounded up to whole pages. */
export const PAGE = 4096;
/** A large block's address range is a whole number of MiBs (its footprint), aligned to 1 MiB. */
export const PAGES_PER_MIB = MiB / PAGE;
/** Fresh memory is reserved from the space in chunks of this many MiBs (or the block's footprint if larger). */
export const CHUNK_MIBS = 16;
/** An agent's local list of free large blocks that grows past this many blocks hands its largest half to the global list. */
export const LOCAL_LARGE_MAX = 16;

// Header words.
export const MAGIC = 0x534c4350; // 'PCLS'
export const VERSION = 1;
export const H_MAGIC = 0;
export const H_VERSION = 1;
export const H_FLAGS = 2;
export const H_MIBS = 3;
export const H_AGENTS = 4;
export const H_RECORDS = 5;
export const H_LARGE_HEAD = 6;
export const H_LARGE_MIBS = 7;
export const H_LARGE_BLOCKS = 8;
export const H_STACK_COUNT = 16;
/** Byte offset of the first BigInt64 stack head. */
export const STACK_HEAD_BYTES = 128;
export const H_ENTRY = 64;
export const FLAG_RETAIN = 1;

// Entry kinds.
export const KIND_MASK = 31;
export const LARGE_LIVE = 17;
export const LARGE_LOCAL = 18;
export const LARGE_GLOBAL = 19;

/** The ENTRY word of kind `kind` carrying `value` (a high-water offset or a footprint in MiBs). */
export function entryWord(kind: number, value: number): number {
  return (value << 8) | kind;
}

/** Large-list keys scale a footprint by this: every MiB index is below it (a space is at most 4 GiB). */
const KEY_SCALE = 4096;

/**
 * A free large block's sort key, (footprint, first MiB) as one number: `footprint * 4096 + MiB`. Both
 * large lists are sorted by it: first fit by size, then by address.
 */
export function largeKey(footprint: number, mib: number): number {
  return footprint * KEY_SCALE + mib;
}

/** The footprint, in MiBs, of the block a {@link largeKey} names. */
export function keyFootprint(key: number): number {
  return Math.floor(key / KEY_SCALE);
}

/** The first MiB of the block a {@link largeKey} names. */
export function keyMib(key: number): number {
  return key % KEY_SCALE;
}

/** Header bytes for a space of `mibs` MiBs (fixed words plus three tables). */
export function headerBytes(mibs: number): number {
  return (H_ENTRY + 3 * mibs) * 4;
}

/** The size class of a request of `size` bytes (0 <= size <= 1 MiB): 0 for size <= 32, else ceil(log2 size) - 5. */
export function classIndex(size: number): number {
  return size <= MIN_OBJECT ? 0 : 27 - Math.clz32(size - 1);
}

/** Object size of class `c`. */
export function classSize(c: number): number {
  return MIN_OBJECT << c;
}

/** Objects in one 1 MiB list of class `c`: a local list this long is pushed to the global stack. */
export function listCapacity(c: number): number {
  return MiB >>> (5 + c);
}

/** The free mark a freed object of class `c` at `p` carries in its second word. */
export function freeMark(p: number, c: number): number {
  return (p ^ (0x6d2b79f5 + c * 0x10001)) | 0;
}

// Agent records: 64 KiB pages, each [next page, records claimed, ...], records of 64 words from byte 256.
export const RECORD_PAGE_BYTES = 65536;
export const RECORD_FIRST_BYTES = 256;
export const RECORD_WORDS = 64;
export const RECORDS_PER_PAGE = (RECORD_PAGE_BYTES - RECORD_FIRST_BYTES) / (RECORD_WORDS * 4);
/** Address of record `slot` in the record page at `page`. */
export function recordAddress(page: number, slot: number): number {
  return page + RECORD_FIRST_BYTES + slot * RECORD_WORDS * 4;
}
/** Record words. */
export const R_AGENT = 0;
export const R_STATE = 1; // 1 attached, 2 detached
export const R_ALLOCS = 2; // 16 words: objects handed out per class
export const R_FREES = 18; // 16 words: objects freed per class
export const R_LARGE_ALLOCS = 34;
export const R_LARGE_FREES = 35;
export const R_LARGE_ALLOC_PAGES = 36;
export const R_LARGE_FREE_PAGES = 37;
