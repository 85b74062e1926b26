// The address-space contract, run against every backing and both page-return modes.
import { describe, expect, it } from 'vitest';
import {
  GRANULE,
  HeapError,
  createAddressSpace,
  loadNativePageReturn,
  openAddressSpace,
  rss,
  type AddressSpace,
  type AddressSpaceOptions,
} from '../src/index.js';
import { makeGate, openGateWhenReady, runWorker } from './workers.js';

const MiB = 1 << 20;
const GiB = 1 << 30;
const nativeAvailable = loadNativePageReturn() !== null;

interface Variant {
  name: string;
  options: (maxBytes: number) => AddressSpaceOptions;
  native: boolean;
  /** A fixed SAB's data need not start on an OS page: each returned range may lose a page at its ends. */
  fixed?: boolean;
}

const variants: Variant[] = [
  { name: 'growable SAB, native page return', options: (maxBytes) => ({ maxBytes, pageReturn: 'native' }), native: true },
  { name: 'shared wasm memory, native page return', options: (maxBytes) => ({ maxBytes, backing: 'wasm', pageReturn: 'native' }), native: true },
  { name: 'fixed SAB, native page return', options: (maxBytes) => ({ maxBytes, backing: 'fixed', pageReturn: 'native' }), native: true, fixed: true },
  { name: 'growable SAB, fallback', options: (maxBytes) => ({ maxBytes, pageReturn: 'none' }), native: false },
  { name: 'shared wasm memory, fallback', options: (maxBytes) => ({ maxBytes, backing: 'wasm', pageReturn: 'none' }), native: false },
];

/** Bytes a native decommit of `size` whole pages must return: all of them, or for a fixed SAB all but one. */
function expectReturned(v: Variant, returned: number, size: number): void {
  if (!v.native) expect(returned).toBe(0);
  else if (v.fixed) {
    expect(returned).toBeGreaterThanOrEqual(size - 4096);
    expect(returned).toBeLessThanOrEqual(size);
  } else expect(returned).toBe(size);
}

function overlaps(a: number, an: number, b: number, bn: number): boolean {
  return a < b + bn && b < a + an;
}

it('the native addon builds and loads on this machine', () => {
  // The install script must not fail without it, but on the project's own machines it is expected.
  expect(nativeAvailable).toBe(true);
});

