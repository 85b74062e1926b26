/**
 * @packageDocumentation
 * `@paddock/profile`: the memory/speed dial. Ten rungs, from 1 (return memory eagerly, small caches)
 * to 10 (keep memory, deep caches); rung 3 is the default. Each rung fixes five columns, and this
 * layer derives the figures the allocator uses from them: the thread-cache depth of every size class,
 * and the decommit span and sweep threshold scaled to the arena's size.
 *
 * The table is Pony's `pool_arena` profile; nothing here touches memory.
 */

/** The lowest rung: return memory as soon as possible. */
export const MIN_PROFILE = 1;
/** The highest rung: keep the most memory for speed. */
export const MAX_PROFILE = 10;
/** The rung a heap uses when none is given. */
export const DEFAULT_PROFILE = 3;
/** Number of small size classes (32 B to 1 MiB, powers of two). */
export const SIZE_CLASS_COUNT = 16;
/** Units in a full-size (8 MiB) arena; the table's spans and thresholds are given for this size. */
export const REFERENCE_UNITS_PER_ARENA = 512;
/** A class cache never holds more than this many blocks. */
export const MAX_CACHE_DEPTH = 512;

const KiB = 1024;
const MiB = 1024 * KiB;

/** One rung's columns, as the table gives them for a 512-unit arena. */
export interface ProfileRung {
  /** The rung, 1 to 10. */
  readonly rung: number;
  /** The least number of blocks any class cache may hold. */
  readonly cacheFloor: number;
  /** Bytes the cache depth formula starts from (`budget >> (5 + class)`). */
  readonly cacheBudget: number;
  /** A released class slab spanning at least this many units is decommitted at once. */
  readonly decommitSpan: number;
  /** Dirty units that trigger a sweep. */
  readonly sweepThreshold: number;
  /** Bytes of large units and stashed mappings one agent may retain. */
  readonly largeRetention: number;
}

/** A rung resolved for one arena geometry, with its derived cache depths. */
export interface ResolvedProfile extends ProfileRung {
  /** Units per arena this profile was scaled for. */
  readonly unitsPerArena: number;
  /** Cache depth of each size class, index 0 (32 B) to 15 (1 MiB). */
  readonly cacheDepth: readonly number[];
}

// rung: floor, budget, span, threshold, retention
const TABLE: readonly (readonly [number, number, number, number, number])[] = [
  [0, 64 * KiB, 1, 4, 0],
  [4, 256 * KiB, 64, 16, 2 * MiB],
  [8, 640 * KiB, 128, 32, 16 * MiB],
  [16, 768 * KiB, 256, 64, 16 * MiB],
  [24, 1 * MiB, 512, 128, 24 * MiB],
  [32, 1 * MiB, 512, 160, 32 * MiB],
  [48, 1.5 * MiB, 512, 256, 48 * MiB],
  [64, 1.5 * MiB, 512, 384, 64 * MiB],
  [96, 2 * MiB, 512, 512, 96 * MiB],
  [128, 2 * MiB, 512, 512, 128 * MiB],
];

/**
 * Checks a profile value and returns it as a rung number.
 * @throws RangeError when the value is not an integer from 1 to 10 (NaN and non-numbers included).
 */
export function validateProfile(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < MIN_PROFILE || value > MAX_PROFILE) {
    throw new RangeError(
      `profile must be between ${MIN_PROFILE} and ${MAX_PROFILE} (an integer), got ${describe(value)}`,
    );
  }
  return value;
}

/** The table's columns for one rung, unscaled. */
export function profileRung(rung: number): ProfileRung {
  const r = validateProfile(rung);
  const [cacheFloor, cacheBudget, decommitSpan, sweepThreshold, largeRetention] = TABLE[r - 1]!;
  return { rung: r, cacheFloor, cacheBudget, decommitSpan, sweepThreshold, largeRetention };
}

/**
 * Thread-cache depth for size class `classIndex` at `rung`: `min(512, max(budget >> (5 + i), floor))`.
 */
export function cacheDepth(rung: number, classIndex: number): number {
  if (!Number.isInteger(classIndex) || classIndex < 0 || classIndex >= SIZE_CLASS_COUNT) {
    throw new RangeError(`size class must be an integer from 0 to ${SIZE_CLASS_COUNT - 1}, got ${describe(classIndex)}`);
  }
  const row = TABLE[validateProfile(rung) - 1]!;
  return Math.min(MAX_CACHE_DEPTH, Math.max(row[1] >> (5 + classIndex), row[0]));
}

/**
 * Resolves a rung for an arena of `unitsPerArena` units: the decommit span and sweep threshold scale by
 * `unitsPerArena / 512` (each kept at least 1), and the cache depth of every class is derived.
 */
export function resolveProfile(rung: number, unitsPerArena: number = REFERENCE_UNITS_PER_ARENA): ResolvedProfile {
  const base = profileRung(rung);
  if (!Number.isInteger(unitsPerArena) || unitsPerArena < 1 || unitsPerArena > REFERENCE_UNITS_PER_ARENA) {
    throw new RangeError(
      `unitsPerArena must be an integer from 1 to ${REFERENCE_UNITS_PER_ARENA}, got ${describe(unitsPerArena)}`,
    );
  }
  const depth: number[] = [];
  for (let i = 0; i < SIZE_CLASS_COUNT; i++) depth.push(cacheDepth(base.rung, i));
  return {
    ...base,
    decommitSpan: scale(base.decommitSpan, unitsPerArena),
    sweepThreshold: scale(base.sweepThreshold, unitsPerArena),
    unitsPerArena,
    cacheDepth: depth,
  };
}

function scale(units: number, unitsPerArena: number): number {
  return Math.max(1, Math.floor((units * unitsPerArena) / REFERENCE_UNITS_PER_ARENA));
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  return String(value);
}
