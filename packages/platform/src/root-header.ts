/**
 * A layer's header in the shared buffer, found through one of the space's root words: the first agent reserves,
 * fills and publishes it with one CAS on the root word; every other agent finds it there and checks that it is the
 * header it expects (magic in word 0, version in word 1, then whatever the layer checks) before opening it. Also the
 * check that a layer was handed an address space at all.
 */
import type { AddressSpace } from './address-space.js';
import { HeapError, describeValue, formatAddress } from './errors.js';

/** What identifies one layer's header: where it is published and how messages name it. */
export interface RootHeaderKind {
  /** The root word that holds the header's address. */
  readonly root: number;
  /** Word 0 of the header. */
  readonly magic: number;
  /** Word 1 of the header. */
  readonly version: number;
  /** How many words an opening agent reads to check the header (at least 2). */
  readonly probeWords: number;
  /** How messages name the header (`'classic pool'`) and the class that creates and opens it (`'ClassicPool'`). */
  readonly name: string;
  readonly opener: string;
}

/** @throws TypeError unless `space` looks like an {@link AddressSpace}. */
export function checkAddressSpace(space: unknown): asserts space is AddressSpace {
  const s = space as AddressSpace | null;
  if (s === null || typeof s !== 'object' || typeof s.reserve !== 'function' || typeof s.casRoot !== 'function') {
    throw new TypeError(`expected an AddressSpace from @paddock/platform, got ${describeValue(space)}`);
  }
}

/**
 * Reserves and commits `bytes` for a fresh header of `kind`, zeroes it, lets `fill` write the layer's words, then
 * stores the version and (last) the magic and publishes its address; returns it.
 * @throws HeapError `BAD_HANDLE` if the root word is already set, or another agent published a header first
 * (the reservation is given back).
 */
export function publishRootHeader(space: AddressSpace, kind: RootHeaderKind, bytes: number, fill: (header: Int32Array) => void): number {
  if (space.root(kind.root) !== 0) {
    throw new HeapError('BAD_HANDLE', `this address space already holds a pool (root word ${kind.root} is set): open it with ${kind.opener}.open(space)`);
  }
  const address = space.reserve(bytes);
  space.commit(address, bytes);
  const header = new Int32Array(space.buffer, address, bytes >>> 2);
  header.fill(0);
  fill(header);
  header[1] = kind.version;
  Atomics.store(header, 0, kind.magic);
  if (space.casRoot(kind.root, 0, address) !== 0) {
    space.release(address, bytes);
    throw new HeapError('BAD_HANDLE', `another agent created a pool in this address space first: open it with ${kind.opener}.open(space)`);
  }
  return address;
}

/**
 * The address of the header of `kind` another agent published in `space`; `matches` checks the layer's own words
 * (for example that the header was made for a space of this size).
 * @throws HeapError `BAD_HANDLE` when the root word is 0, points outside the buffer or at something else, or the
 * header's version or own words do not match.
 */
export function findRootHeader(space: AddressSpace, kind: RootHeaderKind, matches: (probe: Int32Array) => boolean): number {
  const address = space.root(kind.root) >>> 0;
  if (address === 0) {
    throw new HeapError('BAD_HANDLE', `this address space holds no pool (root word ${kind.root} is 0): create one with ${kind.opener}.create(space)`);
  }
  if (!space.covers(address + kind.probeWords * 4)) {
    throw new HeapError('BAD_HANDLE', `root word ${kind.root} points outside the buffer (${formatAddress(address)})`);
  }
  const probe = new Int32Array(space.buffer, address, kind.probeWords);
  if (Atomics.load(probe, 0) !== kind.magic) {
    throw new HeapError('BAD_HANDLE', `root word ${kind.root} does not point at a ${kind.name} header (no magic at ${formatAddress(address)}): the space may hold another backend`);
  }
  if (probe[1] !== kind.version) throw new HeapError('BAD_HANDLE', `${kind.name} header version ${probe[1]}, this build reads ${kind.version}`);
  if (!matches(probe)) throw new HeapError('BAD_HANDLE', `the ${kind.name} header does not match the address space`);
  return address;
}