for (const v of variants) {
  describe.runIf(!v.native || nativeAvailable)(`address space: ${v.name}`, () => {
    const make = (maxBytes = GiB): AddressSpace => createAddressSpace(v.options(maxBytes));

    it('reports its page-return mode and never hands out address 0', () => {
      const s = make();
      expect(s.pageReturn).toBe(v.native ? 'native' : 'none');
      const a = s.reserve(GRANULE);
      expect(a).toBeGreaterThan(0);
      expect(s.isReserved(0, 1)).toBe(true);
    });

    it('reserve is aligned and disjoint', () => {
      const s = make();
      const got: [number, number][] = [];
      const sizes = [GRANULE, 3 * GRANULE, MiB, 8 * MiB, 100_000, 64 * MiB, 2 * MiB];
      const aligns = [GRANULE, GRANULE, MiB, 8 * MiB, GRANULE, 64 * MiB, 2 * MiB];
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < sizes.length; i++) {
          const a = s.reserve(sizes[i]!, aligns[i]!);
          expect(a % aligns[i]!).toBe(0);
          expect(a % GRANULE).toBe(0);
          const n = Math.ceil(sizes[i]! / GRANULE) * GRANULE;
          for (const [b, bn] of got) expect(overlaps(a, n, b, bn)).toBe(false);
          got.push([a, n]);
        }
      }
    });

    it('the whole reserved range is usable after commit', () => {
      const s = make();
      const size = 8 * MiB;
      const a = s.reserve(size, size);
      expect(s.isCommitted(a, size)).toBe(false);
      const before = s.committedBytes;
      s.commit(a, size);
      expect(s.isCommitted(a, size)).toBe(true);
      expect(s.committedBytes - before).toBe(size);
      expect(s.covers(a + size)).toBe(true);
      s.u8[a] = 7;
      s.u8[a + size - 1] = 9;
      s.i32[(a + size - 4) >>> 2] = 0x12345678;
      expect(s.u8[a]).toBe(7);
      expect(s.i32[(a + size - 4) >>> 2]).toBe(0x12345678);
      // Committing again counts nothing twice.
      s.commit(a, size);
      expect(s.committedBytes - before).toBe(size);
    });

    it('decommit then rewrite works', () => {
      const s = make();
      const size = 4 * MiB;
      const a = s.reserve(size);
      s.commit(a, size);
      s.u8.fill(0xab, a, a + size);
      expectReturned(v, s.decommit(a, size), size);
      expect(s.isCommitted(a, size)).toBe(false);
      if (v.native) expect(s.u8[a + 12345]).toBe(0);
      s.commit(a, size);
      s.u8.fill(0x5c, a, a + size);
      expect(s.u8[a]).toBe(0x5c);
      expect(s.u8[a + size - 1]).toBe(0x5c);
    });

    it('decommit and discard touch only whole pages inside the range', () => {
      const s = make();
      const a = s.reserve(MiB);
      s.commit(a, MiB);
      s.u8.fill(1, a, a + MiB);
      const before = s.committedBytes;
      // [a + 100, a + 3 * 4096 + 100) holds two whole pages: a+4096 .. a+3*4096.
      expectReturned(v, s.decommit(a + 100, 3 * 4096), 2 * 4096);
      expect(before - s.committedBytes).toBe(2 * 4096);
      expect(s.u8[a + 99]).toBe(1);
      expect(s.u8[a + 3 * 4096 + 100]).toBe(1);
      if (v.native && !v.fixed) {
        expect(s.u8[a + 4095]).toBe(1);
        expect(s.u8[a + 4096]).toBe(0);
        expect(s.u8[a + 3 * 4096 - 1]).toBe(0);
        expect(s.u8[a + 3 * 4096]).toBe(1);
      }
      expect(s.decommit(a + 10, 100)).toBe(0);
    });

    it('discard leaves the range committed and writable', () => {
      const s = make();
      const size = 2 * MiB;
      const a = s.reserve(size);
      s.commit(a, size);
      s.u8.fill(3, a, a + size);
      const committed = s.committedBytes;
      expectReturned(v, s.discard(a, size), size);
      expect(s.committedBytes).toBe(committed);
      expect(s.isCommitted(a, size)).toBe(true);
      s.u8[a + 5] = 42;
      expect(s.u8[a + 5]).toBe(42);
    });

    it('a released range is reserved again', () => {
      const s = make(256 * MiB);
      const a = s.reserve(64 * MiB, 64 * MiB);
      s.commit(a, MiB);
      const committed = s.committedBytes;
      const reserved = s.reservedBytes;
      s.release(a, 64 * MiB);
      expect(s.reservedBytes).toBe(reserved - 64 * MiB);
      expect(s.committedBytes).toBe(committed - MiB);
      expect(s.isReserved(a, 1)).toBe(false);
      expect(s.reserve(64 * MiB, 64 * MiB)).toBe(a);
    });

    it('exhaustion throws an out-of-memory HeapError naming maxBytes, and the space keeps serving', () => {
      const s = make(64 * MiB);
      const got: number[] = [];
      let error: unknown;
      try {
        for (;;) got.push(s.reserve(8 * MiB, 8 * MiB));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(HeapError);
      expect((error as HeapError).code).toBe('OUT_OF_MEMORY');
      expect((error as HeapError).message).toMatch(/maxBytes 67108864/);
      expect(got.length).toBe(7); // the first 8 MiB holds the header
      s.release(got[3]!, 8 * MiB);
      expect(s.reserve(8 * MiB, 8 * MiB)).toBe(got[3]);
      expect(s.reserve(GRANULE)).toBeGreaterThan(0); // room is left below the first aligned range
    });

    it('4 workers reserving concurrently get disjoint ranges', async () => {
      const s = make(GiB);
      const gate = makeGate();
      const jobs = [0, 1, 2, 3].map((i) =>
        runWorker<{ agentId: number; got: number[] }>({
          handle: s.handle,
          start: gate,
          job: { kind: 'reserve', count: 24, size: (1 + (i % 2)) * GRANULE, align: GRANULE },
        }),
      );
      await openGateWhenReady(gate, 4);
      const results = await Promise.all(jobs);
      const ranges: [number, number][] = [];
      results.forEach((r, i) => {
        for (const a of r.got) ranges.push([a, (1 + (i % 2)) * GRANULE]);
      });
      expect(ranges.length).toBe(96);
      ranges.sort((x, y) => x[0] - y[0]);
      for (let i = 1; i < ranges.length; i++) expect(ranges[i]![0]).toBeGreaterThanOrEqual(ranges[i - 1]![0] + ranges[i - 1]![1]);
      expect(new Set(results.map((r) => r.agentId)).size).toBe(4);
      for (const [a, n] of ranges) expect(s.isReserved(a, n)).toBe(true);
    });

    it('extend claims the granules right after a range, all or nothing, never past maxBytes', () => {
      const s = make(64 * MiB);
      const a = s.reserve(2 * GRANULE);
      const reserved = s.reservedBytes;
      expect(s.extend(a, 2 * GRANULE, 3 * GRANULE + 1)).toBe(true); // rounded up to granules: 4
      expect(s.isReserved(a, 4 * GRANULE)).toBe(true);
      expect(s.reservedBytes - reserved).toBe(2 * GRANULE);
      const b = s.reserve(GRANULE);
      expect(b).toBe(a + 4 * GRANULE); // first fit: right after a
      const c = s.reserve(GRANULE);
      s.release(b, GRANULE);
      // b's granule is free, c's is not: nothing is claimed.
      expect(s.extend(a, 4 * GRANULE, 6 * GRANULE)).toBe(false);
      expect(s.isReserved(a + 4 * GRANULE, GRANULE)).toBe(false);
      expect(s.reservedBytes - reserved).toBe(3 * GRANULE);
      expect(s.extend(a, 4 * GRANULE, 5 * GRANULE)).toBe(true);
      expect(s.reserve(GRANULE)).not.toBe(a + 4 * GRANULE);
      // Never past maxBytes: the range up to the top may be claimed, not a granule more.
      const before = s.reservedBytes;
      expect(s.extend(a, 5 * GRANULE, s.maxBytes - a + GRANULE)).toBe(false);
      expect(s.reservedBytes).toBe(before);
      const d = s.reserve(GRANULE, 32 * MiB); // the upper half starts free
      expect(d).toBe(32 * MiB);
      expect(s.extend(d, GRANULE, s.maxBytes - d)).toBe(true);
      expect(s.isReserved(d, s.maxBytes - d)).toBe(true);
      s.release(d, s.maxBytes - d);
      expect(() => s.extend(a, 5 * GRANULE, 5 * GRANULE)).toThrow(RangeError);
      expect(() => s.extend(a + 1, GRANULE, 2 * GRANULE)).toThrow(RangeError);
      s.release(c, GRANULE);
    });

    it.runIf(v.name === 'growable SAB, native page return')('4 workers racing extend, reserve and release on adjacent ranges never share a granule', async () => {
      const s = make(16 * MiB); // 256 granules, some held by the header: crowded, so extends meet neighbours
      const owners = new SharedArrayBuffer((s.maxBytes / GRANULE) * 4);
      const reserved = s.reservedBytes;
      const gate = makeGate();
      const jobs = [0, 1, 2, 3].map(() =>
        runWorker<{ collisions: number; extended: number; refused: number; pastEnd: number }>({
          handle: s.handle,
          start: gate,
          job: { kind: 'extend-churn', owners, rounds: 20_000, maxHeld: 12 },
        }),
      );
      await openGateWhenReady(gate, 4);
      const results = await Promise.all(jobs);
      expect(results.map((r) => r.collisions)).toEqual([0, 0, 0, 0]);
      // Nothing lost: every granule went back, the count and the bitmap agree.
      expect(new Int32Array(owners).every((x) => x === 0)).toBe(true);
      expect(s.reservedBytes).toBe(reserved);
      expect(s.isReserved(reserved, GRANULE)).toBe(false);
      expect(s.reserve(s.maxBytes - reserved)).toBe(reserved);
      // The race was real: extends were won and refused.
      for (const r of results) {
        expect(r.extended).toBeGreaterThan(0);
        expect(r.refused).toBeGreaterThan(0);
      }
    });

    it.runIf(v.fixed)('a fixed buffer is covered by the views from the start', () => {
      const s = make(256 * MiB);
      expect(s.viewBytes).toBe(256 * MiB);
      expect(s.covers(256 * MiB)).toBe(true);
      expect(s.covers(256 * MiB + 1)).toBe(false);
    });

    it.skipIf(v.fixed)("a worker's views catch up after another agent grows the buffer", async () => {
      const s = make(GiB);
      const a = s.reserve(128 * MiB, 128 * MiB);
      const viewBefore = s.viewBytes;
      const r = await runWorker<{ before: number; after: number }>({
        handle: s.handle,
        job: { kind: 'grow-and-write', addr: a + 64 * MiB, size: MiB, marker: 0x600dcafe | 0 },
      });
      expect(r.after).toBeGreaterThan(r.before);
      const end = a + 65 * MiB;
      expect(viewBefore).toBeLessThan(end);
      expect(s.viewBytes).toBe(viewBefore); // nothing refreshed behind our back
      expect(s.i32[(end - 4) >>> 2]).toBeUndefined(); // the old view simply does not reach it
      // refresh() (what a heap's view getters call) sees the growth through the header word the grower raised.
      expect(s.refresh()).toBe(true);
      expect(s.viewBytes).toBeGreaterThanOrEqual(end);
      expect(s.refresh()).toBe(false);
      expect(s.covers(end)).toBe(true);
      expect(s.i32[(end - 4) >>> 2]).toBe(0x600dcafe | 0);
    });
  });
}

