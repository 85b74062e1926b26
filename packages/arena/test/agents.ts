// In-thread agents for arena tests: each opens the shared space on its own, as a worker would.
import { ArenaHeap } from '../src/index.js';
import { createAddressSpace, openAddressSpace, type AddressSpace, type PageReturnMode } from '@paddock/platform';
import { resolveProfile } from '@paddock/profile';
import { Regions } from '@paddock/region';
import { Registry } from '@paddock/registry';

export const KiB = 1024;
export const MiB = 1 << 20;
export const GiB = 1 << 30;

export interface TestHeap {
  space: AddressSpace;
  regions: Regions;
  registry: Registry;
  agent(): ArenaHeap;
}

/** A heap of `maxBytes` (2 GiB and up get 8 MiB arenas) whose agents live in this thread. */
export function makeHeap(maxBytes = 2 * GiB, profile = 3, pageReturn: PageReturnMode | 'auto' = 'auto'): TestHeap {
  const space = createAddressSpace({ maxBytes, pageReturn });
  const regions = Regions.create(space);
  const registry = Registry.create(space);
  return {
    space,
    regions,
    registry,
    agent() {
      const s = openAddressSpace(space.handle, { pageReturn });
      const r = Regions.open(s);
      return new ArenaHeap(s, r, Registry.open(s), resolveProfile(profile, r.geometry.unitsPerArena));
    },
  };
}

/** Catches what `fn` throws. */
export function thrown(fn: () => unknown): (Error & { code?: string }) | undefined {
  try {
    fn();
  } catch (e) {
    return e as Error & { code?: string };
  }
  return undefined;
}
