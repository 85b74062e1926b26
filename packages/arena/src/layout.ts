/**
 * Where everything about an arena lives. An arena is `arenaBytes` (8 MiB, or 2 MiB in the small geometry)
 * aligned to its size, so `p & ~(arenaBytes - 1)` finds it with no memory read. It is cut into 16 KiB units,
 * every one of them usable: nothing sits in front of an object, and nothing of the arena's own sits inside it.
 *
 * Its header and per-unit records live in its region's slot 0, which the region layer leaves empty but for the
 * region header in its first page. Slot 0 is cut into 32 chunks of `arenaBytes / 32`: chunk 0 keeps the region
 * header, chunk k holds the metadata of the arena in slot k, {@link META_OFFSET} (20 KiB) into the chunk. So the
 * metadata of the arena at `base` is at `(base & ~(32 arenaBytes - 1)) + ((base >>> 5) & (arenaBytes - 1)) + 20 KiB`
 * ({@link arenaMeta}), again with no memory read. All of it is in the shared buffer, so any agent (a foreign
 * freer, a reaper) can read it.
 *
 * Header ({@link META_HEADER_BYTES} bytes at the metadata address), 32-bit words:
 *   0  kind | owner slot << 8   (the first word a foreign free reads)
 *   1  magic                    (cleared before the arena is released)
 *   2  free units               3  longest-run bound   4  first-fit hint (lowest unit that may be free)
 *   5  dirty units              6  retained units             7  units per arena
 *   8..23   partial-slab list head per class (slab address, 0 = empty)
 *   24..39  unit bitmap (bit set = unit in use)
 *   40..55  dirty bitmap (free units still committed, waiting for a sweep)
 *   56..71  retained bitmap (free units of a released large block kept committed for reuse)
 *   72  the owner slot that laid the arena out (word 0 changes when another agent takes it over; this never does)
 *
 * Per-unit record (32 bytes each, record u at meta + META_HEADER_BYTES + 32 u):
 *   0 free list head   1 bump (next never-used address)   2 live count
 *   3 info: state (bits 0-1) | class << 2 | flags   4 span in units (head) or units back to the head (continuation)
 *   5 next slab on the partial list   6 previous slab on the partial list   7 object bytes (large class)
 *
 * The header and records of an 8 MiB arena take 512 + 512 x 32 bytes (16.5 KiB, in a 256 KiB chunk); of a 2 MiB
 * arena 512 + 128 x 32 (4.5 KiB, in a 64 KiB chunk). Carving an arena commits and zeroes them (whole pages,
 * {@link metaCommitBytes}); releasing it decommits them.
 */

export const UNIT_SHIFT = 14;
/** 16 KiB. */
export const UNIT = 1 << UNIT_SHIFT;
export const RECORD_BYTES = 32;
/** log2 of a record's size in Int32 words (8): record u starts `u << RECORD_SHIFT` words after the header's end. */
export const RECORD_SHIFT = 3;
/** Bytes of an arena's header in its metadata chunk; the per-unit records follow. */
export const META_HEADER_BYTES = 512;
/** The same in Int32 words. */
export const META_HEADER_WORDS = 128;
/** Arena slots per region: slot 0 holds the metadata chunks, one per slot. */
export const META_CHUNKS = 32;
/**
 * Where an arena's metadata starts in its chunk: 20 KiB in, whole pages. At the chunk's start it sat at the same
 * offsets in its 2^16-aligned chunk as the arena's first blocks in their 2^21-aligned arena, and the pair on a
 * fresh heap ran 3 ns slower than with the header in the arena (likely: AMD's L1 way predictor hashes address bit
 * 16 with 21, 17 with 22 and so on, so the header's line and the first block's line, the one a LIFO malloc/free
 * pair keeps reusing, evict each other; see docs/design/arena.md). 20 KiB fits every chunk (32 KiB for 1 MiB arenas).
 */
export const META_OFFSET = 20 * 1024;

