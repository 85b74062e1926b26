// Typed views and strings on the heap, one backend's cases: registered by typed-views.test.ts under vitest in Node
// and by the browser suite's page in Chromium (its decoder refuses shared memory: the copying path runs there).
import { HeapError } from '@paddock/platform';
import type { Heap, HeapOptions } from '../../src/types.js';
import type { HeapView, HeapViewConstructor } from '../../src/views.js';
import type { Suite } from '../../../../tools/test-utils/suite.js';

const MiB = 1 << 20;

/** Every typed array type a block can be viewed as, Float16Array where the runtime has it. */
export const viewTypes: HeapViewConstructor[] = [
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
  ...((globalThis as { Float16Array?: HeapViewConstructor }).Float16Array ? [(globalThis as unknown as { Float16Array: HeapViewConstructor }).Float16Array] : []),
];

const isBig = (v: HeapView) => v instanceof BigInt64Array || v instanceof BigUint64Array;
/** A value of element `i` that every type holds exactly (small integers). */
const valueAt = (v: HeapView, i: number) => (isBig(v) ? BigInt(i % 100) : i % 100);

function fill(v: HeapView): void {
  for (let i = 0; i < v.length; i++) (v as unknown as (number | bigint)[])[i] = valueAt(v, i);
}
function matches(v: HeapView, length = v.length): boolean {
  for (let i = 0; i < length; i++) if ((v as unknown as (number | bigint)[])[i] !== valueAt(v, i)) return false;
  return true;
}

/** Live bytes once this agent's thread cache went home (its freed blocks count as live until then). */
export function liveAfterFlush(heap: Heap): number {
  heap.flushCache();
  return heap.stats().liveBytes;
}

/** What `fn` throws: a HeapError's code, else the error's class name ('none' when it returns). */
export function thrown(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof HeapError) return err.code;
    return (err as Error).constructor.name;
  }
  return 'none';
}

/** Whether `n` bytes of `u8` from `at` are `bytes`. */
function sameBytes(u8: Uint8Array, at: number, bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (u8[at + i] !== bytes[i]) return false;
  return true;
}

const madeRuns = new Map<string, string[]>();

/** Strings over every plane: runs of `step`-spaced code points (the surrogate range as lone surrogates); made once. */
export function codePointRuns(runLength: number, step: number): string[] {
  const key = `${runLength}/${step}`;
  const made = madeRuns.get(key);
  if (made !== undefined) return made;
  const runs: string[] = [];
  madeRuns.set(key, runs);
  let run = '';
  let n = 0;
  for (let cp = 0; cp <= 0x10ffff; cp += step) {
    run += cp >= 0xd800 && cp <= 0xdfff ? String.fromCharCode(cp) : String.fromCodePoint(cp);
    if (++n === runLength) {
      runs.push(run);
      run = '';
      n = 0;
    }
  }
  if (run !== '') runs.push(run);
  return runs;
}

