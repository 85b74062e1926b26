import { describe, expect, it } from 'vitest';
import { GRANULE, HeapError, PAGE_SIZE, createAddressSpace, openAddressSpace, rss, type AddressSpace } from '@paddock/platform';
import {
  LARGE_GEOMETRY,
  LARGE_GEOMETRY_MIN_BYTES,
  REGION_MAP_ENTRIES,
  Regions,
  SLOTS_PER_REGION,
  SMALL_GEOMETRY,
  USABLE_SLOTS_PER_REGION,
  chooseGeometry,
} from '@paddock/region';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

function heap(maxBytes: number, geometry?: typeof LARGE_GEOMETRY, pageReturn: 'auto' | 'none' = 'none'): { space: AddressSpace; regions: Regions } {
  const space = createAddressSpace({ maxBytes, pageReturn });
  return { space, regions: Regions.create(space, geometry ? { geometry: { ...geometry } } : {}) };
}

function expectHeapError(fn: () => unknown, code: string, text?: RegExp): HeapError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(HeapError);
  expect((caught as HeapError).code).toBe(code);
  if (text) expect((caught as HeapError).message).toMatch(text);
  return caught as HeapError;
}

describe('geometry', () => {
  it('is small below the measured threshold and large from it', () => {
    expect(SLOTS_PER_REGION).toBe(32);
    expect(LARGE_GEOMETRY_MIN_BYTES).toBe(2 * GiB);
    expect(chooseGeometry(GiB)).toEqual({ regionBytes: 64 * MiB, arenaBytes: 2 * MiB, unitBytes: 16384, unitsPerArena: 128 });
    expect(chooseGeometry(2 * GiB - GRANULE)).toEqual(SMALL_GEOMETRY);
    expect(chooseGeometry(2 * GiB)).toEqual({ regionBytes: 256 * MiB, arenaBytes: 8 * MiB, unitBytes: 16384, unitsPerArena: 512 });
    expect(chooseGeometry(4 * GiB)).toEqual(LARGE_GEOMETRY);
    for (const bad of [0, -1, 1.5, NaN, 4 * GiB + 1, '1' as unknown as number]) {
      expect(() => chooseGeometry(bad)).toThrow(RangeError);
    }
  });

  it('is recorded in the heap header and read back by another opener', () => {
    const { space, regions } = heap(GiB, LARGE_GEOMETRY);
    expect(regions.geometry).toEqual(LARGE_GEOMETRY);
    expect(space.root(0)).toBe(regions.headerAddress);
    const other = Regions.open(openAddressSpace(space.handle, { pageReturn: 'none' }));
    expect(other.geometry).toEqual(LARGE_GEOMETRY);
    expect(other.headerAddress).toBe(regions.headerAddress);
    expect(Regions.open(space).geometry.arenaBytes).toBe(8 * MiB);
  });

  it('rejects bad geometries, a second create, a missing or corrupt header and a heap too small', () => {
    const space = createAddressSpace({ maxBytes: GiB, pageReturn: 'none' });
    expectHeapError(() => Regions.open(space), 'BAD_HANDLE', /root word 0 is empty/);
    expect(() => Regions.create(space, { geometry: { ...SMALL_GEOMETRY, arenaBytes: 3 * MiB } })).toThrow(/power of two/);
    expect(() => Regions.create(space, { geometry: { ...SMALL_GEOMETRY, regionBytes: 128 * MiB } })).toThrow(/regionBytes/);
    expect(() => Regions.create(space, { geometry: { ...SMALL_GEOMETRY, unitsPerArena: 512 } })).toThrow(/unitsPerArena/);
    expect(space.root(0)).toBe(0);
    const regions = Regions.create(space);
    expectHeapError(() => Regions.create(space), 'BAD_HANDLE', /already has a region heap/);
    // Corrupt the magic: open must refuse it.
    const h = regions.headerAddress >>> 2;
    const magic = space.i32[h]!;
    space.i32[h] = 0;
    expectHeapError(() => Regions.open(space), 'BAD_HANDLE', /magic/);
    space.i32[h] = magic;
    expect(Regions.open(space).geometry).toEqual(SMALL_GEOMETRY);
    // 64 MiB regions need 128 MiB: the lowest region-sized range holds the space header.
    expect(() => Regions.create(createAddressSpace({ maxBytes: 100 * MiB, pageReturn: 'none' }))).toThrow(/too small/);
  });

  it('gives upper layers 32 user words in the header, zero at creation', () => {
    const { space, regions } = heap(GiB);
    const seen = new Set<number>();
    for (let i = 0; i < 32; i++) {
      const a = regions.userWord(i);
      expect(a % 4).toBe(0);
      expect(a).toBeGreaterThan(regions.headerAddress);
      expect(a).toBeLessThan(regions.headerAddress + PAGE_SIZE);
      expect(space.i32[a >>> 2]).toBe(0);
      seen.add(a);
    }
    expect(seen.size).toBe(32);
    Atomics.store(space.i32, regions.userWord(31) >>> 2, 77);
    expect(regions.regionList()).toEqual([]);
    expect(regions.carveArena()).toBeGreaterThan(0); // the geometry words are untouched by user words
    for (const bad of [-1, 32, 1.5]) expect(() => regions.userWord(bad)).toThrow(RangeError);
  });
});