export const KIND_ARENA = 1;
/** Kind of an oversized mapping's header (kept by @paddock/large; the arena only recognises it). */
export const KIND_MAPPING = 2;
/** Magic of an oversized mapping's header (word 1). */
export const MAPPING_MAGIC = 0x50414d50 | 0; // 'PMAP'
/** The class of a large object: one object of any 1 KiB multiple, spanning whole units. */
export const LARGE_CLASS = 16;
export const ARENA_MAGIC = 0x4e524150 | 0; // 'PARN'
/** Marker written into word 1 of a freed object, xor its address: a second free of it is caught. */
export const FREED_MARK = 0x46524545 | 0; // 'FREE'
/**
 * A batch of frees sent home (see remote-chains.ts): its objects linked through word 0 from its head, the last
 * one's link 0, every one carrying the freed mark in word 1; the head's word 2 holds the batch's length and its
 * word 3 the next batch of the inbox (or of the owner's queue of batches taken and not begun).
 */
export const B_LENGTH = 2;
export const B_NEXT = 3;

// Header words (Int32 index offsets from arenaMeta(base, arenaBytes) >>> 2, see headerIndex).
export const A_KIND_OWNER = 0;
export const A_MAGIC = 1;
export const A_FREE_UNITS = 2;
export const A_RUN_BOUND = 3;
export const A_HINT = 4;
export const A_DIRTY_UNITS = 5;
export const A_RETAINED_UNITS = 6;
export const A_UNITS = 7;
export const A_PARTIAL = 8;
export const A_UNIT_BITS = 24;
export const A_DIRTY_BITS = 40;
export const A_RETAINED_BITS = 56;
/** The owner slot that carved and laid out the arena: a `releaseLive` reap releases only what its agent carved. */
export const A_CARVER = 72;

// Record words.
export const R_FREE = 0;
export const R_BUMP = 1;
export const R_LIVE = 2;
export const R_INFO = 3;
export const R_SPAN = 4;
export const R_PNEXT = 5;
export const R_PPREV = 6;
export const R_SIZE = 7;

// Record info.
export const STATE_MASK = 3;
export const STATE_FREE = 0;
export const STATE_HEAD = 1;
export const STATE_CONT = 2;
export const CLASS_SHIFT = 2;
export const CLASS_MASK = 31;
/** The slab is on its arena's partial list. */
export const FLAG_PARTIAL = 1 << 8;
/** The slab is its owner's current slab for its class. */
export const FLAG_CURRENT = 1 << 9;
/** A reaper found the slab half-updated by an agent that died: it is never allocated from or released. */
export const FLAG_QUARANTINE = 1 << 10;

/** `freeableClass`: `p` lies in an oversized mapping (whose tier checks the free). */
export const IN_MAPPING = -1;
/** `freeableClass`: `p` is not a block that may be freed (the slow path says why). */
export const NOT_FREEABLE = -2;

/**
 * Byte address of the metadata (header, then records) of the arena at `base` (an `arenaBytes`-aligned arena
 * slot): {@link META_OFFSET} into chunk k of its region's slot 0, for the arena in slot k. No memory read. For an
 * address in slot 0 itself it is 20 KiB into chunk 0, which nobody lays out (the region header is its first page).
 */
export function arenaMeta(base: number, arenaBytes: number): number {
  return (((base & ~(META_CHUNKS * arenaBytes - 1)) >>> 0) + ((base >>> 5) & (arenaBytes - 1)) + META_OFFSET) >>> 0;
}

/** Int32 index of the header of the arena at `base`: add the `A_` word offsets to it. */
export function headerIndex(base: number, arenaBytes: number): number {
  return arenaMeta(base, arenaBytes) >>> 2;
}

/** Int32 index of record `u` of the arena at `base`. */
export function recordIndex(base: number, u: number, arenaBytes: number): number {
  return (arenaMeta(base, arenaBytes) + META_HEADER_BYTES + u * RECORD_BYTES) >>> 2;
}

/** Bytes of an arena's metadata (header and records) rounded up to whole 4 KiB pages: what a carve commits. */
export function metaCommitBytes(arenaBytes: number): number {
  return Math.ceil((META_HEADER_BYTES + (arenaBytes >>> UNIT_SHIFT) * RECORD_BYTES) / 4096) * 4096;
}
