/**
 * Bad input, for the global pool: the checks on what a caller hands it (an address space, a size) and the
 * errors it throws for pointers that name no live block. The pool calls these before it changes anything,
 * so a refused call leaves the heap as it was.
 */
import { HeapError, describeValue, formatAddress, formatBytes } from '@paddock/platform';

/** The RangeError for a size that is not an integer from 0 to `max`. */
export function badSize(size: unknown, max: number): RangeError {
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) {
    return new RangeError(`size must be a non-negative integer, got ${describeValue(size)}`);
  }
  return new RangeError(`size ${formatBytes(size)} is larger than the heap (maxBytes ${formatBytes(max)})`);
}

/** The error for a value that is not a pointer into the heap at all. */
export function notAPointer(ptr: unknown, maxBytes: number, op: string): HeapError {
  return new HeapError('BAD_POINTER', `${op}(${describeValue(ptr)}): not a pointer into this heap (an integer from 1 to ${maxBytes - 1})`);
}

/** The error for a pointer where no block of this pool starts. */
export function noBlock(ptr: number, op: string, why: string): HeapError {
  return new HeapError('BAD_POINTER', `${op}(${formatAddress(ptr)}): ${why}`, ptr);
}

/** The error for a pointer into a class `c` slab that is off its blocks' boundaries. */
export function misaligned(ptr: number, c: number, op: string): HeapError {
  return new HeapError('MISALIGNED', `${op}(${formatAddress(ptr)}): inside a class ${c} slab, but not on a ${32 << c}-byte block boundary`, ptr);
}

/** The error for a free of the block at `ptr` (described by `what`) while it is free. */
export function doubleFree(ptr: number, what: string): HeapError {
  return new HeapError('DOUBLE_FREE', `free(${formatAddress(ptr)}): the ${what} there is already free`, ptr);
}

/** @throws HeapError `CORRUPTION` with `message`, at `address` when one is known. */
export function corrupt(message: string, address?: number): never {
  throw new HeapError('CORRUPTION', `global pool: ${message}${address === undefined ? '' : ` (at ${formatAddress(address)})`}`, address);
}
