// Typed views and strings on the heap (src/views.ts, src/strings.ts), every backend: the shared cases
// (cases/views-strings.ts, which the browser suite also runs), views across buffer growth on each backing, and
// views and strings made in one worker and read and freed in another, four real worker_threads at once.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { HeapError } from '@paddock/platform';
import { attachClassicHeap, createClassicHeap } from '../src/classic-heap.js';
import { attachGlobalHeap, createGlobalHeap } from '../src/global-heap.js';
import { attachArenaHeap, createArenaHeap } from '../src/heap.js';
import { shadowFor, withChecks, withTrace, type TraceRecord } from '../src/instrument.js';
import type { Heap, HeapHandle, HeapOptions } from '../src/types.js';
import { decodeUtf8 } from '../src/strings.js';
import { codePointRuns, liveAfterFlush, viewStringCases } from './cases/views-strings.js';
import { nextMessage } from './workers.js';

const MiB = 1 << 20;

const backends: [string, (o: HeapOptions) => Heap, (h: HeapHandle) => Heap][] = [
  ['pool_arena', (o) => createArenaHeap(o), (h) => attachArenaHeap(h)],
  ['pool_classic', (o) => createClassicHeap(o), (h) => attachClassicHeap(h)],
  ['pool_global', (o) => createGlobalHeap(o), (h) => attachGlobalHeap(h)],
];

describe('the UTF-8 decoder', () => {
  it('decodes every code point as TextDecoder does, in records short enough for the hand-written path', () => {
    const u8 = new Uint8Array(new SharedArrayBuffer(64));
    const encoder = new TextEncoder();
    const decoder = new TextDecoder();
    let wrong = 0;
    for (const s of codePointRuns(3, 1)) {
      const n = encoder.encodeInto(s, u8.subarray(8)).written;
      if (decodeUtf8(u8, 8, n) !== decoder.decode(u8.slice(8, 8 + n))) wrong++;
    }
    expect(wrong).toBe(0);
  });
});

