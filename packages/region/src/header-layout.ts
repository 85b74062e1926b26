/**
 * The words of the heap header and of a region header (regions.ts says what each means and who writes it): kept
 * apart so that the layout reads as one table and a tool that reads a heap's header shares the same names.
 */
export const HEAP_MAGIC = 0x48524450; // 'PDRH'
export const REGION_MAGIC = 0x47524450; // 'PDRG'
export const VERSION = 2;

// Heap header words.
export const H_MAGIC = 0;
export const H_VERSION = 1;
export const H_REGION_BYTES = 2;
export const H_ARENA_BYTES = 3;
export const H_UNIT_BYTES = 4;
export const H_UNITS_PER_ARENA = 5;
export const H_SPACE_GRANULES = 6;
export const H_LIST_HEAD = 7;
export const H_REGION_COUNT = 8;
/** Regions being opened right now (reserved, not yet on the list), by any agent. */
export const H_OPENING = 9;
export const H_USER = 32;
/** User words an upper layer may keep in the heap header. */
export const USER_WORDS = 32;
/** First word of the region map: one Int32 per region-sized range of the space (see {@link Regions.regionMapIndex}). */
export const H_REGION_MAP = H_USER + USER_WORDS;
/**
 * Entries of the region map: 4 GiB over the smallest region (32 MiB, 1 MiB arenas). Every entry is in the header's
 * committed first page, so `map + (p >>> regionShift)` is readable for every uint32 `p`.
 */
export const REGION_MAP_ENTRIES = 128;
/** Bytes of the heap header in use (the rest of its page is zero). */
export const HEAP_HEADER_BYTES = (H_REGION_MAP + REGION_MAP_ENTRIES) * 4;

// Region header words.
export const R_MAGIC = 0;
export const R_BITMAP = 1;
export const R_NEXT = 2;
export const R_REGION_BYTES = 3;
/** Bytes of the region header in use; its first page is committed. */
export const REGION_HEADER_BYTES = 16;

/** Root word of the address space that holds the heap header's address. */
export const REGIONS_ROOT = 0;
