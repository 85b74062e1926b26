// use=pooltrack and use=checked, on every backend: the trace replays, the shadow state catches misuse.
import { describe, expect, it } from 'vitest';
import { HeapError } from '@paddock/platform';
import { attachClassicHeap, createClassicHeap } from '../src/classic-heap.js';
import { attachGlobalHeap, createGlobalHeap } from '../src/global-heap.js';
import { attachArenaHeap, createArenaHeap } from '../src/heap.js';
import { shadowFor, withChecks, withTrace, type TraceRecord } from '../src/instrument.js';
import type { Heap, HeapHandle } from '../src/types.js';

const backends: [string, () => Heap, (h: HeapHandle) => Heap][] = [
  ['pool_arena', () => createArenaHeap({ maxBytes: 1 << 30 }), (h) => attachArenaHeap(h)],
  ['pool_classic', () => createClassicHeap({ maxBytes: 1 << 30 }), (h) => attachClassicHeap(h)],
  ['pool_global', () => createGlobalHeap({ maxBytes: 1 << 30 }), (h) => attachGlobalHeap(h)],
];

describe.each(backends)('instrumentation on %s', (_name, create, attach) => {
  it('pooltrack records every call in order, and the trace replays on a fresh heap', () => {
    const heap = withTrace(create());
    const a = heap.malloc(100);
    const b = heap.calloc(4, 8);
    const c = heap.realloc(a, 5000);
    heap.free(b);
    heap.free(c);
    const trace = JSON.parse(heap.trace()) as TraceRecord[];
    expect(trace.map((r) => r.op)).toEqual(['malloc', 'calloc', 'realloc', 'free', 'free']);
    expect(trace[2]).toMatchObject({ op: 'realloc', from: a, ptr: c, size: 5000 });
    // Replay: map recorded pointers to the fresh heap's, and check every free finds its block.
    const fresh = create();
    const map = new Map<number, number>();
    for (const r of trace) {
      if (r.op === 'malloc') map.set(r.ptr, fresh.malloc(r.size));
      else if (r.op === 'calloc') map.set(r.ptr, fresh.calloc(1, r.size));
      else if (r.op === 'realloc') map.set(r.ptr, fresh.realloc(map.get(r.from!)!, r.size));
      else fresh.free(map.get(r.ptr)!);
    }
    fresh.check();
  });

  it('checked catches a double free, a free of a pointer never handed out, and a write after free', () => {
    const base = create();
    const shadow = shadowFor(base.space.maxBytes);
    const heap = withChecks(base, shadow);
    const other = withChecks(attach(base.handle), shadow); // a second agent shares the shadow table
    const p = heap.malloc(64);
    const q = heap.malloc(64);
    other.free(q); // freed by another agent: fine, the shadow is shared
    heap.free(p);
    const e1 = (() => {
      try {
        other.free(p);
      } catch (e) {
        return e as HeapError;
      }
    })();
    expect(e1?.code).toBe('DOUBLE_FREE');
    expect(() => heap.free(p + 64 * 1024)).toThrow(HeapError);
    const r = heap.malloc(200);
    heap.free(r);
    heap.u8[r + 40] = 1; // a write after free
    let caught: HeapError | undefined;
    for (let i = 0; i < 4 && !caught; i++) {
      try {
        heap.malloc(200);
      } catch (e) {
        caught = e as HeapError;
      }
    }
    expect(caught?.message).toMatch(/written at \+40 after its free/);
  });
});
