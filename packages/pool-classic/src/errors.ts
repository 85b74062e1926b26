/**
 * Bad input and damage, for the classic pool: the checks on what a caller hands it (an address space, a
 * size) and the errors it throws for bad pointers and corrupted structures. The pool calls these before
 * it changes anything, so a refused call leaves the heap as it was.
 */
import { HeapError, describeValue, formatAddress, formatBytes } from '@paddock/platform';
import { H_ENTRY, KIND_MASK, LARGE_GLOBAL, LARGE_LIVE, MiB, PAGE } from './layout.js';

/** Returns `size` if it is an integer from 0 to `max`. @throws RangeError naming `name` otherwise. */
export function checkSize(name: string, size: unknown, max: number): number {
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${describeValue(size)}`);
  }
  if (size > max) throw new RangeError(`${name} ${formatBytes(size)} is larger than the heap (maxBytes ${formatBytes(max)})`);
  return size;
}

/**
 * The error for a pointer where no block starts: not a pointer into the heap at all, inside a large
 * block (found through the MiB table `hdr`, for a better message), or anywhere else.
 */
export function badPointer(hdr: Int32Array, maxBytes: number, ptr: unknown, op: string): HeapError {
  if (typeof ptr !== 'number' || !Number.isInteger(ptr) || ptr < 0 || ptr >= maxBytes) {
    return new HeapError('BAD_POINTER', `${op}(${describeValue(ptr)}): not a pointer into this heap (an integer from 1 to ${maxBytes - 1})`);
  }
  for (let m = ptr >>> 20; m >= 0; m--) {
    const e = hdr[H_ENTRY + m]!;
    const k = e & KIND_MASK;
    if (k === 0) continue;
    if (k >= LARGE_LIVE && k <= LARGE_GLOBAL && ptr < (m + (e >>> 8)) * MiB && ptr !== m * MiB) {
      return new HeapError('BAD_POINTER', `${op}(${formatAddress(ptr)}): inside the large block at ${formatAddress(m * MiB)}, not its start`, ptr);
    }
    break;
  }
  return new HeapError('BAD_POINTER', `${op}(${formatAddress(ptr)}): no block of this pool starts there`, ptr);
}

/**
 * The error for a pointer into a class `c` block (entry `e`) that names no object: fractional, off an
 * object boundary, or at or above the block's high-water offset (never handed out).
 */
export function badSmall(hdr: Int32Array, maxBytes: number, ptr: number, c: number, e: number, op: string): HeapError {
  const off = ptr % MiB;
  const size = 32 << c;
  if (ptr % 1 !== 0) return badPointer(hdr, maxBytes, ptr, op);
  if (off % size !== 0) {
    return new HeapError('MISALIGNED', `${op}(${formatAddress(ptr)}): inside a class ${c} block, but not on a ${size}-byte object boundary`, ptr);
  }
  return new HeapError('BAD_POINTER', `${op}(${formatAddress(ptr)}): this class ${c} block has handed out objects only below offset ${e >>> 8}; nothing was allocated here`, ptr);
}

/** Throws unless `ptr`, which lies in the first MiB of a large block, is that block's start. */
export function checkLargeStart(hdr: Int32Array, maxBytes: number, ptr: number, op: string): void {
  if (ptr % PAGE !== 0) throw new HeapError('MISALIGNED', `${op}(${formatAddress(ptr)}): not the start of a block (large blocks start on 1 MiB boundaries)`, ptr);
  if (ptr % MiB !== 0) throw badPointer(hdr, maxBytes, ptr, op);
}

/** The error for a free of the class `c` object at `ptr` while it is free. */
export function doubleFree(ptr: number, c: number): HeapError {
  return new HeapError('DOUBLE_FREE', `free(${formatAddress(ptr)}): the class ${c} object there is already free`, ptr);
}

/** @throws HeapError `CORRUPTION` with `message`, at `address` when one is known. */
export function corrupt(message: string, address?: number): never {
  throw new HeapError('CORRUPTION', `classic pool: ${message}${address === undefined ? '' : ` (at ${formatAddress(address)})`}`, address);
}
