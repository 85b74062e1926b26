/**
 * @packageDocumentation
 * `@paddock/region`: where arenas come from. A heap's address space is cut into regions (256 MiB, or
 * 64 MiB for heaps under 2 GiB), each aligned to its size and holding 32 arena slots tracked by one
 * 32-bit bitmap; slot 0 holds the region header, so 31 arenas per region. Carving an arena is one
 * `Atomics.compareExchange` on that bitmap; new regions join a global list with one CAS and are never
 * released; releasing an arena decommits it and clears its bit, so it is re-carved at the same addresses.
 * The geometry is chosen from the heap's maximum size and recorded in the heap header in the buffer, so
 * every agent reads the same. Nothing here waits.
 *
 * ```ts
 * const space = createAddressSpace({ maxBytes: 1 << 30 });
 * const regions = Regions.create(space);            // first agent; others: Regions.open(space)
 * const arena = regions.carveArena();               // 2 MiB aligned, reserved, not committed
 * space.commit(arena, 64 << 10);
 * regions.releaseArena(arena);                      // decommitted, slot free again
 * ```
 */
export {
  LARGE_GEOMETRY,
  LARGE_GEOMETRY_MIN_BYTES,
  MAX_ARENA_BYTES,
  MIN_ARENA_BYTES,
  SLOTS_PER_REGION,
  SMALL_GEOMETRY,
  UNIT_BYTES,
  USABLE_SLOTS_PER_REGION,
  checkGeometry,
  chooseGeometry,
  type Geometry,
} from './geometry.js';
export { HEAP_HEADER_BYTES, REGIONS_ROOT, REGION_HEADER_BYTES, REGION_MAP_ENTRIES, USER_WORDS } from './header-layout.js';
export { Regions, type RegionsOptions } from './regions.js';
