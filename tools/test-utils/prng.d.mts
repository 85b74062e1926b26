// Types of prng.mjs (the one seeded generator, mulberry32).

/** mulberry32 from `seed` (its low 32 bits): returns a function giving the next uint32 (0 .. 2^32 - 1). */
export function mulberry32(seed: number): () => number;

/** The same sequence as fractions in [0, 1): each uint32 of {@link mulberry32} divided by 2^32. */
export function mulberry32Unit(seed: number): () => number;
