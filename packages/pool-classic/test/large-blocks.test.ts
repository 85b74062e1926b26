// The large-block paths no other test reaches: a commit that fails gives its piece back, a fresh chunk
// shrinks to the footprint when 16 MiB no longer fits, and check() on a damaged global large list.
import { describe, expect, it, vi } from 'vitest';
import { HeapError, openAddressSpace } from '@paddock/platform';
import { ClassicPool, POOL_ROOT } from '../src/index.js';
import { heapErrorOf, makePool, MiB } from './helpers.js';

describe('a failed commit gives the piece back', () => {
  it('a large malloc: the error reaches the caller, the piece is listed free, and the next malloc gets it', () => {
    const { space, pool } = makePool();
    const commit = vi.spyOn(space, 'commit').mockImplementationOnce(() => {
      throw new HeapError('OUT_OF_MEMORY', 'commit refused by the test');
    });
    expect(heapErrorOf(() => pool.malloc(3 * MiB)).message).toBe('commit refused by the test');
    // The whole fresh chunk (16 MiB) is free on this agent's list: the 3 MiB piece and the rest.
    expect(pool.stats().largeFreeBytes).toBe(16 * MiB);
    expect(pool.stats().liveBytes).toBe(0);
    pool.check();
    commit.mockRestore();
    const reserved = space.reservedBytes;
    const p = pool.malloc(3 * MiB);
    expect(space.reservedBytes).toBe(reserved);
    expect(pool.stats().largeFreeBytes).toBe(13 * MiB);
    pool.free(p);
    pool.check();
  });

  it('a new class block: the error reaches the caller, and the next small malloc takes the same MiB', () => {
    const { space, pool } = makePool();
    vi.spyOn(space, 'commit').mockImplementationOnce(() => {
      throw new HeapError('OUT_OF_MEMORY', 'commit refused by the test');
    });
    expect(heapErrorOf(() => pool.malloc(64)).message).toBe('commit refused by the test');
    expect(pool.stats().largeFreeBytes).toBe(16 * MiB);
    pool.check();
    const reserved = space.reservedBytes;
    const p = pool.malloc(64);
    expect(space.reservedBytes).toBe(reserved);
    expect(pool.stats().largeFreeBytes).toBe(15 * MiB);
    expect(pool.usableSize(p)).toBe(64);
    pool.check();
  });
});

it('a fresh chunk is the footprint alone when 16 MiB no longer fits in the space', () => {
  const { space, pool } = makePool({}, { maxBytes: 24 * MiB });
  pool.malloc(15 * MiB); // a 16 MiB chunk: 15 MiB handed out, 1 MiB left on the list
  const reserved = space.reservedBytes;
  const p = pool.malloc(4 * MiB);
  expect(space.reservedBytes - reserved).toBe(4 * MiB);
  expect(pool.usableSize(p)).toBe(4 * MiB);
  expect(pool.stats().largeFreeBytes).toBe(MiB);
  pool.check();
});

describe('check() on a damaged global large list', () => {
  /** A pool whose global large list holds three blocks (2 MiB, 3 MiB, the chunk's 11 MiB rest), and the header's words. */
  function globalBlocks(): { pool: ClassicPool; hdr: Int32Array; mibs: number; small: number; big: number } {
    const { space, pool } = makePool();
    const small = pool.malloc(2 * MiB);
    const big = pool.malloc(3 * MiB);
    pool.free(small);
    pool.free(big);
    pool.flush();
    const mibs = Math.ceil(space.maxBytes / MiB);
    expect(space.root(POOL_ROOT)).toBe(pool.headerAddress);
    const hdr = new Int32Array(space.buffer, pool.headerAddress, 64 + 3 * mibs);
    pool.check();
    return { pool, hdr, mibs, small, big };
  }

  it('a cycle', () => {
    const { pool, hdr, mibs, small } = globalBlocks();
    hdr[64 + 2 * mibs + small / MiB] = small; // the 2 MiB block links to itself
    // Keys rise strictly along the list, so a cycle shows first as a repeated key.
    expect(heapErrorOf(() => pool.check()).message).toMatch(/the global large list is not sorted by size/);
  });

  it('a block not marked as a free global block', () => {
    const { pool, hdr, big } = globalBlocks();
    hdr[64 + big / MiB] = (3 << 8) | 18; // marked free and local instead
    const err = heapErrorOf(() => pool.check());
    expect(err.code).toBe('CORRUPTION');
    expect(err.message).toMatch(/not marked as a free global block/);
  });

  it('the list is put back after the check, damaged or not: another agent is served from it', () => {
    const { pool, hdr, big } = globalBlocks();
    hdr[64 + big / MiB] = (3 << 8) | 18;
    expect(heapErrorOf(() => pool.check()).code).toBe('CORRUPTION');
    hdr[64 + big / MiB] = (3 << 8) | 19; // repaired
    const other = ClassicPool.open(openAddressSpace(pool.space.handle));
    expect(other.malloc(3 * MiB)).toBe(big);
    other.check();
  });
});
