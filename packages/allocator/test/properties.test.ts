// Property-based tests (fast-check) against a reference model of malloc/free/realloc/calloc sequences, on
// every backend: no two live blocks overlap, contents survive realloc (up to the smaller size), calloc memory
// is zero, usable size is at least the request. A failing case shrinks to a short sequence and prints its
// seed; replay it with `fc.assert(..., { seed, path })`.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createArenaHeap } from '../src/heap.js';
import { createClassicHeap } from '../src/classic-heap.js';
import { createGlobalHeap } from '../src/global-heap.js';
import type { Heap } from '../src/types.js';

const MiB = 1 << 20;

type Cmd =
  | { op: 'malloc'; size: number }
  | { op: 'calloc'; count: number; size: number }
  | { op: 'realloc'; pick: number; size: number }
  | { op: 'free'; pick: number };

/** Sizes: mostly small, some up to 1 MiB, some large, a few oversized (above the heap's largeMax). */
function sizeArb(largeMax: number): fc.Arbitrary<number> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.integer({ min: 0, max: 600 }) },
    { weight: 4, arbitrary: fc.integer({ min: 601, max: 70_000 }) },
    { weight: 2, arbitrary: fc.integer({ min: 70_001, max: MiB + 1 }) },
    { weight: 1, arbitrary: fc.integer({ min: MiB + 1, max: Math.min(largeMax, 3 * MiB) }) },
    // Oversized where the backend has such a tier (the classic pool serves everything up to the heap).
    { weight: 1, arbitrary: largeMax < 64 * MiB ? fc.integer({ min: largeMax + 1, max: largeMax + 3 * MiB }) : fc.integer({ min: 3 * MiB, max: 5 * MiB }) },
  );
}

function cmdArb(largeMax: number): fc.Arbitrary<Cmd> {
  const size = sizeArb(largeMax);
  const pick = fc.nat({ max: 1000 });
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ op: fc.constant('malloc' as const), size }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('calloc' as const), count: fc.integer({ min: 0, max: 5 }), size: fc.integer({ min: 0, max: 50_000 }) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('realloc' as const), pick, size }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('free' as const), pick }) },
  );
}

/** Offsets a block's pattern covers: the first and last 40 bytes and one every 8 KiB between. */
function offsets(size: number): number[] {
  const os: number[] = [];
  for (let o = 0; o < Math.min(size, 40); o++) os.push(o);
  for (let o = 8192; o < size - 40; o += 8192) os.push(o);
  for (let o = Math.max(40, size - 40); o < size; o++) os.push(o);
  return os;
}
const byteOf = (tag: number, o: number) => (Math.imul(tag, 0x9e3779b1) >>> ((o & 3) << 3) ^ (o >>> 2)) & 255;

interface Block {
  p: number;
  size: number;
  tag: number;
}

/** Runs one command sequence against `heap` and the model; throws on the first broken property. */
function runSequence(heap: Heap, cmds: Cmd[]): void {
  const live: Block[] = [];
  let tag = 1;
  const fill = (b: Block) => {
    const u8 = heap.u8;
    for (const o of offsets(b.size)) u8[b.p + o] = byteOf(b.tag, o);
  };
  const intact = (b: Block, upTo = b.size): boolean => {
    const u8 = heap.u8;
    return offsets(b.size).every((o) => o >= upTo || u8[b.p + o] === byteOf(b.tag, o));
  };
  const place = (b: Block) => {
    expect(b.p).toBeGreaterThan(0);
    expect(heap.usableSize(b.p)).toBeGreaterThanOrEqual(b.size);
    const end = b.p + Math.max(1, b.size);
    for (const o of live) {
      const oEnd = o.p + Math.max(1, o.size);
      if (b.p < oEnd && o.p < end) throw new Error(`block ${b.p}+${b.size} overlaps live block ${o.p}+${o.size}`);
    }
    live.push(b);
  };
  for (const c of cmds) {
    if (c.op === 'malloc') {
      const b = { p: heap.malloc(c.size), size: c.size, tag: tag++ };
      place(b);
      fill(b);
    } else if (c.op === 'calloc') {
      const p = heap.calloc(c.count, c.size);
      const b = { p, size: c.count * c.size, tag: tag++ };
      const u8 = heap.u8;
      for (let o = 0; o < b.size; o += o < 4096 ? 1 : 61) if (u8[p + o] !== 0) throw new Error(`calloc(${c.count}, ${c.size}) byte ${o} is not zero`);
      place(b);
      fill(b);
    } else if (live.length === 0) {
      continue;
    } else if (c.op === 'realloc') {
      const [old] = live.splice(c.pick % live.length, 1);
      const q = heap.realloc(old!.p, c.size);
      const moved = { p: q, size: old!.size, tag: old!.tag };
      if (!intact(moved, Math.min(old!.size, c.size))) throw new Error(`realloc ${old!.p} (${old!.size} B) -> ${q} (${c.size} B) lost contents`);
      const b = { p: q, size: c.size, tag: tag++ };
      place(b);
      fill(b);
    } else {
      const [b] = live.splice(c.pick % live.length, 1);
      if (!intact(b!)) throw new Error(`block ${b!.p} lost its contents before free`);
      heap.free(b!.p);
    }
    for (const b of live) if (!intact(b)) throw new Error(`live block ${b.p}+${b.size} was overwritten`);
  }
  for (const b of live) heap.free(b.p);
  heap.flushCache();
  heap.check();
  expect(heap.stats().liveBytes).toBe(0);
}

const backends: [string, () => Heap][] = [
  ['pool_arena', () => createArenaHeap({ maxBytes: 1 << 30 })],
  ['pool_arena, small geometry and rung 1', () => createArenaHeap({ maxBytes: 256 * MiB, profile: 1 })],
  ['pool_classic', () => createClassicHeap({ maxBytes: 1 << 30 })],
  ['pool_global', () => createGlobalHeap({ maxBytes: 1 << 30 })],
];

describe.each(backends)('properties of malloc/calloc/realloc/free on %s', (_name, make) => {
  it('no overlap, contents survive realloc, calloc is zero, usable size covers the request', () => {
    const largeMax = make().largeMax;
    fc.assert(
      fc.property(fc.array(cmdArb(largeMax), { minLength: 1, maxLength: 40 }), (cmds) => {
        runSequence(make(), cmds);
      }),
      { numRuns: 150 },
    );
  });
});