describe('the region map', () => {
  it('marks each region-sized range that holds a region, before it is listed, and nothing else', () => {
    for (const [maxBytes, geometry] of [
      [GiB, SMALL_GEOMETRY],
      [4 * GiB, LARGE_GEOMETRY],
      [4 * GiB, { regionBytes: 32 * MiB, arenaBytes: MiB, unitBytes: 16384 as const, unitsPerArena: 64 }],
    ] as const) {
      const { space, regions } = heap(maxBytes, geometry);
      expect(regions.regionShift).toBe(Math.log2(geometry.regionBytes));
      // In the header's committed first page, after the user words; 4 GiB / 32 MiB = 128 entries at most.
      expect(regions.regionMapIndex * 4).toBeGreaterThanOrEqual(regions.userWord(31) + 4);
      expect((regions.regionMapIndex + REGION_MAP_ENTRIES) * 4).toBeLessThanOrEqual(regions.headerAddress + PAGE_SIZE);
      expect(maxBytes / geometry.regionBytes).toBeLessThanOrEqual(REGION_MAP_ENTRIES);
      const entries = () => Array.from(space.i32.subarray(regions.regionMapIndex, regions.regionMapIndex + REGION_MAP_ENTRIES));
      expect(entries().every((e) => e === 0)).toBe(true);
      for (let i = 0; i < 3 * USABLE_SLOTS_PER_REGION; i++) regions.carveArena();
      const listed = regions.regionList();
      expect(listed).toHaveLength(3);
      const want = new Array(REGION_MAP_ENTRIES).fill(0);
      for (const r of listed) want[r / geometry.regionBytes] = 1;
      expect(entries()).toEqual(want);
      for (const r of listed) {
        expect(regions.inRegion(r)).toBe(true);
        expect(regions.inRegion(r + geometry.regionBytes - 1)).toBe(true);
      }
      expect(regions.inRegion(0)).toBe(false);
      expect(regions.inRegion(2 ** 32 - 1)).toBe(maxBytes === 4 * GiB && want[REGION_MAP_ENTRIES - 1] === 1);
      // Another agent reads the same map.
      const other = Regions.open(openAddressSpace(space.handle));
      expect(other.regionMapIndex).toBe(regions.regionMapIndex);
      expect(listed.every((r) => other.inRegion(r + 12345))).toBe(true);
    }
  });

  it('a region a dead agent had written but not listed is mapped when a reaper pushes it', () => {
    const { space, regions } = heap(GiB, SMALL_GEOMETRY);
    const r = space.reserve(64 * MiB, 64 * MiB);
    space.commit(r, PAGE_SIZE);
    const i32 = space.i32;
    i32[r >>> 2] = 0x47524450; // region magic
    i32[(r >>> 2) + 1] = 0b11;
    i32[(r >>> 2) + 3] = 64 * MiB;
    expect(regions.inRegion(r)).toBe(false);
    expect(regions.recoverRegion(r)).toBe('pushed');
    expect(regions.inRegion(r)).toBe(true);
    // One whose header was never written is released, and stays unmapped.
    const q = space.reserve(64 * MiB, 64 * MiB);
    expect(regions.recoverRegion(q)).toBe('released');
    expect(regions.inRegion(q)).toBe(false);
  });
});

