// The bad-input table, one backend's cases: each bad size, pointer, handle and profile gets one exact error
// type and code, and after each the heap passes check(), its live blocks keep their contents and it keeps
// serving. Pointers: 0, odd, outside the heap, inside a header, interior of a block, already freed (small,
// large, oversized), freed by another agent first; each through free, realloc and usableSize. Registered by
// bad-input-table.test.ts under vitest and by the browser suite's page in Chromium.
import { HeapError } from '@paddock/platform';
import { attachArenaHeap, createArenaHeap } from '../../src/heap.js';
import { attachClassicHeap, createClassicHeap } from '../../src/classic-heap.js';
import { attachGlobalHeap, createGlobalHeap } from '../../src/global-heap.js';
import type { Heap, HeapHandle, HeapOptions } from '../../src/types.js';
import type { Suite } from '../../../../tools/test-utils/suite.js';

const MiB = 1 << 20;
const GiB = 1 << 30;

/** What a call gets: 'ok', `HeapError CODE`, or the name of what else it threw. */
export function outcome(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (e) {
    if (e instanceof HeapError) return `HeapError ${e.code}`;
    return (e as Error).constructor.name;
  }
}

export interface Backend {
  name: string;
  create(o: HeapOptions): Heap;
  attach(h: HeapHandle): Heap;
  /** What usableSize of a freed block gets (the arena knows the block was freed; the classic pool only that it is not live). */
  usableOfFreed: string;
  /**
   * What every call on an already freed large and oversized block gets, where that is not `DOUBLE_FREE` (and
   * `usableOfFreed`): the global pool gives a freed large block's addresses back at once and keeps no record
   * of it, so the pointer is refused for what lies there now.
   */
  freedMappings?: [large: string, oversized: string];
}

export const backends: Backend[] = [
  {
    name: 'pool_arena',
    create: createArenaHeap,
    attach: attachArenaHeap,
    usableOfFreed: 'HeapError DOUBLE_FREE',
  },
  {
    name: 'pool_classic',
    create: createClassicHeap,
    attach: attachClassicHeap,
    usableOfFreed: 'HeapError BAD_POINTER',
  },
  {
    name: 'pool_global',
    create: createGlobalHeap,
    attach: attachGlobalHeap,
    usableOfFreed: 'HeapError DOUBLE_FREE',
    // freedLarge's addresses now hold the 256-byte class slab the two malloc(200)s below start (its pointer is
    // off that slab's block boundaries); nothing starts at freedHuge's any more.
    freedMappings: ['HeapError MISALIGNED', 'HeapError BAD_POINTER'],
  },
];

/** Registers the table's cases on backend `b` (its heaps are made here, as the cases are registered). */
/** A fresh memory of the kind `space` carries (no Paddock space in it), as a handle's field. */
function freshMemory(space: HeapHandle['space']): { buffer: SharedArrayBuffer } | { memory: WebAssembly.Memory } {
  return space.memory !== undefined
    ? { memory: new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }) }
    : { buffer: new SharedArrayBuffer(65536, { maxByteLength: 1 << 20 }) };
}