describe.runIf(nativeAvailable)('native page return', () => {
  it('decommitting 256 MiB of touched pages lowers RSS by at least 230 MiB, and another worker then reads zeros', async () => {
    const s = createAddressSpace({ maxBytes: GiB, pageReturn: 'native' });
    const size = 256 * MiB;
    const a = s.reserve(size, size);
    s.commit(a, size);
    s.u8.fill(0x7f, a, a + size);
    const touched = rss()!;
    expect(s.decommit(a, size)).toBe(size);
    const after = rss()!;
    expect(touched - after).toBeGreaterThanOrEqual(230 * MiB);
    const r = await runWorker<{ nonzero: number; pageReturn: string }>({
      handle: s.handle,
      job: { kind: 'count-nonzero-pages', addr: a, size },
    });
    expect(r.pageReturn).toBe('native');
    expect(r.nonzero).toBe(0);
  });

  it('the same holds for a shared wasm memory', () => {
    const s = createAddressSpace({ maxBytes: GiB, backing: 'wasm', pageReturn: 'native' });
    const size = 64 * MiB;
    const a = s.reserve(size);
    s.commit(a, size);
    s.u8.fill(1, a, a + size);
    const touched = rss()!;
    s.decommit(a, size);
    expect(touched - rss()!).toBeGreaterThanOrEqual(56 * MiB);
  });
});

