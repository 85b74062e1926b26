// The view getters: always current after another agent grows the buffer, and cheap when it has not.
import { describe, expect, it } from 'vitest';
import { attachArenaHeap as attachHeap, createArenaHeap as createHeap } from '../src/heap.js';

const MiB = 1 << 20;
const GiB = 1 << 30;

describe('heap views', () => {
  it("see another agent's growth at the next access; view is one DataView until then", () => {
    const heap = createHeap({ maxBytes: GiB });
    const other = attachHeap(heap.handle);
    const first = heap.view;
    expect(heap.view).toBe(first); // no DataView made per access
    const before = heap.u8.length;
    const p = other.malloc(64 * MiB); // an oversized mapping: the other agent grows the buffer
    const last = p + 64 * MiB - 8;
    other.f64[last >>> 3] = 2.5;
    expect(heap.u8.length).toBeGreaterThan(before);
    expect(heap.u8.length).toBeGreaterThanOrEqual(last + 8);
    expect(heap.f64[last >>> 3]).toBe(2.5);
    expect(heap.i32.length).toBe(heap.u8.length / 4);
    expect(heap.u32.length).toBe(heap.u8.length / 4);
    const grown = heap.view;
    expect(grown).not.toBe(first);
    expect(grown.byteLength).toBe(heap.u8.length);
    expect(grown.getFloat64(last, true)).toBe(2.5);
    expect(heap.view).toBe(grown);
    other.free(p);
    heap.check();
  });
});
