/**
 * Heap geometry: how big a region and an arena are. Chosen once per heap from its maximum size and
 * recorded in the heap header, so every agent reads the same figures.
 *
 * Two geometries: 256 MiB regions of 8 MiB arenas for large heaps, 64 MiB regions of
 * 2 MiB arenas for small ones. A region always holds {@link SLOTS_PER_REGION} arena slots, so
 * `regionBytes = 32 * arenaBytes`. The threshold between the two was measured; see `docs/design/region.md`.
 */
import { describeValue, formatBytes } from '@paddock/platform';

/** Arena slots per region; slot 0 holds the region header, so 31 are usable. */
export const SLOTS_PER_REGION = 32;
/** Arena slots a region hands out. */
export const USABLE_SLOTS_PER_REGION = SLOTS_PER_REGION - 1;
/** The arena's allocation unit: 16 KiB. */
export const UNIT_BYTES = 16384;
/**
 * Heaps of at least this many bytes get the large geometry (256 MiB / 8 MiB); smaller ones the small
 * geometry (64 MiB / 2 MiB). Measured: from 2 GiB up the large geometry keeps at least 90% of the arena
 * bytes the small one offers and at least 217 arenas (docs/design/region.md).
 */
export const LARGE_GEOMETRY_MIN_BYTES = 2 ** 31;

/** The sizes one heap is cut into. */
export interface Geometry {
  /** Bytes per region, aligned to its size: 32 arena slots. */
  regionBytes: number;
  /** Bytes per arena, aligned to its size. */
  arenaBytes: number;
  /** Bytes per arena unit (always 16 KiB). */
  unitBytes: 16384;
  /** `arenaBytes / unitBytes`. */
  unitsPerArena: number;
}

const MiB = 1 << 20;

/** 256 MiB regions of 8 MiB arenas (512 units). */
export const LARGE_GEOMETRY: Readonly<Geometry> = Object.freeze({
  regionBytes: 256 * MiB,
  arenaBytes: 8 * MiB,
  unitBytes: UNIT_BYTES,
  unitsPerArena: (8 * MiB) / UNIT_BYTES,
});

/** 64 MiB regions of 2 MiB arenas (128 units). */
export const SMALL_GEOMETRY: Readonly<Geometry> = Object.freeze({
  regionBytes: 64 * MiB,
  arenaBytes: 2 * MiB,
  unitBytes: UNIT_BYTES,
  unitsPerArena: (2 * MiB) / UNIT_BYTES,
});

/** Smallest and largest arena a geometry may have (other than the two standard ones, for tests). */
export const MIN_ARENA_BYTES = 1 * MiB;
export const MAX_ARENA_BYTES = 8 * MiB;

/**
 * The geometry for a heap of `maxBytes`: large (256 MiB / 8 MiB) from {@link LARGE_GEOMETRY_MIN_BYTES} up,
 * small (64 MiB / 2 MiB) below. Returns a fresh object.
 * @throws RangeError when `maxBytes` is not an integer from 1 to 4 GiB.
 */
export function chooseGeometry(maxBytes: number): Geometry {
  if (typeof maxBytes !== 'number' || !Number.isInteger(maxBytes) || maxBytes < 1 || maxBytes > 2 ** 32) {
    throw new RangeError(`maxBytes must be an integer from 1 to ${formatBytes(2 ** 32)}, got ${describeValue(maxBytes)}`);
  }
  return { ...(maxBytes >= LARGE_GEOMETRY_MIN_BYTES ? LARGE_GEOMETRY : SMALL_GEOMETRY) };
}

/**
 * Checks a geometry: `arenaBytes` a power of two from 1 MiB to 8 MiB, `regionBytes = 32 * arenaBytes`,
 * `unitBytes` 16 KiB, `unitsPerArena = arenaBytes / unitBytes`. Returns a plain copy.
 * @throws RangeError naming the first field that is wrong.
 */
export function checkGeometry(geometry: Geometry): Geometry {
  if (geometry === null || typeof geometry !== 'object') throw new RangeError(`geometry must be an object, got ${describeValue(geometry)}`);
  const { regionBytes, arenaBytes, unitBytes, unitsPerArena } = geometry;
  if (
    typeof arenaBytes !== 'number' ||
    !Number.isInteger(arenaBytes) ||
    arenaBytes < MIN_ARENA_BYTES ||
    arenaBytes > MAX_ARENA_BYTES ||
    (arenaBytes & (arenaBytes - 1)) !== 0
  ) {
    throw new RangeError(
      `geometry.arenaBytes must be a power of two from ${formatBytes(MIN_ARENA_BYTES)} to ${formatBytes(MAX_ARENA_BYTES)}, got ${describeValue(arenaBytes)}`,
    );
  }
  if (regionBytes !== arenaBytes * SLOTS_PER_REGION) {
    throw new RangeError(`geometry.regionBytes must be ${SLOTS_PER_REGION} x arenaBytes = ${arenaBytes * SLOTS_PER_REGION}, got ${describeValue(regionBytes)}`);
  }
  if (unitBytes !== UNIT_BYTES) throw new RangeError(`geometry.unitBytes must be ${UNIT_BYTES}, got ${describeValue(unitBytes)}`);
  if (unitsPerArena !== arenaBytes / UNIT_BYTES) {
    throw new RangeError(`geometry.unitsPerArena must be arenaBytes / unitBytes = ${arenaBytes / UNIT_BYTES}, got ${describeValue(unitsPerArena)}`);
  }
  return { regionBytes, arenaBytes, unitBytes: UNIT_BYTES, unitsPerArena };
}
