/**
 * The workloads' draws: the repository's one seeded generator (mulberry32, uint32 out) and the two ways
 * the workloads turn its numbers into sizes and slots. The native peers draw the same way, bit for bit
 * (`rnext`, `between` and `log_uniform` in native/programs.c; the bench's tests compare them).
 */
import { mulberry32 } from '../../../tools/test-utils/prng.mjs';

export { mulberry32 };

/** A uniform integer in [lo, hi]. */
export function between(next: () => number, lo: number, hi: number): number {
  return lo + Math.floor((next() / 4294967296) * (hi - lo + 1));
}

/** A log-uniform integer in [lo, hi]: lo * 2^(u * log2(hi / lo)), floored. */
export function logUniform(next: () => number, lo: number, hi: number): number {
  const u = next() / 4294967296;
  const s = Math.floor(lo * 2 ** (u * Math.log2(hi / lo)));
  return s < lo ? lo : s > hi ? hi : s;
}
