/**
 * The global pool's numbers and the layout of what it keeps in the shared buffer.
 *
 * Pool header (found through root word `POOL_ROOT`), as Int32 words:
 *
 *   0 magic 'PGLB'      1 version      2 MiB count of the space      3 slabs returned so far (a count)
 *   4-19   CARVE[c]: the slab class c is being carved from now (its address; 0 when none)
 *   20-31  spare
 *   32-63  HEAD[c]: the free list heads of class 0-15, one BigInt64 each (bytes 128-255): low 32 bits the
 *          first free block, high 32 bits a generation tag bumped by every successful pop
 *   64 ...       ENTRY[m]: one word per MiB of the space: what starts there (see below)
 *   64 + M ...   TOP[m]:   a slab's class and carve offset, `class << 24 | offset`: every block below the
 *                offset has been handed out at least once, none above it ever has. The offset only grows while
 *                the slab lives (by CAS, never past 1 MiB); 1 MiB means used up, or sealed for return.
 *
 * ENTRY[m]: `generation << 8 | kind`. Kind 0: nothing of the pool starts there; 1 + c: a slab of class c
 * (0-15); LARGE: a large block whose mapping starts at the MiB (its header is in front of the pointer, see
 * `large.ts`). The generation counts what was published at the MiB: a slab or large block placed there
 * bumps it, and clearing the kind keeps it, so a word read before a slab was returned and its MiB used
 * again never equals the word after.
 *
 * A free small block carries, in its first two words: the next free block of its class (u32) and a free
 * mark (derived from its address and class; cleared when the block is handed out again).
 */

/** The root word that holds the pool header's address (0 and 1 belong to the region layer and the registry). */
export const POOL_ROOT = 2;

export const KiB = 1024;
export const MiB = 1024 * KiB;

/** Size classes: class c holds blocks of 32 << c bytes, 32 B to 1 MiB. */
export const CLASS_COUNT = 16;
export const MIN_BLOCK = 32;
export const MAX_CLASS_SIZE = MiB;
/** Slabs are 1 MiB, 1 MiB aligned; one slab carves blocks of one class. */
export const SLAB_BYTES = MiB;
/** Pages, for rounding large blocks. */
export const PAGE = 4096;

export const MAGIC = 0x424c4750; // 'PGLB'
export const VERSION = 2;
export const H_MAGIC = 0;
export const H_VERSION = 1;
export const H_MIBS = 2;
/** How many slabs have been returned to the address space, ever (see `return-slabs.ts`). */
export const H_RETURNED = 3;
export const H_CARVE = 4;
/** Byte offset of the first BigInt64 list head. */
export const HEAD_BYTES = 128;
export const H_ENTRY = 64;

/** The ENTRY kind of a large block's first MiB (slabs are 1 + class, 1-16). */
export const LARGE = 32;

/** An ENTRY word: what starts at a MiB (`kind`) and how many times something was published there. */
export function entryWord(generation: number, kind: number): number {
  return ((generation & 0xffffff) << 8) | kind;
}

/** The kind of an ENTRY word: 0, 1 + class, or LARGE. */
export function entryKind(e: number): number {
  return e & 0xff;
}

/** The ENTRY word publishing `kind` at a MiB whose word was `e`: the generation bumped. */
export function publishedEntry(e: number, kind: number): number {
  return entryWord((e >>> 8) + 1, kind);
}

/** The ENTRY word saying nothing starts at a MiB whose word was `e`: the generation kept. */
export function clearedEntry(e: number): number {
  return e & ~0xff;
}

/** A TOP word: a class `c` slab carved up to byte `offset`. */
export function topWord(c: number, offset: number): number {
  return (c << 24) | offset;
}

/** The carve offset of a TOP word (at most 1 MiB). */
export function topOffset(t: number): number {
  return t & 0xffffff;
}

/** The class of a TOP word. */
export function topClass(t: number): number {
  return t >>> 24;
}

/** Header bytes for a space of `mibs` MiBs: fixed words plus two tables. */
export function headerBytes(mibs: number): number {
  return (H_ENTRY + 2 * mibs) * 4;
}

/** The size class of a request of `size` bytes (0 <= size <= 1 MiB): 0 for size <= 32, else ceil(log2 size) - 5. */
export function classIndex(size: number): number {
  return size <= MIN_BLOCK ? 0 : 27 - Math.clz32(size - 1);
}

/** Block size of class `c`. */
export function classSize(c: number): number {
  return MIN_BLOCK << c;
}

/** The free mark a free block of class `c` at `p` carries in its second word. */
export function freeMark(p: number, c: number): number {
  return (p ^ (0x2f6b7a91 + c * 0x10001)) | 0;
}