export function badInputCases(t: Suite, b: Backend): void {
  const heap = b.create({ maxBytes: GiB });
  const other = b.attach(heap.handle);
  const pattern = (p: number, n: number, v: number) => heap.u8.fill(v, p, p + n);
  // Live blocks whose contents must survive every case.
  const live = heap.malloc(100);
  const block = heap.malloc(64 * 1024);
  const large = heap.malloc(2 * MiB);
  pattern(live, 100, 0x11);
  pattern(block, 64 * 1024, 0x22);
  pattern(large, 2 * MiB, 0x33);
  // Freed blocks of every tier, and one freed by another agent first.
  const freedSmall = heap.malloc(48);
  const freedLarge = heap.malloc(3 * MiB);
  const freedHuge = heap.malloc(heap.largeMax < 64 * MiB ? heap.largeMax + MiB : 12 * MiB); // the classic pool has no oversized tier
  heap.malloc(48); // keeps freedSmall's slab in use
  heap.free(freedSmall);
  heap.free(freedLarge);
  heap.free(freedHuge);
  const byOther = heap.malloc(200);
  heap.malloc(200);
  other.free(byOther);
  // On the arena: a word of the header of the arena holding `live`, in its region's slot 0 (20 KiB into chunk k
  // of arenaBytes / 32 for the arena in slot k; the arena's largeMax is its whole size).
  const arenaBytes = heap.largeMax > 4 * MiB ? 8 * MiB : 2 * MiB;
  const region = (live & ~(32 * arenaBytes - 1)) >>> 0;
  const headerPtr = heap.backend === 'pool_arena' ? region + Math.floor((live - region) / arenaBytes) * (arenaBytes / 32) + 20 * 1024 + 64 : 64;

  // [name, pointer, what free and realloc get, what usableSize gets]
  const freed = b.usableOfFreed;
  const pointers: [string, number, string, string][] = [
    ['an odd pointer', live + 1, 'HeapError MISALIGNED', 'HeapError MISALIGNED'],
    ['a pointer outside the heap', 2 ** 31 + 64, 'HeapError BAD_POINTER', 'HeapError BAD_POINTER'],
    ['a pointer beyond 4 GiB', 2 ** 32 + 64, 'HeapError BAD_POINTER', 'HeapError BAD_POINTER'],
    ['a negative pointer', -64, 'HeapError BAD_POINTER', 'HeapError BAD_POINTER'],
    ['a fractional pointer', 64.5, 'HeapError BAD_POINTER', 'HeapError BAD_POINTER'],
    ['a pointer inside a header', headerPtr, 'HeapError BAD_POINTER', 'HeapError BAD_POINTER'],
    ['the interior of a small block', live + 32, 'HeapError MISALIGNED', 'HeapError MISALIGNED'],
    ['the interior of a large block', large + 16384, 'HeapError BAD_POINTER', 'HeapError BAD_POINTER'],
    ['an already freed small block', freedSmall, 'HeapError DOUBLE_FREE', freed],
    ['an already freed large block', freedLarge, b.freedMappings?.[0] ?? 'HeapError DOUBLE_FREE', b.freedMappings?.[0] ?? freed],
    ['an already freed oversized block', freedHuge, b.freedMappings?.[1] ?? 'HeapError DOUBLE_FREE', b.freedMappings?.[1] ?? freed],
    ['a block another agent freed first', byOther, 'HeapError DOUBLE_FREE', freed],
  ];
  const sizes: [string, unknown][] = [
    ['-1', -1],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['1.5', 1.5],
    ['"64" (a string)', '64'],
    ['null', null],
    ['2 GiB (above the heap)', 2 ** 31],
    ['2^53 (above the heap)', 2 ** 53],
  ];

  // [name, call, the exact error type and code it must get]
  const R = 'RangeError';
  const cases: [string, () => unknown, string][] = [
    ...sizes.map(([n, s]): [string, () => unknown, string] => [`malloc(${n})`, () => heap.malloc(s as number), R]),
    ...sizes.map(([n, s]): [string, () => unknown, string] => [`calloc(1, ${n})`, () => heap.calloc(1, s as number), R]),
    ...sizes.map(([n, s]): [string, () => unknown, string] => [`calloc(${n}, 8)`, () => heap.calloc(s as number, 8), R]),
    ['calloc(2^20, 2^20): the product is above the heap', () => heap.calloc(2 ** 20, 2 ** 20), R],
    ...sizes.map(([n, s]): [string, () => unknown, string] => [`realloc(live, ${n})`, () => heap.realloc(live, s as number), R]),
    ['free(0)', () => heap.free(0), 'ok'],
    ['usableSize(0)', () => heap.usableSize(0), 'HeapError BAD_POINTER'],
    ...pointers.map(([n, p, e]): [string, () => unknown, string] => [`free of ${n}`, () => heap.free(p), e]),
    ...pointers.map(([n, p, e]): [string, () => unknown, string] => [`realloc of ${n}`, () => heap.realloc(p, 64), e]),
    ...pointers.map(([n, p, , u]): [string, () => unknown, string] => [`usableSize of ${n}`, () => heap.usableSize(p), u]),
    ['attachHeap(null)', () => b.attach(null as never), 'HeapError BAD_HANDLE'],
    ['attachHeap of a string', () => b.attach('paddock-heap' as never), 'HeapError BAD_HANDLE'],
    ['attachHeap of a forged handle (wrong maxBytes)', () => b.attach({ ...heap.handle, space: { ...heap.handle.space, maxBytes: MiB } }), 'HeapError BAD_HANDLE'],
    ['attachHeap of a forged handle (wrong version)', () => b.attach({ ...heap.handle, version: 99 }), 'HeapError BAD_HANDLE'],
    ['attachHeap of a forged handle (other backend)', () => b.attach({ ...heap.handle, backend: heap.backend === 'pool_arena' ? 'pool_classic' : 'pool_arena' }), 'HeapError BAD_HANDLE'],
    // The handle's own kind of memory, fresh (a growable buffer, or under Bun a shared wasm memory): no space in it.
    ['attachHeap of a forged handle (a fresh buffer)', () => b.attach({ ...heap.handle, space: { ...heap.handle.space, ...freshMemory(heap.handle.space) } as never }), 'HeapError BAD_HANDLE'],
    ['attachHeap of a forged handle (a buffer and a memory)', () => b.attach({ ...heap.handle, space: { ...heap.handle.space, buffer: new SharedArrayBuffer(65536), memory: new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }) } as never }), 'HeapError BAD_HANDLE'],
    ['createHeap with profile 0', () => b.create({ maxBytes: 16 * MiB, profile: 0 }), R],
    ['createHeap with profile 11', () => b.create({ maxBytes: 16 * MiB, profile: 11 }), R],
    ['createHeap with profile 2.5', () => b.create({ maxBytes: 16 * MiB, profile: 2.5 }), R],
  ];

  t.it(`has at least 30 cases (${cases.length})`, () => {
    t.expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  for (const [name, fn, want] of cases) {
    t.it(`${name} -> ${want}`, () => {
      t.expect(outcome(fn)).toBe(want);
      heap.check();
      t.expect(heap.u8.subarray(live, live + 100).every((x) => x === 0x11)).toBe(true);
      t.expect(heap.u8[block]).toBe(0x22);
      t.expect(heap.u8[block + 64 * 1024 - 1]).toBe(0x22);
      t.expect(heap.u8[large + 2 * MiB - 1]).toBe(0x33);
      t.expect(heap.usableSize(live)).toBeGreaterThanOrEqual(100);
      const p = heap.malloc(100);
      const q = heap.malloc(3 * MiB);
      heap.free(p);
      heap.free(q);
    });
  }
}
