// The stream's encoding: a snapshot survives it as it survives a structured clone (typed arrays included).
import { describe, expect, it } from 'vitest';
import { createHeap } from '@paddock/allocator';
import { decodeSnapshot, encodeSnapshot } from '../src/codec.js';

describe('the snapshot stream encoding', () => {
  it('decodes to the snapshot it encoded, unit map included', () => {
    const heap = createHeap({ maxBytes: 256 << 20 });
    const blocks = Array.from({ length: 500 }, (_, i) => heap.malloc(32 << i % 12));
    const s = heap.snapshot();
    const back = decodeSnapshot(encodeSnapshot(s));
    expect(back).toEqual(structuredClone(s));
    expect(back.arena!.unitLive).toBeInstanceOf(Uint32Array);
    expect(back.arena!.unitSpan).toBeInstanceOf(Uint16Array);
    blocks.forEach((p) => heap.free(p));
    heap.close();
  });
});