describe.each(backends)('views and strings: %s', (backend, create, attach) => {
  viewStringCases({ it, expect }, backend, create);

  it.each(['growable', 'wasm', 'fixed'] as const)('views made before the buffer grows stay valid (%s backing)', (backing) => {
    const heap = create({ maxBytes: 256 * MiB, backing });
    const other = attach(heap.handle);
    const v = heap.mallocAs(Float64Array, 16);
    for (let i = 0; i < 16; i++) v[i] = i + 0.5;
    const s = heap.mallocString('before the growth: é€😀');
    const before = v.buffer;
    const beforeBytes = before.byteLength;
    // Another agent grows the buffer (a 64 MiB block, its last byte touched), then this one.
    const far = other.mallocAs(Uint8Array, 64 * MiB);
    far[far.length - 1] = 1;
    const near = heap.mallocAs(Uint8Array, 32 * MiB);
    near[near.length - 1] = 2;
    const now = heap.u8.buffer;
    if (backing === 'fixed') {
      expect(now).toBe(before); // the whole buffer from the start: nothing grows
      expect(now.byteLength).toBe(beforeBytes);
    } else {
      expect(now.byteLength).toBeGreaterThan(beforeBytes);
    }
    if (backing === 'growable') {
      expect(now).toBe(before); // one growable SharedArrayBuffer: it grew, the fixed-length view kept its length
      expect(before.byteLength).toBe(now.byteLength);
    }
    if (backing === 'wasm') {
      expect(now).not.toBe(before); // memory.grow replaced the buffer object; the old one keeps its length
      expect(before.byteLength).toBe(beforeBytes);
    }
    expect(v.length).toBe(16);
    expect(Array.from(v)).toEqual(Array.from({ length: 16 }, (_, i) => i + 0.5));
    // The old view and the new buffer are the same memory, both ways.
    v[3] = 42;
    expect(heap.f64[(v.byteOffset >>> 3) + 3]).toBe(42);
    heap.f64[(v.byteOffset >>> 3) + 5] = -7;
    expect(v[5]).toBe(-7);
    expect(other.viewAs(Float64Array, v.byteOffset, 16)[3]).toBe(42);
    expect(heap.readString(s)).toBe('before the growth: é€😀');
    // The old buffer is this heap's memory: pointerOf, reallocAs and free take views over it.
    expect(heap.pointerOf(v)).toBe(v.byteOffset);
    const byHand = new Float64Array(before, v.byteOffset, 4);
    expect(heap.pointerOf(byHand)).toBe(v.byteOffset);
    const moved = heap.reallocAs(v, 1000);
    expect(moved[3]).toBe(42);
    expect(moved.buffer).toBe(heap.u8.buffer);
    other.free(moved);
    heap.free(far);
    other.free(near);
    heap.free(s);
    heap.check();
    other.close(); // sends home what it freed of this agent's blocks
    heap.drain();
    heap.check();
    expect(liveAfterFlush(heap)).toBe(0);
    heap.close();
  });

  it('the instrumented builds see views as their blocks: traced, and checked (a freed view refused as a double free)', () => {
    const traced = withTrace(create({ maxBytes: 256 * MiB }));
    const v = traced.mallocAs(Float64Array, 4);
    const s = traced.mallocString('traced');
    traced.free(v);
    traced.free(s);
    const ops = (JSON.parse(traced.trace()) as TraceRecord[]).map((r) => `${r.op} ${r.ptr}`);
    expect(ops).toEqual([`malloc ${v.byteOffset}`, `malloc ${s}`, `free ${v.byteOffset}`, `free ${s}`]);
    const base = create({ maxBytes: 256 * MiB });
    const checked = withChecks(base, shadowFor(base.space.maxBytes));
    const w = checked.callocAs(Int32Array, 16);
    w[15] = 1;
    checked.free(w);
    expect(() => checked.free(w)).toThrow(HeapError);
    expect(() => checked.free(new Int32Array(new SharedArrayBuffer(64), 8, 1))).toThrow(HeapError);
    checked.check();
  });

  it.each(['growable', 'wasm'] as const)('views and strings made in one worker are read and freed in another: 4 workers at once, none lost nor doubled (%s backing)', async (backing) => {
    // On a wasm memory every grow replaces the buffer object: views made before it arrive over older buffers.
    const heap = create({ maxBytes: 1 << 30, backing });
    const count = 4;
    const rounds = 300;
    const condition = `--conditions=paddock-${backend.replace('_', '-')}`;
    const workers = Array.from(
      { length: count },
      (_, index) => new Worker(new URL('./workers/views-ring.mjs', import.meta.url), { workerData: { handle: heap.handle, index, count, rounds }, execArgv: [condition] }),
    );
    const exited = workers.map((w) => new Promise((resolve) => w.once('exit', resolve)));
    const done = workers.map((w) => nextMessage<{ kind: string; received: string[]; errors: string[]; backend: string }>(w, (m) => m.kind === 'done'));
    // Each item goes from its maker to the next worker; the view is structured-cloned on the way (twice).
    for (const [i, w] of workers.entries()) {
      w.on('message', (m: { kind: string }) => {
        if (m.kind === 'item') workers[(i + 1) % count]!.postMessage(m);
        if (m.kind === 'sent') workers[(i + 1) % count]!.postMessage({ kind: 'last' });
      });
    }
    for (const w of workers) w.postMessage({ kind: 'go' });
    const results = await Promise.all(done);
    const seen = new Set<string>();
    for (const [i, r] of results.entries()) {
      expect(r.backend).toBe(backend);
      expect(r.errors).toEqual([]);
      expect(r.received.length).toBe(rounds);
      for (const key of r.received) {
        expect(key.startsWith(`${(i + count - 1) % count}:`)).toBe(true);
        expect(seen.has(key)).toBe(false);
        seen.add(key);
      }
    }
    expect(seen.size).toBe(count * rounds);
    await Promise.all(exited); // each left the heap as its thread ended
    heap.drain();
    heap.check();
    expect(liveAfterFlush(heap)).toBe(0); // every view and string was freed, by the agent it was sent to
    heap.close();
  });
});