/** Registers the view and string cases for `backend` (its heaps made by `create`). */
export function viewStringCases(t: Suite, backend: string, create: (o: HeapOptions) => Heap): void {
  t.it('every view type: aligned block start, same memory as the heap views, viewAs, pointerOf, realloc keeps, free(view)', () => {
    const heap = create({ maxBytes: 2 ** 30 });
    t.expect(heap.backend).toBe(backend);
    for (const ctor of viewTypes) {
      // 3 MiB: an oversized block (a mapping on the arena); two 8-byte types only, the loops over it are slow.
      const lengths = [0, 1, 3, 100, 5000, ...(ctor === Float64Array || ctor === BigUint64Array ? [(3 * MiB) / 8] : [])];
      for (const length of lengths) {
        const v = heap.mallocAs(ctor, length);
        t.expect(v instanceof ctor).toBe(true);
        t.expect(v.length).toBe(length);
        t.expect(v.byteOffset % 8).toBe(0); // every block start suits every element type
        t.expect(v.buffer === heap.u8.buffer).toBe(true);
        t.expect(heap.pointerOf(v)).toBe(v.byteOffset);
        fill(v);
        const again = heap.viewAs(ctor, v.byteOffset, length);
        t.expect(matches(again)).toBe(true);
        if (length > 1) t.expect(new ctor(heap.u8.buffer as SharedArrayBuffer, v.byteOffset, 2)[1]).toBe(valueAt(v, 1)); // through the heap's own buffer
        const grown = heap.reallocAs(v, length * 2 + 40);
        t.expect(grown instanceof ctor).toBe(true);
        t.expect(grown.length).toBe(length * 2 + 40);
        t.expect(matches(grown, length)).toBe(true);
        const shrunk = heap.reallocAs(grown, Math.floor(length / 2));
        t.expect(matches(shrunk)).toBe(true);
        heap.free(shrunk);
      }
    }
    heap.check();
    t.expect(liveAfterFlush(heap)).toBe(0);
  });

  t.it('callocAs zeroes what a freed block held; a zero-length view is a minimal block, freed by free(view)', () => {
    const heap = create({ maxBytes: 2 ** 30 });
    for (const ctor of viewTypes) {
      const dirty = heap.mallocAs(Uint8Array, 4096);
      dirty.fill(0xa5);
      heap.free(dirty);
      const v = heap.callocAs(ctor, 4096 / ctor.BYTES_PER_ELEMENT);
      let zero = true;
      for (let i = 0; i < v.length; i++) if ((v as unknown as (number | bigint)[])[i] != 0) zero = false;
      t.expect(zero).toBe(true);
      heap.free(v);
      const empty = heap.mallocAs(ctor, 0);
      t.expect(empty.length).toBe(0);
      t.expect(heap.usableSize(empty.byteOffset)).toBeGreaterThan(0);
      heap.free(empty);
    }
    heap.check();
    t.expect(liveAfterFlush(heap)).toBe(0);
  });

  t.it('bad view inputs: each refused with its error, before anything changes', () => {
    const heap = create({ maxBytes: 256 * MiB });
    const other = create({ maxBytes: 256 * MiB });
    const elsewhere = other.malloc(64);
    const v = heap.mallocAs(Float64Array, 8);
    const big = heap.mallocAs(Uint8Array, 3 * MiB);
    const p = v.byteOffset;
    const usable = heap.usableSize(p);
    const refusals: [string, () => unknown, string | string[]][] = [
      ['mallocAs of a non-constructor', () => heap.mallocAs({} as HeapViewConstructor, 1), 'TypeError'],
      ['mallocAs of Array', () => heap.mallocAs(Array as unknown as HeapViewConstructor, 1), 'TypeError'],
      ['mallocAs of DataView', () => heap.mallocAs(DataView as unknown as HeapViewConstructor, 1), 'TypeError'],
      ['mallocAs of a subclass', () => heap.mallocAs(class extends Float64Array {} as HeapViewConstructor, 1), 'TypeError'],
      ['mallocAs length -1', () => heap.mallocAs(Float64Array, -1), 'RangeError'],
      ['mallocAs length 1.5', () => heap.mallocAs(Float64Array, 1.5), 'RangeError'],
      ['mallocAs length NaN', () => heap.mallocAs(Float64Array, NaN), 'RangeError'],
      ['mallocAs length "4"', () => heap.mallocAs(Float64Array, '4' as unknown as number), 'RangeError'],
      ['mallocAs over maxBytes', () => heap.mallocAs(Float64Array, 32 * MiB + 1), 'RangeError'],
      ['callocAs over maxBytes', () => heap.callocAs(BigInt64Array, 2 ** 40), 'RangeError'],
      ['free of a plain object', () => heap.free({} as unknown as Float64Array), 'TypeError'],
      ['free of a view of another buffer', () => heap.free(new Float64Array(new SharedArrayBuffer(4096), p % 4096, 1)), 'BAD_POINTER'],
      ['free of a view of a non-shared buffer', () => heap.free(new Float64Array(4)), 'BAD_POINTER'],
      ['free of a view of another heap', () => heap.free(new Float64Array(other.u8.buffer, elsewhere, 1)), 'BAD_POINTER'],
      ['free of a view at offset 0', () => heap.free(new Uint8Array(heap.u8.buffer, 0, 8)), 'BAD_POINTER'],
      ['free of a subarray inside a block', () => heap.free(v.subarray(1)), ['BAD_POINTER', 'MISALIGNED']],
      ['free of a subarray 4 KiB into a large block', () => heap.free(big.subarray(4096)), ['BAD_POINTER', 'MISALIGNED']],
      ['free of a view inside the heap header', () => heap.free(new Uint8Array(heap.u8.buffer, 64, 8)), ['BAD_POINTER', 'MISALIGNED']],
      ['reallocAs of a view of another buffer', () => heap.reallocAs(new Float64Array(new SharedArrayBuffer(64), 8, 1), 4), 'BAD_POINTER'],
      ['reallocAs of a subarray', () => heap.reallocAs(v.subarray(2), 4), ['BAD_POINTER', 'MISALIGNED']],
      ['reallocAs to length -1', () => heap.reallocAs(v, -1), 'RangeError'],
      ['reallocAs of a number', () => heap.reallocAs(p as unknown as Float64Array, 4), 'TypeError'],
      ['viewAs of pointer 0', () => heap.viewAs(Float64Array, 0, 1), 'BAD_POINTER'],
      ['viewAs of a string pointer', () => heap.viewAs(Float64Array, String(p) as unknown as number, 1), 'BAD_POINTER'],
      ['viewAs misaligned for the type', () => heap.viewAs(Float64Array, p + 4, 1), 'MISALIGNED'],
      ['viewAs inside a block', () => heap.viewAs(Float64Array, p + 8, 1), 'BAD_POINTER'],
      ['viewAs past the block', () => heap.viewAs(Float64Array, p, usable / 8 + 1), 'RangeError'],
      ['viewAs length -1', () => heap.viewAs(Float64Array, p, -1), 'RangeError'],
      ['viewAs of a non-constructor', () => heap.viewAs(Object as unknown as HeapViewConstructor, p, 1), 'TypeError'],
      ['viewAs beyond maxBytes', () => heap.viewAs(Float64Array, 2 ** 31, 1), 'BAD_POINTER'],
      ['pointerOf a view of another heap', () => heap.pointerOf(new Float64Array(other.u8.buffer, elsewhere, 1)), 'BAD_POINTER'],
      ['pointerOf a subarray', () => heap.pointerOf(v.subarray(1)), 'BAD_POINTER'],
    ];
    for (const [name, fn, expected] of refusals) {
      const got = thrown(fn);
      const ok = Array.isArray(expected) ? expected.includes(got) : got === expected;
      t.expect(`${name}: ${ok ? 'refused as expected' : got}`).toBe(`${name}: refused as expected`);
      t.expect(heap.usableSize(p)).toBe(usable); // the block is still live
    }
    heap.check();
    const freed = heap.mallocAs(Float64Array, 4);
    heap.free(freed);
    t.expect(['DOUBLE_FREE', 'BAD_POINTER'].includes(thrown(() => heap.free(freed)))).toBe(true);
    t.expect(thrown(() => heap.viewAs(Float64Array, freed.byteOffset, 1))).toBe('BAD_POINTER');
    t.expect(thrown(() => heap.pointerOf(freed))).toBe('BAD_POINTER');
    heap.free(v);
    heap.free(big);
    heap.check();
    t.expect(liveAfterFlush(heap)).toBe(0);
    heap.close();
    t.expect(thrown(() => heap.mallocAs(Float64Array, 1))).toBe('DETACHED');
    t.expect(thrown(() => heap.mallocString('x'))).toBe('DETACHED');
    t.expect(thrown(() => heap.readString(p))).toBe('DETACHED');
    other.close();
  });

  t.it('strings: every code point range round-trips exactly (TextEncoder bytes, lone surrogates as U+FFFD)', () => {
    const heap = create({ maxBytes: 2 ** 30 });
    const encoder = new TextEncoder();
    const decoder = new TextDecoder();
    const samples = [
      '',
      'a',
      'plain ascii of a short length',
      // Either side of each path's bound: 12 bytes read by hand, 64 units encoded by hand, 192 counted first.
      ...[11, 12, 13, 63, 64, 65, 191, 192, 193].flatMap((n) => ['x'.repeat(n), 'é'.repeat(n >> 1), 'x'.repeat(n - 1) + '\ud800']),
      'mixed é€😀 '.repeat(10),
      'ascii '.repeat(200),
      'é',
      '€',
      '😀',
      'né€😀 mixed',
      '\ud800', // lone high surrogate
      '\udc00', // lone low surrogate
      'a\ud83d', // a high surrogate at the end
      '\ud83d\ud83d\ude00', // a high surrogate, then a pair
      '\ude00\ud83d', // a pair in the wrong order
      '\u0000\u007f\u0080\u07ff\u0800\uffff',
      'mixed é€😀 '.repeat(100),
      ...codePointRuns(1, 0x1111), // one code point each, every plane
      ...codePointRuns(16, 1), // every code point, in runs the hand-written encoder takes (typed-views.test.ts: its decoder)
      ...codePointRuns(50, 0x61), // runs between 64 and 192 units, across the planes (counted, then encodeInto)
      ...codePointRuns(4096, 1), // every code point, in long runs (the encoder's path)
    ];
    for (const s of samples) {
      const bytes = encoder.encode(s);
      t.expect(heap.stringBytes(s)).toBe(bytes.length);
      const p = heap.mallocString(s);
      t.expect(heap.u32[p >>> 2]).toBe(bytes.length);
      if (!sameBytes(heap.u8, p + 4, bytes)) t.expect(`bytes of ${JSON.stringify(s.slice(0, 20))}`).toBe('as TextEncoder makes them');
      const back = heap.readString(p);
      if (back !== decoder.decode(bytes)) t.expect(`read back ${JSON.stringify(s.slice(0, 20))}`).toBe('the string written');
      heap.free(p);
    }
    heap.check();
    t.expect(liveAfterFlush(heap)).toBe(0);
  });

  t.it('writeString and readString: records inside a block, bad pointers and capacities refused', () => {
    const heap = create({ maxBytes: 256 * MiB });
    const block = heap.malloc(256);
    heap.u8.fill(0x55, block, block + 256);
    t.expect(heap.writeString('héllo', block + 8, 16)).toBe(10);
    t.expect(heap.readString(block + 8)).toBe('héllo');
    t.expect(heap.writeString('', block + 32, 4)).toBe(4);
    t.expect(heap.readString(block + 32)).toBe('');
    // Not written when it does not fit: the bytes stay as they were.
    t.expect(thrown(() => heap.writeString('héllo', block + 64, 9))).toBe('RangeError');
    t.expect(heap.u32[(block + 64) >>> 2]).toBe(0x55555555);
    t.expect(thrown(() => heap.writeString('x', block + 64, -1))).toBe('RangeError');
    t.expect(thrown(() => heap.writeString(5 as unknown as string, block + 64, 16))).toBe('TypeError');
    t.expect(thrown(() => heap.mallocString(null as unknown as string))).toBe('TypeError');
    t.expect(thrown(() => heap.stringBytes(undefined as unknown as string))).toBe('TypeError');
    t.expect(thrown(() => heap.writeString('x', block + 2, 16))).toBe('BAD_POINTER');
    t.expect(thrown(() => heap.writeString('x', 0, 16))).toBe('BAD_POINTER');
    t.expect(thrown(() => heap.writeString('x', 8, 16))).toBe('BAD_POINTER'); // the space header
    t.expect(thrown(() => heap.writeString('x', 2 ** 31, 16))).toBe('BAD_POINTER');
    t.expect(thrown(() => heap.readString(0))).toBe('BAD_POINTER');
    t.expect(thrown(() => heap.readString(block + 1))).toBe('BAD_POINTER');
    t.expect(thrown(() => heap.readString(-4))).toBe('BAD_POINTER');
    t.expect(thrown(() => heap.readString(2 ** 40))).toBe('BAD_POINTER');
    // Ill-formed UTF-8 in a record (written by hand): read as TextDecoder reads it, short (the hand-written path
    // gives way) and long.
    const decoder = new TextDecoder();
    const illFormed = [[0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xff], [0x61, 0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xc3]];
    for (const bad of illFormed) {
      for (const pad of [0, 40]) {
        const bytes = [...Array.from({ length: pad }, () => 0x62), ...bad, 0x63];
        heap.u32[(block + 64) >>> 2] = bytes.length;
        heap.u8.set(bytes, block + 68);
        t.expect(heap.readString(block + 64)).toBe(decoder.decode(new Uint8Array(bytes)));
      }
    }
    heap.u32[(block + 128) >>> 2] = 0xfffffff0; // a length no record has
    t.expect(thrown(() => heap.readString(block + 128))).toBe('CORRUPTION');
    heap.free(block);
    heap.check();
    t.expect(liveAfterFlush(heap)).toBe(0);
  });
}
