/**
 * Size classes: class i holds objects of 32 << i bytes, 32 B (class 0) to 1 MiB (class 15).
 * Classes 0-9 live in one-unit slabs (512 ... 1 objects of a 16 KiB unit); classes 10-15 are single
 * objects spanning 2-64 units. A slab that holds one object is a "block". A size above 1 MiB is a large
 * object: one object on a run of whole units of its own, rounded up to 1 KiB.
 */

/** Bytes of the smallest class; a batch head (four words: link, freed mark, length, next batch) must fit in one object. */
export const MIN_OBJECT = 32;
/** Number of classes. */
export const CLASS_COUNT = 16;
/** Largest size served by a class (1 MiB). */
export const MAX_CLASS_SIZE = MIN_OBJECT << (CLASS_COUNT - 1);

/** Class of a request of `size` bytes (1 <= size <= 1 MiB): 0 for size <= 32, else ceil(log2 size) - 5. */
export function classIndex(size: number): number {
  return size <= MIN_OBJECT ? 0 : 27 - Math.clz32(size - 1);
}

/** Object size of class `cls`. */
export function classSize(cls: number): number {
  return MIN_OBJECT << cls;
}

/** The last class whose slab is one unit; higher classes span 2-64 units and hold one object. */
const LAST_UNIT_CLASS = 9;

/** Units a slab of class `cls` spans. */
export function spanOf(cls: number): number {
  return cls <= LAST_UNIT_CLASS ? 1 : 1 << (cls - LAST_UNIT_CLASS);
}

/** Large objects (above 1 MiB, one on its own run of units) are rounded up to this (1 KiB). */
export const LARGE_ROUND = 1024;

/**
 * The bytes a large object of `size` takes: `size` rounded up to {@link LARGE_ROUND}. Integer arithmetic for a size
 * below 2^31 - 1 KiB (every `largeMax` is), where `Math.ceil` of a division cost the same-size churn a tenth of a step.
 */
export function largeBytes(size: number): number {
  return (size + (LARGE_ROUND - 1)) & -LARGE_ROUND;
}

/** The error for a size no class serves (not an integer from 0 to 1 MiB). */
export function badSize(size: unknown): RangeError {
  const shown = typeof size === 'string' ? JSON.stringify(size) : String(size);
  return new RangeError(`size must be an integer from 0 to ${MAX_CLASS_SIZE} bytes, got ${shown}`);
}
