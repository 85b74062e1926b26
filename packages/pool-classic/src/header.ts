/**
 * The classic pool's header in the shared buffer, published at root word `POOL_ROOT` by the first agent and
 * checked by every other before it opens the pool (the platform's root-header routine). Its words are laid out
 * in `layout.ts`.
 */
import { findRootHeader, publishRootHeader, type AddressSpace, type RootHeaderKind } from '@paddock/platform';
import { FLAG_RETAIN, H_ENTRY, H_FLAGS, H_MIBS, MAGIC, MiB, POOL_ROOT, VERSION, headerBytes } from './layout.js';

const CLASSIC_HEADER: RootHeaderKind = { root: POOL_ROOT, magic: MAGIC, version: VERSION, probeWords: H_ENTRY, name: 'classic pool', opener: 'ClassicPool' };

/**
 * Reserves, fills and publishes a fresh pool header for `space`; returns its address.
 * @throws HeapError `BAD_HANDLE` if the space already holds a pool, or another agent published one first.
 */
export function createHeader(space: AddressSpace, retain: boolean): number {
  const mibs = Math.ceil(space.maxBytes / MiB);
  return publishRootHeader(space, CLASSIC_HEADER, headerBytes(mibs), (header) => {
    header[H_FLAGS] = retain ? FLAG_RETAIN : 0;
    header[H_MIBS] = mibs;
  });
}

/**
 * The address of the pool header another agent published in `space`.
 * @throws HeapError `BAD_HANDLE` when the space holds no classic pool header, or one made for another space.
 */
export function findHeader(space: AddressSpace): number {
  return findRootHeader(space, CLASSIC_HEADER, (probe) => probe[H_MIBS] === Math.ceil(space.maxBytes / MiB));
}
