// A per-block byte pattern, shared by the in-process tests and the worker scripts. Blocks up to 512 bytes
// are written whole; bigger ones at their first and last 256 bytes and one byte in every 4 KiB page, so a
// block that overlaps another, or a page that was zeroed under a live block, shows up at verify time.

function byteAt(seed, i) {
  return ((seed >>> ((i & 3) << 3)) ^ Math.imul(i, 0x9e3779b1) >>> 24 ^ i) & 255;
}

function* positions(size) {
  if (size <= 512) {
    for (let i = 0; i < size; i++) yield i;
    return;
  }
  for (let i = 0; i < 256; i++) yield i;
  for (let i = 256 + 4093; i < size - 256; i += 4096) yield i;
  for (let i = size - 256; i < size; i++) yield i;
}

/** Writes block `seed`'s pattern over [p, p + size). */
export function fillPattern(u8, p, size, seed) {
  for (const i of positions(size)) u8[p + i] = byteAt(seed, i);
}

/** The first offset where [p, p + size) differs from block `seed`'s pattern, or -1. */
export function checkPattern(u8, p, size, seed) {
  for (const i of positions(size)) if (u8[p + i] !== byteAt(seed, i)) return i;
  return -1;
}

/** A small seeded PRNG, uint32 out: the repository's one seeded generator (mulberry32). */
export { mulberry32 as rng } from '../../../../tools/test-utils/prng.mjs';
