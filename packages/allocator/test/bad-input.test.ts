// Bad input to the public API: a RangeError for sizes, a HeapError with a code for pointers and handles,
// and the heap left consistent and serving after each.
import { describe, expect, it } from 'vitest';
import { HeapError } from '@paddock/platform';
import { attachArenaHeap as attachHeap, createArenaHeap as createHeap } from '../src/heap.js';
import { outcome } from './cases/bad-input-table.js';

const heap = createHeap({ maxBytes: 1 << 30 });
const live = heap.malloc(100);
const block = heap.malloc(64 * 1024);
heap.malloc(64 * 1024);
const freed = heap.malloc(48);
heap.malloc(48);
heap.free(freed);
/** The header of the arena holding `p` (2 MiB arenas, 64 MiB regions): 20 KiB into chunk k of 64 KiB of its region's slot 0. */
const headerOf = (p: number): number => {
  const region = (p & ~(64 * 1024 * 1024 - 1)) >>> 0;
  return region + Math.floor((p - region) / (2 * 1024 * 1024)) * 64 * 1024 + 20 * 1024;
};

const cases: [string, () => unknown, string][] = [
  ['malloc(-1)', () => heap.malloc(-1), 'RangeError'],
  ['malloc(NaN)', () => heap.malloc(Number.NaN), 'RangeError'],
  ['malloc(Infinity)', () => heap.malloc(Number.POSITIVE_INFINITY), 'RangeError'],
  ['malloc(1.5)', () => heap.malloc(1.5), 'RangeError'],
  ['malloc("64")', () => heap.malloc('64' as never), 'RangeError'],
  ['malloc(2 GiB)', () => heap.malloc(2 ** 31), 'RangeError'],
  ['calloc(-1, 8)', () => heap.calloc(-1, 8), 'RangeError'],
  ['calloc(8, 0.5)', () => heap.calloc(8, 0.5), 'RangeError'],
  ['calloc overflow 2^20 x 2^20', () => heap.calloc(2 ** 20, 2 ** 20), 'RangeError'],
  ['calloc overflow 2^31 x 2^31', () => heap.calloc(2 ** 31, 2 ** 31), 'RangeError'],
  ['realloc to a negative size', () => heap.realloc(live, -5), 'RangeError'],
  ['free(0)', () => heap.free(0), 'ok'],
  ['free of an odd pointer', () => heap.free(live + 1), 'HeapError MISALIGNED'],
  ['free of a pointer outside the heap', () => heap.free(2 ** 31 + 64), 'HeapError BAD_POINTER'],
  ['free of a negative number', () => heap.free(-64), 'HeapError BAD_POINTER'],
  ['free of a non-integer', () => heap.free(64.5), 'HeapError BAD_POINTER'],
  ['free inside an arena header (in its region\'s slot 0)', () => heap.free(headerOf(live) + 64), 'HeapError BAD_POINTER'],
  ['free inside a region header', () => heap.free(((live & ~(64 * 1024 * 1024 - 1)) >>> 0) + 64), 'HeapError BAD_POINTER'],
  ['free of an interior address', () => heap.free(live + 32), 'HeapError MISALIGNED'],
  ['free of an interior unit of a block', () => heap.free(block + 16384), 'HeapError BAD_POINTER'],
  ['free of a freed block', () => heap.free(freed), 'HeapError DOUBLE_FREE'],
  ['free with the wrong size', () => heap.free(live, 4096), 'HeapError WRONG_SIZE'],
  ['usableSize of a freed block', () => heap.usableSize(freed), 'HeapError DOUBLE_FREE'],
  ['usableSize of a misaligned pointer', () => heap.usableSize(live + 8), 'HeapError MISALIGNED'],
  ['realloc of a freed block', () => heap.realloc(freed, 10), 'HeapError DOUBLE_FREE'],
  ['realloc of a pointer no arena owns', () => heap.realloc(4096, 10), 'HeapError BAD_POINTER'],
  ['attachHeap of null', () => attachHeap(null as never), 'HeapError BAD_HANDLE'],
  ['attachHeap of a forged handle', () => attachHeap({ ...heap.handle, space: { ...heap.handle.space, maxBytes: 1 << 20 } }), 'HeapError BAD_HANDLE'],
  ['attachHeap of another backend', () => attachHeap({ ...heap.handle, backend: 'pool_classic' }), 'HeapError BAD_HANDLE'],
  ['createHeap with profile 0', () => createHeap({ maxBytes: 1 << 24, profile: 0 }), 'RangeError'],
  ['createHeap with profile 11', () => createHeap({ maxBytes: 1 << 24, profile: 11 }), 'RangeError'],
];

describe('bad input', () => {
  it.each(cases)('%s', (_name, fn, expected) => {
    const before = heap.stats();
    expect(outcome(fn)).toBe(expected);
    heap.check();
    const after = heap.stats();
    expect(after.liveBytes).toBe(before.liveBytes);
    expect(after.perClass).toEqual(before.perClass);
    expect(heap.usableSize(live)).toBe(128);
    const p = heap.malloc(100);
    heap.free(p);
  });
});

describe('the contract of the calls', () => {
  it('malloc(0) returns a minimal non-zero block; calloc zeroes; usableSize covers the request', () => {
    const p = heap.malloc(0);
    expect(p).toBeGreaterThan(0);
    expect(heap.usableSize(p)).toBe(32);
    const q = heap.malloc(300);
    heap.u8.fill(0xff, q, q + 512);
    heap.free(q);
    const z = heap.calloc(30, 10);
    expect(z).toBe(q);
    expect(heap.u8.subarray(z, z + 300).every((b) => b === 0)).toBe(true);
    for (const size of [1, 31, 32, 33, 1000, 4096, 65537, 1 << 20]) {
      const r = heap.malloc(size);
      expect(heap.usableSize(r)).toBeGreaterThanOrEqual(size);
      expect(r % Math.min(heap.usableSize(r), 16384)).toBe(0);
      heap.free(r);
    }
    heap.free(p);
    heap.free(z);
    heap.check();
  });

  it('realloc keeps the pointer within a class and moves the contents otherwise', () => {
    expect(heap.realloc(0, 40)).toBeGreaterThan(0);
    const p = heap.malloc(40);
    expect(heap.realloc(p, 64)).toBe(p);
    heap.u8.set([1, 2, 3, 4, 5], p);
    const q = heap.realloc(p, 1000);
    expect(q).not.toBe(p);
    expect([...heap.u8.subarray(q, q + 5)]).toEqual([1, 2, 3, 4, 5]);
    expect(() => heap.free(p)).toThrow(HeapError);
    const r = heap.realloc(q, 3);
    expect([...heap.u8.subarray(r, r + 3)]).toEqual([1, 2, 3]);
    heap.free(r);
    heap.check();
  });
});
