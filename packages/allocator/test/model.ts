// A model to check a heap against: seeded random operations (malloc, calloc, realloc, free, usableSize across
// every tier), each checked against an independent record of live memory: no two live blocks overlap,
// contents survive, calloc memory is zero, usable size covers the request.
import type { Heap } from '../src/index.js';
import { mulberry32Unit } from '../../../tools/test-utils/prng.mjs';

const MiB = 1 << 20;

/** Live blocks sorted by address, with the byte pattern each carries. */
class Record {
  starts: number[] = [];
  sizes = new Map<number, number>();
  tags = new Map<number, number>();

  add(p: number, size: number, tag: number): void {
    let lo = 0;
    let hi = this.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.starts[mid]! < p) lo = mid + 1;
      else hi = mid;
    }
    const prev = this.starts[lo - 1];
    const next = this.starts[lo];
    if (prev !== undefined && prev + Math.max(1, this.sizes.get(prev)!) > p) throw new Error(`block ${p}+${size} overlaps ${prev}`);
    if (next !== undefined && p + Math.max(1, size) > next) throw new Error(`block ${p}+${size} overlaps ${next}`);
    this.starts.splice(lo, 0, p);
    this.sizes.set(p, size);
    this.tags.set(p, tag);
  }

  remove(p: number): void {
    const i = this.starts.indexOf(p);
    this.starts.splice(i, 1);
    this.sizes.delete(p);
    this.tags.delete(p);
  }
}

/** Bytes a test writes and checks: the first and last 48 bytes and one every 64 KiB between. */
function sampled(size: number, visit: (offset: number) => void): void {
  for (let o = 0; o < Math.min(size, 48); o++) visit(o);
  for (let o = Math.max(48, size - 48); o < size; o++) visit(o);
  for (let o = 65536; o < size - 48; o += 65536) visit(o);
}

const byteOf = (tag: number, o: number) => (Math.imul(tag, 31) + o * 7) & 255;

function fill(heap: Heap, p: number, size: number, tag: number): void {
  const u8 = heap.u8;
  sampled(size, (o) => (u8[p + o] = byteOf(tag, o)));
}

function intact(heap: Heap, p: number, size: number, tag: number): boolean {
  const u8 = heap.u8;
  let ok = true;
  sampled(size, (o) => {
    if (u8[p + o] !== byteOf(tag, o)) ok = false;
  });
  return ok;
}

/** Sizes: 70% up to 2 KiB, 20% up to 1 MiB, 8.5% large (to `largeMax`), 1.5% oversized (up to 12 MiB more). */
function randomSize(rand: () => number, largeMax: number, oversized: boolean): number {
  const r = rand();
  if (r < 0.7) return Math.floor(rand() * 2048);
  if (r < 0.9) return 2048 + Math.floor(rand() * (MiB - 2048));
  if (r < 0.985 || !oversized) return MiB + 1 + Math.floor(rand() * (largeMax - MiB));
  return largeMax + 1 + Math.floor(rand() * 12 * MiB);
}

export function runRandomOps(
  heap: Heap,
  seed: number,
  ops: number,
  largeMax = Math.min(heap.largeMax, 8 * MiB - 32 * 1024),
  oversized = true,
): { mallocs: number; frees: number; reallocs: number; callocs: number } {
  const rand = mulberry32Unit(seed);
  const rec = new Record();
  const counts = { mallocs: 0, frees: 0, reallocs: 0, callocs: 0 };
  let tag = 1;
  const pick = () => rec.starts[Math.floor(rand() * rec.starts.length)]!;
  for (let i = 0; i < ops; i++) {
    const r = rand();
    const live = rec.starts.length;
    if (live > 0 && (r < 0.4 || live > 600)) {
      const p = pick();
      if (!intact(heap, p, rec.sizes.get(p)!, rec.tags.get(p)!)) throw new Error(`op ${i}: block ${p} lost its contents`);
      heap.free(p);
      rec.remove(p);
      counts.frees++;
    } else if (live > 0 && r < 0.5) {
      const p = pick();
      const old = rec.sizes.get(p)!;
      const t = rec.tags.get(p)!;
      const size = randomSize(rand, largeMax, oversized);
      const q = heap.realloc(p, size);
      rec.remove(p);
      const kept = Math.min(old, size);
      const u8 = heap.u8;
      sampled(old, (o) => {
        if (o < kept && u8[q + o] !== byteOf(t, o)) throw new Error(`op ${i}: realloc ${p}->${q} lost byte ${o}`);
      });
      rec.add(q, size, tag);
      fill(heap, q, size, tag++);
      counts.reallocs++;
    } else if (r < 0.55) {
      const size = randomSize(rand, largeMax, oversized);
      const count = 1 + Math.floor(rand() * 4);
      const per = Math.floor(size / count);
      const p = heap.calloc(count, per);
      const u8 = heap.u8;
      sampled(count * per, (o) => {
        if (u8[p + o] !== 0) throw new Error(`op ${i}: calloc memory at ${p}+${o} is not zero`);
      });
      rec.add(p, count * per, tag);
      fill(heap, p, count * per, tag++);
      counts.callocs++;
    } else {
      const size = randomSize(rand, largeMax, oversized);
      const p = heap.malloc(size);
      if (p === 0 || heap.usableSize(p) < size) throw new Error(`op ${i}: malloc(${size}) gave ${p}`);
      rec.add(p, size, tag);
      fill(heap, p, size, tag++);
      counts.mallocs++;
    }
  }
  for (const p of [...rec.starts]) {
    if (!intact(heap, p, rec.sizes.get(p)!, rec.tags.get(p)!)) throw new Error(`block ${p} lost its contents`);
    heap.free(p);
  }
  return counts;
}

