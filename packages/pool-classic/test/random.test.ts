// 100k seeded random operations (malloc, free, realloc, calloc) spread over three agents of one heap,
// checked against an independent record of live blocks: every result is checked against every live
// block for overlap, every block carries a pattern that is checked when it is freed or moved, and the
// heap's own figures must agree with the record.
import { expect, it } from 'vitest';
import { openAddressSpace } from '@paddock/platform';
import { ClassicPool, MAX_CLASS_SIZE, classIndex, classSize } from '../src/index.js';
import { checkPattern, fillPattern, rng } from './workers/pattern.mjs';
import { MiB, makePool } from './helpers.js';

interface Live {
  size: number; // bytes the pattern covers (the requested size)
  usable: number;
  seed: number;
}

/** Live blocks by address, plus their starts in sorted order for overlap checks. */
class Record {
  readonly blocks = new Map<number, Live>();
  readonly starts: number[] = [];

  private index(p: number): number {
    let lo = 0;
    let hi = this.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.starts[mid]! < p) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  add(p: number, live: Live): void {
    if (this.blocks.has(p)) throw new Error(`${p} handed out while live`);
    const i = this.index(p);
    const prev = i > 0 ? this.starts[i - 1]! : -1;
    if (prev >= 0 && prev + this.blocks.get(prev)!.usable > p) throw new Error(`${p} overlaps the live block at ${prev}`);
    const next = i < this.starts.length ? this.starts[i]! : -1;
    if (next >= 0 && p + live.usable > next) throw new Error(`${p} + ${live.usable} overlaps the live block at ${next}`);
    this.starts.splice(i, 0, p);
    this.blocks.set(p, live);
  }

  remove(p: number): Live {
    const live = this.blocks.get(p)!;
    this.blocks.delete(p);
    this.starts.splice(this.index(p), 1);
    return live;
  }
}

function expectedUsable(size: number): number {
  return size <= MAX_CLASS_SIZE ? classSize(classIndex(size)) : Math.ceil(size / 4096) * 4096;
}

it('100k seeded random operations over three agents agree with an independent record', () => {
  const { space, pool } = makePool();
  const agents = [pool, ClassicPool.open(openAddressSpace(space.handle)), ClassicPool.open(openAddressSpace(space.handle))];
  const random = rng(0x5eed);
  const record = new Record();
  let liveLarge = 0;
  let seedCounter = 1;

  const pickSize = (): number => {
    const r = random() % 1000;
    if (r < 700) return random() % 257;
    if (r < 930) return 257 + (random() % 16_128);
    if (r < 985 || liveLarge >= 6) return 16_385 + (random() % (MiB - 16_384));
    return MiB + 1 + (random() % (2 * MiB));
  };
  const place = (p: number, size: number, seed: number): void => {
    const usable = agents[0]!.usableSize(p);
    expect(usable).toBe(expectedUsable(size));
    record.add(p, { size, usable, seed });
    if (usable > MAX_CLASS_SIZE) liveLarge++;
    space.covers(p + size);
    fillPattern(space.u8, p, size, seed);
  };
  const take = (p: number): Live => {
    const live = record.remove(p);
    if (live.usable > MAX_CLASS_SIZE) liveLarge--;
    space.covers(p + live.size);
    const bad = checkPattern(space.u8, p, live.size, live.seed);
    if (bad >= 0) throw new Error(`block ${p} (${live.size} bytes) damaged at offset ${bad}`);
    return live;
  };
  const randomLive = (): number => record.starts[random() % record.starts.length]!;

  const OPS = 100_000;
  const counts = { malloc: 0, calloc: 0, free: 0, realloc: 0, kept: 0 };
  for (let op = 0; op < OPS; op++) {
    const agent = agents[random() % agents.length]!;
    const n = record.starts.length;
    const r = random() % 100;
    if (n < 64 || (n < 3000 && r < 45)) {
      const size = pickSize();
      if (r % 10 === 0) {
        const p = agent.calloc(1, size);
        space.covers(p + size);
        for (let i = 0; i < size; i += 97) if (space.u8[p + i] !== 0) throw new Error(`calloc(${size}) at ${p} not zero at ${i}`);
        place(p, size, seedCounter++);
        counts.calloc++;
      } else {
        place(agent.malloc(size), size, seedCounter++);
        counts.malloc++;
      }
    } else if (r < 85 || n >= 3000) {
      const p = randomLive();
      take(p);
      agent.free(p);
      counts.free++;
    } else {
      const p = randomLive();
      const old = record.blocks.get(p)!;
      const size = pickSize();
      const q = agent.realloc(p, size);
      const same = size <= MAX_CLASS_SIZE ? old.usable <= MAX_CLASS_SIZE && classIndex(size) === classIndex(old.usable) : Math.ceil(size / 4096) * 4096 === old.usable;
      expect(q === p).toBe(same);
      // The first min(old, new) bytes moved with the block: check them, then give it a fresh pattern.
      const live = record.remove(p);
      if (live.usable > MAX_CLASS_SIZE) liveLarge--;
      space.covers(q + Math.min(live.size, size));
      const keep = Math.min(live.size, size, 256);
      const bad = checkPattern(space.u8, q, keep, live.seed);
      if (bad >= 0) throw new Error(`realloc(${p}, ${size}) lost the contents at offset ${bad}`);
      place(q, size, seedCounter++);
      counts.realloc++;
      if (same) counts.kept++;
    }
    if (op % 25_000 === 24_999) {
      for (const a of agents) a.check();
      const stats = agents[1]!.stats();
      let liveBytes = 0;
      for (const l of record.blocks.values()) liveBytes += l.usable;
      expect(stats.liveBytes).toBe(liveBytes);
      const perClass = new Array(16).fill(0);
      for (const l of record.blocks.values()) if (l.usable <= MAX_CLASS_SIZE) perClass[classIndex(l.usable)]++;
      expect(stats.perClass.map((c) => c.live)).toEqual(perClass);
    }
  }
  expect(counts.malloc + counts.calloc).toBeGreaterThan(30_000);
  expect(counts.free).toBeGreaterThan(30_000);
  expect(counts.realloc).toBeGreaterThan(10_000);
  expect(counts.kept).toBeGreaterThan(100);
  // Free everything, each by a different agent than chance would pick, and check the heap is empty.
  let i = 0;
  for (const p of [...record.starts]) {
    take(p);
    agents[i++ % 3]!.free(p);
  }
  for (const a of agents) a.check();
  expect(pool.stats().liveBytes).toBe(0);
  expect(pool.stats().perClass.every((c) => c.live === 0)).toBe(true);
});
