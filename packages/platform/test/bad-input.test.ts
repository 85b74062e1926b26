// Every bad input gets a clear, typed error that names the value, and leaves the space as it was.
import { describe, expect, it } from 'vitest';
import { GRANULE, HeapError, createAddressSpace, openAddressSpace, type AddressSpace } from '../src/index.js';

const MiB = 1 << 20;

function snapshot(s: AddressSpace) {
  return { reserved: s.reservedBytes, committed: s.committedBytes, view: s.viewBytes };
}

describe('createAddressSpace rejects', () => {
  it.each([
    ['negative maxBytes', { maxBytes: -1 }, /maxBytes .*got -1/],
    ['NaN maxBytes', { maxBytes: Number.NaN }, /got NaN/],
    ['fractional maxBytes', { maxBytes: 1.5 * MiB + 0.5 }, /got 1572864.5/],
    ['string maxBytes', { maxBytes: '1G' }, /got "1G"/],
    ['Infinity maxBytes', { maxBytes: Number.POSITIVE_INFINITY }, /got Infinity/],
    ['maxBytes above 4 GiB', { maxBytes: 2 ** 32 + GRANULE }, /got 4295032832/],
    ['maxBytes below 1 MiB', { maxBytes: 4096 }, /got 4096/],
    ['missing maxBytes', {}, /got undefined/],
    ['an unknown backing', { maxBytes: MiB * 16, backing: 'mmap' }, /backing .*"mmap"/],
    ['an unknown pageReturn', { maxBytes: MiB * 16, pageReturn: 'sometimes' }, /pageReturn .*"sometimes"/],
  ])('%s with a RangeError', (_name, options, message) => {
    expect(() => createAddressSpace(options as never)).toThrow(RangeError);
    expect(() => createAddressSpace(options as never)).toThrow(message);
  });

  it('a wasm memory that is not shared, or given without maxBytes', () => {
    const unshared = new WebAssembly.Memory({ initial: 1, maximum: 16 });
    expect(() => createAddressSpace({ memory: unshared, maxBytes: 16 * GRANULE })).toThrow(TypeError);
    const shared = new WebAssembly.Memory({ initial: 1, maximum: 64, shared: true });
    expect(() => createAddressSpace({ memory: shared })).toThrow(/maxBytes is required/);
  });

  it('a buffer that already holds a space', () => {
    const s = createAddressSpace({ maxBytes: 16 * MiB, backing: 'fixed' });
    expect(() => createAddressSpace({ memory: s.buffer })).toThrow(HeapError);
  });
});

describe('openAddressSpace rejects a forged handle with HeapError BAD_HANDLE', () => {
  const s = createAddressSpace({ maxBytes: 16 * MiB });
  const good = s.handle;
  it.each([
    ['null', null],
    ['a number', 42],
    ['the wrong kind', { ...good, kind: 'other' }],
    ['another version', { ...good, version: 99 }],
    ['a different maxBytes', { ...good, maxBytes: 32 * MiB }],
    ['a misaligned base', { ...good, base: 100 }],
    ['a buffer without a header', { ...good, buffer: new SharedArrayBuffer(1 << 16, { maxByteLength: 16 * MiB }) }],
    ['a plain ArrayBuffer', { ...good, buffer: new ArrayBuffer(1 << 16) }],
    ['the wrong backing', { ...good, backing: 'fixed' }],
  ])('%s', (_name, handle) => {
    let err: unknown;
    try {
      openAddressSpace(handle as never);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HeapError);
    expect((err as HeapError).code).toBe('BAD_HANDLE');
  });
});

describe('range operations reject bad input and change nothing', () => {
  const s = createAddressSpace({ maxBytes: 64 * MiB });
  const a = s.reserve(MiB);
  s.commit(a, 64 * 1024);
  const cases: [string, () => unknown, new (...args: never[]) => Error, RegExp][] = [
    ['reserve of size -1', () => s.reserve(-1), RangeError, /size must be a positive integer, got -1/],
    ['reserve of size 0', () => s.reserve(0), RangeError, /got 0/],
    ['reserve of size NaN', () => s.reserve(Number.NaN), RangeError, /got NaN/],
    ['reserve of size 1.5', () => s.reserve(1.5), RangeError, /got 1.5/],
    ['reserve of a string', () => s.reserve('4096' as never), RangeError, /got "4096"/],
    ['reserve above maxBytes', () => s.reserve(128 * MiB), RangeError, /maxBytes 67108864/],
    ['reserve with align 3', () => s.reserve(GRANULE, 3), RangeError, /align must be a power of two, got 3/],
    ['reserve with align 0', () => s.reserve(GRANULE, 0), RangeError, /got 0/],
    ['reserve with align above the space', () => s.reserve(GRANULE, 128 * MiB), RangeError, /align/],
    ['release of a misaligned address', () => s.release(a + 8, GRANULE), RangeError, /not 64 KiB aligned/],
    ['release outside the space', () => s.release(128 * MiB, GRANULE), RangeError, /outside the space/],
    ['release of an unreserved range', () => s.release(a + 4 * MiB, GRANULE), HeapError, /not \(wholly\) reserved/],
    ['release running past a reservation', () => s.release(a, 2 * MiB), HeapError, /not \(wholly\) reserved/],
    ['release of the header', () => s.release(0, GRANULE), HeapError, /header/],
    ['commit of an unreserved range', () => s.commit(a + 8 * MiB, 4096), HeapError, /not \(wholly\) reserved/],
    ['commit past maxBytes', () => s.commit(64 * MiB - 4096, 8192), RangeError, /ends past maxBytes/],
    ['commit at a negative address', () => s.commit(-4096, 4096), RangeError, /address -4096/],
    ['decommit of size NaN', () => s.decommit(a, Number.NaN), RangeError, /got NaN/],
    ['decommit of an unreserved range', () => s.decommit(a + 8 * MiB, 4096), HeapError, /not \(wholly\) reserved/],
    ['discard at a fractional address', () => s.discard(a + 0.5, 4096), RangeError, /address/],
    ['root index 8', () => s.root(8), RangeError, /root index/],
  ];
  it.each(cases)('%s', (_name, op, type, message) => {
    const before = snapshot(s);
    let err: unknown;
    try {
      op();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(type);
    expect((err as Error).message).toMatch(message);
    expect(snapshot(s)).toEqual(before);
    expect(s.isReserved(a, MiB)).toBe(true);
    expect(s.isCommitted(a, 64 * 1024)).toBe(true);
  });

  it('HeapError carries its code and address', () => {
    try {
      s.commit(a + 8 * MiB, 4096);
    } catch (e) {
      expect((e as HeapError).code).toBe('NOT_RESERVED');
      expect((e as HeapError).address).toBe(a + 8 * MiB);
    }
  });
});