describe('handles', () => {
  it('open in another agent, and a 4 GiB space serves addresses above 2 GiB', () => {
    const s = createAddressSpace({ maxBytes: 4 * GiB });
    const high = s.reserve(GiB, 2 * GiB) ; // lands at 2 GiB
    const top = s.reserve(GiB, GiB);
    expect(high).toBe(2 * GiB);
    expect(top).toBeGreaterThanOrEqual(GiB);
    const t = openAddressSpace(structuredClone(s.handle));
    const p = high + GiB - 4 * MiB + 8; // above 2^31: int32 arithmetic would go negative here
    s.commit(p, 16);
    t.covers(p + 16);
    t.i32[p >>> 2] = -5;
    s.covers(p + 16);
    expect(s.i32[p >>> 2]).toBe(-5);
    expect(t.agentId).toBe(s.agentId + 1);
    expect(t.committedBytes).toBe(s.committedBytes);
  });

  it('root words are shared and set by CAS', () => {
    const s = createAddressSpace({ maxBytes: 64 * MiB });
    const t = openAddressSpace(s.handle);
    expect(s.casRoot(0, 0, 12345)).toBe(0);
    expect(t.casRoot(0, 0, 999)).toBe(12345);
    expect(t.root(0)).toBe(12345);
  });

  it('a wasm memory that already holds data keeps it: the space starts after it', () => {
    const memory = new WebAssembly.Memory({ initial: 3, maximum: 1024, shared: true });
    new Uint8Array(memory.buffer).fill(0xee, 0, 3 * GRANULE);
    const s = createAddressSpace({ memory, maxBytes: 1024 * GRANULE });
    expect(s.base).toBe(3 * GRANULE);
    const a = s.reserve(GRANULE);
    expect(a).toBeGreaterThanOrEqual(s.base + s.headerBytes);
    s.commit(a, GRANULE);
    expect(new Uint8Array(memory.buffer)[GRANULE]).toBe(0xee);
    expect(openAddressSpace(s.handle).base).toBe(3 * GRANULE);
  });
});