describe('carving', () => {
  it('a region yields exactly 31 arenas, then the next carve opens a second region', () => {
    const { space, regions } = heap(GiB);
    const { regionBytes, arenaBytes } = regions.geometry;
    const arenas: number[] = [];
    for (let i = 0; i < USABLE_SLOTS_PER_REGION; i++) arenas.push(regions.carveArena());
    const [first] = regions.regionList();
    expect(regions.regionList()).toHaveLength(1);
    expect(first! % regionBytes).toBe(0);
    expect(space.isReserved(first!, regionBytes)).toBe(true);
    // Slots 1..31 in order: every arena aligned, inside the region, none in the header slot.
    expect(arenas).toEqual(Array.from({ length: 31 }, (_, i) => first! + (i + 1) * arenaBytes));
    for (const a of arenas) {
      expect(a % arenaBytes).toBe(0);
      expect(regions.isCarved(a)).toBe(true);
      expect(space.isCommitted(a, PAGE_SIZE)).toBe(false); // reserved, not committed
    }
    const next = regions.carveArena();
    const list = regions.regionList();
    expect(list).toHaveLength(2);
    expect(list[0]).not.toBe(first);
    expect(list[1]).toBe(first);
    expect(next).toBe(list[0]! + arenaBytes);
    expect(regions.regionCount()).toBe(2);
    expect(regions.carvedArenas()).toEqual([...arenas, next].sort((a, b) => a - b));
  });

  it('finds a free slot in a region behind the list head, before opening a new region', () => {
    const { space, regions } = heap(GiB);
    const carved: number[] = [];
    for (let i = 0; i < 3 * USABLE_SLOTS_PER_REGION; i++) carved.push(regions.carveArena());
    const list = regions.regionList();
    expect(list).toHaveLength(3);
    const oldest = list[2]!;
    const middle = list[1]!;
    const inOldest = carved.filter((a) => regions.arenaBase(a) === a && (a & ~(64 * MiB - 1)) === oldest);
    expect(inOldest).toHaveLength(31);
    // Free one slot at the tail of the list: the same agent (current region: the full head) finds it.
    const freed = inOldest[17]!;
    regions.releaseArena(freed);
    expect(regions.carveArena()).toBe(freed);
    expect(regions.regionList()).toHaveLength(3);
    // So does a fresh agent with no current region, in another space handle.
    const victim = carved.find((a) => (a & ~(64 * MiB - 1)) === middle)!;
    regions.releaseArena(victim);
    const other = Regions.open(openAddressSpace(space.handle, { pageReturn: 'none' }));
    expect(other.carveArena()).toBe(victim);
    expect(other.regionList()).toHaveLength(3);
    // The next carve, with every slot taken, opens a fourth region.
    other.carveArena();
    expect(other.regionList()).toHaveLength(4);
  });

  it("claims from the agent's current region before walking the list from its head", () => {
    const { space, regions: a } = heap(GiB);
    const mine = Array.from({ length: 31 }, () => a.carveArena());
    const b = Regions.open(openAddressSpace(space.handle, { pageReturn: 'none' }));
    const first = b.carveArena(); // region 1 is full: b opens region 2, the new list head
    const [head, older] = a.regionList();
    expect(first).toBe(head! + 2 * MiB);
    expect(older).toBe(mine[0]! - 2 * MiB);
    a.releaseArena(mine[9]!);
    expect(a.carveArena()).toBe(mine[9]); // a's current region (behind the head) first
    expect(b.carveArena()).toBe(head! + 4 * MiB); // b's current region, the head
  });

  it('walks the list once more when no new region fits, and finds a slot freed meanwhile', () => {
    const { space, regions: a } = heap(GiB);
    const all: number[] = [];
    for (let i = 0; i < 465; i++) all.push(a.carveArena());
    const spaceB = openAddressSpace(space.handle, { pageReturn: 'none' });
    const b = Regions.open(spaceB);
    const reserve = spaceB.reserve.bind(spaceB);
    // While b tries (and fails) to reserve a new region, a releases an arena.
    spaceB.reserve = (size: number, align?: number): number => {
      a.releaseArena(all[300]!);
      return reserve(size, align);
    };
    expect(b.carveArena()).toBe(all[300]);
    spaceB.reserve = reserve;
    expectHeapError(() => b.carveArena(), 'OUT_OF_MEMORY', /maxBytes 1073741824/);
  });

  it('exhausting the heap gives the clear out-of-memory error, and the heap keeps serving what it has', () => {
    const { space, regions } = heap(GiB);
    const arenas: number[] = [];
    let err: unknown;
    for (;;) {
      try {
        arenas.push(regions.carveArena());
      } catch (e) {
        err = e;
        break;
      }
    }
    // [0, 64 MiB) holds the space header and the heap header; the 15 regions above it give 31 each.
    expect(regions.regionList()).toHaveLength(15);
    expect(arenas).toHaveLength(15 * 31);
    expect(new Set(arenas).size).toBe(arenas.length);
    expect(err).toBeInstanceOf(HeapError);
    expect((err as HeapError).code).toBe('OUT_OF_MEMORY');
    expect((err as HeapError).message).toMatch(/out of memory/);
    expect((err as HeapError).message).toContain('maxBytes 1073741824 (1 GiB)');
    // Still out of memory, the same way, on the next try.
    expectHeapError(() => regions.carveArena(), 'OUT_OF_MEMORY', /1073741824/);
    // What it has keeps working: an arena commits, holds data, and a released one is carved again.
    const keep = arenas[100]!;
    space.commit(keep, 64 * 1024);
    space.u8.fill(7, keep, keep + 64 * 1024);
    expect(space.u8[keep + 65535]).toBe(7);
    const back = arenas[400]!;
    regions.releaseArena(back);
    expect(regions.carveArena()).toBe(back);
    expectHeapError(() => regions.carveArena(), 'OUT_OF_MEMORY');
    expect(regions.carvedArenas()).toHaveLength(465);
    expect(space.u8[keep]).toBe(7);
  });

  it('serves arenas above 2 GiB and masks them without going negative; no arena ends at 4 GiB', () => {
    const { space, regions } = heap(4 * GiB);
    expect(regions.geometry).toEqual(LARGE_GEOMETRY);
    const arenas: number[] = [];
    // 15 regions of 31 slots, less the slot that would end at 2^32 (an arena's slab ends are uint32 words).
    for (let i = 0; i < 15 * 31 - 1; i++) arenas.push(regions.carveArena());
    expectHeapError(() => regions.carveArena(), 'OUT_OF_MEMORY', /4294967296 \(4 GiB\).*all 464 arena slots/);
    expect(new Set(arenas).size).toBe(arenas.length);
    const high = arenas.filter((a) => a >= 2 ** 31);
    expect(high.length).toBeGreaterThan(200);
    const top = Math.max(...arenas);
    expect(top).toBe(4 * GiB - 16 * MiB);
    expect(arenas.every((a) => a + 8 * MiB < 2 ** 32)).toBe(true);
    const heldOut = 4 * GiB - 8 * MiB;
    expect(regions.isCarved(heldOut)).toBe(false);
    expect(regions.carvedArenas()).not.toContain(heldOut);
    expectHeapError(() => regions.releaseArena(heldOut), 'BAD_POINTER', /ends at 4 GiB/);
    expect(regions.arenaBase(top + 12345)).toBe(top);
    expect(regions.arenaBase(top + 8 * MiB - 1)).toBe(top);
    expect(regions.isCarved(top)).toBe(true);
    space.commit(top + 8 * MiB - PAGE_SIZE, PAGE_SIZE);
    space.u8[top + 8 * MiB - 1] = 9;
    regions.releaseArena(top);
    expect(regions.isCarved(top)).toBe(false);
    expect(space.isCommitted(top + 8 * MiB - PAGE_SIZE, PAGE_SIZE)).toBe(false);
    expect(regions.carveArena()).toBe(top);
    expectHeapError(() => regions.carveArena(), 'OUT_OF_MEMORY');
    expect(regions.regionList().every((r) => r > 0 && r % (256 * MiB) === 0)).toBe(true);
  });
});

