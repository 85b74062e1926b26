/**
 * The `views` group's loops (each run through a private copy, `recompile`, so the lanes do not share type
 * feedback): a pair through a typed view against the pair through a pointer with the view made by hand, and a
 * string stored in the heap and read back against `structuredClone` of the same string.
 */
import type { PaddockHeap } from '../peers/paddock-heap.js';

/** A heap as the view lanes use it. */
export type ViewHeap = Pick<PaddockHeap, 'malloc' | 'free' | 'u8' | 'mallocAs' | 'mallocString' | 'readString'>;

/** `mallocAs(Float64Array, 4)` + a write and a read of the view + `free(view)`, `pairs` times; returns a checksum. */
export function viewPairLoop(heap: ViewHeap, pairs: number): number {
  let acc = 0;
  for (let i = 0; i < pairs; i++) {
    const v = heap.mallocAs(Float64Array, 4);
    v[0] = i;
    acc += v[0];
    heap.free(v);
  }
  return acc;
}

/** `malloc(32)` + `new Float64Array(heap.u8.buffer, p, 4)` + the same write and read + `free(p)`, `pairs` times. */
export function pointerViewPairLoop(heap: ViewHeap, pairs: number): number {
  let acc = 0;
  for (let i = 0; i < pairs; i++) {
    const p = heap.malloc(32);
    const v = new Float64Array(heap.u8.buffer, p, 4);
    v[0] = i;
    acc += v[0];
    heap.free(p);
  }
  return acc;
}

/** `mallocString` + `readString` + `free` of each string of `strings` in turn, `ops` in all; returns the characters read. */
export function heapStringLoop(heap: ViewHeap, strings: readonly string[], ops: number): number {
  let chars = 0;
  const n = strings.length;
  for (let i = 0; i < ops; i++) {
    const p = heap.mallocString(strings[i % n]!);
    chars += heap.readString(p).length;
    heap.free(p);
  }
  return chars;
}

/** `structuredClone` of each string of `strings` in turn, `ops` in all; returns the characters cloned. */
export function cloneStringLoop(_heap: ViewHeap, strings: readonly string[], ops: number): number {
  let chars = 0;
  const n = strings.length;
  for (let i = 0; i < ops; i++) chars += (structuredClone(strings[i % n]!) as string).length;
  return chars;
}
