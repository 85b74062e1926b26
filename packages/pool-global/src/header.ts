/**
 * The global pool's header in the shared buffer: the first agent reserves and fills it and publishes its
 * address in root word `POOL_ROOT`; every other agent finds it there and checks it is a global pool header
 * made for this space before opening it. Its words are laid out in `layout.ts`.
 */
import { HeapError, formatAddress, type AddressSpace } from '@paddock/platform';
import { H_ENTRY, H_MAGIC, H_MIBS, H_VERSION, MAGIC, MiB, POOL_ROOT, VERSION, headerBytes } from './layout.js';

/**
 * Reserves, fills and publishes a fresh pool header for `space`; returns its address.
 * @throws HeapError `BAD_HANDLE` if the space already holds a pool, or another agent published one first.
 */
export function createHeader(space: AddressSpace): number {
  if (space.root(POOL_ROOT) !== 0) {
    throw new HeapError('BAD_HANDLE', `this address space already holds a pool (root word ${POOL_ROOT} is set): open it with GlobalPool.open(space)`);
  }
  const mibs = Math.ceil(space.maxBytes / MiB);
  const bytes = headerBytes(mibs);
  const address = space.reserve(bytes);
  space.commit(address, bytes);
  const hdr = new Int32Array(space.buffer, address, bytes >>> 2);
  hdr.fill(0);
  hdr[H_VERSION] = VERSION;
  hdr[H_MIBS] = mibs;
  Atomics.store(hdr, H_MAGIC, MAGIC);
  if (space.casRoot(POOL_ROOT, 0, address) !== 0) {
    space.release(address, bytes);
    throw new HeapError('BAD_HANDLE', 'another agent created a pool in this address space first: open it with GlobalPool.open(space)');
  }
  return address;
}

/**
 * The address of the pool header another agent published in `space`.
 * @throws HeapError `BAD_HANDLE` when the space holds no global pool header, or one made for another space.
 */
export function findHeader(space: AddressSpace): number {
  const address = space.root(POOL_ROOT) >>> 0;
  if (address === 0) {
    throw new HeapError('BAD_HANDLE', `this address space holds no pool (root word ${POOL_ROOT} is 0): create one with GlobalPool.create(space)`);
  }
  if (!space.covers(address + H_ENTRY * 4)) throw new HeapError('BAD_HANDLE', `root word ${POOL_ROOT} points outside the buffer (${formatAddress(address)})`);
  const probe = new Int32Array(space.buffer, address, H_ENTRY);
  if (Atomics.load(probe, H_MAGIC) !== MAGIC) {
    throw new HeapError('BAD_HANDLE', `root word ${POOL_ROOT} does not point at a global pool header (no magic at ${formatAddress(address)}): the space may hold another backend`);
  }
  if (probe[H_VERSION] !== VERSION) throw new HeapError('BAD_HANDLE', `global pool header version ${probe[H_VERSION]}, this build reads ${VERSION}`);
  if (probe[H_MIBS] !== Math.ceil(space.maxBytes / MiB)) throw new HeapError('BAD_HANDLE', 'the global pool header does not match the address space');
  return address;
}