describe('release', () => {
  it('rejects what is not a carved arena, before changing anything', () => {
    const { space, regions } = heap(GiB);
    const a = regions.carveArena();
    const region = regions.regionList()[0]!;
    const bitmapBefore = space.i32[(region >>> 2) + 1];
    space.commit(a, PAGE_SIZE);
    expect(() => regions.releaseArena(1.5)).toThrow(RangeError);
    expectHeapError(() => regions.releaseArena(a + PAGE_SIZE), 'MISALIGNED');
    expectHeapError(() => regions.releaseArena(region), 'BAD_POINTER', /region header/);
    expectHeapError(() => regions.releaseArena(region + 64 * MiB + 2 * MiB), 'BAD_POINTER', /not a region/);
    expectHeapError(() => regions.releaseArena(5 * GiB), 'BAD_POINTER', /outside/);
    expectHeapError(() => regions.releaseArena(a + 2 * MiB), 'DOUBLE_FREE', /not carved/);
    expect(space.i32[(region >>> 2) + 1]).toBe(bitmapBefore);
    expect(space.isCommitted(a, PAGE_SIZE)).toBe(true);
    expect(regions.isCarved(a)).toBe(true);
    expect(regions.isCarved(a + 2 * MiB)).toBe(false);
    expect(regions.isCarved(region)).toBe(false);
    expect(regions.isCarved(a + 1)).toBe(false);
    regions.releaseArena(a);
    expectHeapError(() => regions.releaseArena(a), 'DOUBLE_FREE');
  });

  it('decommits the whole arena before its slot is free again (bookkeeping, any page-return mode)', () => {
    const { space, regions } = heap(GiB, LARGE_GEOMETRY);
    const a = regions.carveArena();
    space.commit(a, 8 * MiB);
    expect(space.isCommitted(a, 8 * MiB)).toBe(true);
    const committed = space.committedBytes;
    regions.releaseArena(a);
    expect(space.committedBytes).toBe(committed - 8 * MiB);
    for (let p = a; p < a + 8 * MiB; p += PAGE_SIZE) {
      if (space.isCommitted(p, PAGE_SIZE)) throw new Error(`page ${p} still committed`);
    }
    expect(regions.carveArena()).toBe(a);
  });

  it.skipIf(process.env.PADDOCK_PAGE_RETURN === 'none')(
    'a released arena holds no resident pages (native page return) and is re-carved at the same address',
    () => {
      const space = createAddressSpace({ maxBytes: GiB, pageReturn: 'native' });
      const regions = Regions.create(space, { geometry: { ...LARGE_GEOMETRY } });
      const n = 4;
      const bytes = n * 8 * MiB;
      const arenas = Array.from({ length: n }, () => regions.carveArena());
      for (const a of arenas) space.commit(a, 8 * MiB);
      const before = rss()!;
      for (const a of arenas) space.u8.fill(0xab, a, a + 8 * MiB);
      const touched = rss()!;
      expect(touched - before).toBeGreaterThan(bytes * 0.75);
      for (const a of arenas) regions.releaseArena(a);
      const released = rss()!;
      expect(touched - released).toBeGreaterThan(bytes * 0.75);
      // Carved again: the same addresses, not committed, still not resident.
      const again = Array.from({ length: n }, () => regions.carveArena());
      expect(again.sort((x, y) => x - y)).toEqual([...arenas].sort((x, y) => x - y));
      for (const a of again) expect(space.isCommitted(a, PAGE_SIZE)).toBe(false);
      expect(rss()! - released).toBeLessThan(bytes * 0.25);
      // Committed again, the old bytes are gone: the pages were returned, not kept.
      for (const a of again) {
        space.commit(a, 8 * MiB);
        for (let p = a; p < a + 8 * MiB; p += 64 * 1024) {
          if (space.u8[p] !== 0) throw new Error(`stale byte at ${p}`);
        }
      }
    },
  );
});
