// Shared by the global pool's tests: a fresh pool, the sizes every test walks, and how a refused call is read.
import { createAddressSpace, type AddressSpace } from '@paddock/platform';
import { GlobalPool } from '../src/index.js';

export const KiB = 1024;
export const MiB = 1024 * KiB;

/** A fresh address space of `maxBytes` with a global pool in it. */
export function makePool(maxBytes = 256 * MiB): { space: AddressSpace; pool: GlobalPool } {
  const space = createAddressSpace({ maxBytes });
  return { space, pool: GlobalPool.create(space) };
}

/** Every class boundary and its neighbours, and large sizes up to 3 MiB. */
export function sizeLadder(): number[] {
  const sizes = new Set<number>([0, 1, 31, 32, 33]);
  for (let k = 6; k <= 20; k++) for (const d of [-1, 0, 1]) sizes.add(2 ** k + d);
  for (const s of [1.5 * MiB, 2 * MiB - 64, 2 * MiB, 3 * MiB]) sizes.add(s);
  return [...sizes].sort((a, b) => a - b);
}

/** The error `fn` throws (fails the test when it throws nothing). */
export function thrownBy(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected an error, nothing was thrown');
}
