// The seeded generator that the tests, the stress programs and the benchmark all draw from: mulberry32
// (a 32-bit state; each draw adds a constant and mixes it with two multiply-xorshift rounds). One
// sequence per seed, whoever draws it: a seed printed by a failing run replays it anywhere. The bench's
// native peers draw the same sequence in C (`rnext` in apps/bench/native/programs.c; the bench's tests
// compare the two): a change here must be made there too, bit for bit.
//
// Plain JavaScript so that worker scripts and node scripts can import it as it is; the TypeScript that
// imports it gets its types from prng.d.mts, and the apps' bundles take it in.

/** mulberry32 from `seed` (its low 32 bits): returns a function giving the next uint32 (0 .. 2^32 - 1). */
export function mulberry32(seed) {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** The same sequence as fractions in [0, 1): each uint32 of {@link mulberry32} divided by 2^32. */
export function mulberry32Unit(seed) {
  const next = mulberry32(seed);
  return () => next() / 4294967296;
}
