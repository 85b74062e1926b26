// A space whose maxBytes is a multiple of 64 KiB but not of 2 MiB: its reservation bitmap ends part way through a
// word, and the commit bitmap after it must start on a word of its own (a fractional start overlapped the two).
import { describe, expect, it } from 'vitest';
import { GRANULE, PAGE_SIZE, createAddressSpace, type AddressSpace } from '../src/index.js';

/** Reserves granules until the space says out of memory; returns their addresses. */
function reserveAll(space: AddressSpace): number[] {
  const got: number[] = [];
  for (;;) {
    try {
      got.push(space.reserve(GRANULE));
    } catch {
      return got;
    }
  }
}

describe('a space of a size that is not a multiple of 2 MiB', () => {
  for (const maxBytes of [64 * 1048576 + GRANULE, 100 * 1048576 + 3 * GRANULE, 2 * 1048576 - GRANULE]) {
    it(`${maxBytes} bytes: the bitmaps do not overlap, and the header stays committed`, () => {
      const space = createAddressSpace({ maxBytes });
      expect(space.maxBytes).toBe(maxBytes);
      expect(space.isCommitted(0, PAGE_SIZE)).toBe(true);
      // Reserve every granule up to the last, commit a page in each, then release them all.
      const got = reserveAll(space);
      expect(got.length).toBeGreaterThan(0);
      expect(Math.max(...got)).toBe(maxBytes - GRANULE); // the last granule is reachable
      for (const a of got) space.commit(a, PAGE_SIZE);
      for (const a of got) expect(space.isCommitted(a, PAGE_SIZE)).toBe(true);
      for (const a of got) space.release(a, GRANULE);
      for (const a of got) expect(space.isReserved(a, GRANULE)).toBe(false);
      expect(space.isCommitted(0, PAGE_SIZE)).toBe(true); // the header page, whatever the last granule did
      expect(space.holdsPage(0)).toBe(true);
      // and all of it can be had again
      const again = reserveAll(space);
      expect(again.length).toBe(got.length);
    });
  }
});
