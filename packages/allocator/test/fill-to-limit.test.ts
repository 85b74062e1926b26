// The fill test: every backend (its own build, dist/pool-*.js) on every backing, on a 4 GiB heap (the largest
// there is), filled with blocks of one size until the first refusal. Each backend and backing runs in a
// child process of its own (scripts/fill-to-limit.mjs, which says what it checks; a cell is a fresh heap,
// dropped and collected before the next), two children at a time, so at most two cells' memory is touched
// at once and all of it goes back to the system when a child ends.
//
// What it costs, and how the costly cells are covered. Every size that is a class size, large or oversized
// is a cell, on every backend and backing. A block of a few KiB or less gets a word written into it, so a
// fill of 4 GiB with 32-byte blocks would make 4 GiB resident and take 134 million mallocs. For sizes below
// 64 KiB the child first prefills the heap with 16 MiB blocks in ascending addresses and stops below a top
// window (the arena's region plus 16 MiB, 64 MiB for the pools) that nothing has touched; the small size
// then fills that window to the refusal. So the small size is what reaches the top of the space, the end
// that wraps a uint32, and the test checks it did: its highest block must end at 2^32 for the pools (their
// last MiB is served like any other), and for the arena at the end of the highest arena slot it carves
// (the slot that ends at 2^32 is never carved: its slab ends would wrap), 2^32 less one arena slot (the
// heap's snapshot names the slot size). Sizes of 64 KiB and above fill the whole heap from empty (a 64 KiB
// fill makes 256 MiB resident).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const KiB = 1024;
const MiB = 1024 * KiB;
const MAX_BYTES = 4096 * MiB;
/** Sizes below this are filled into the top window after a prefill; the rest fill the whole heap. */
const PREFILL_BELOW = 64 * KiB;
/** Child processes at once. */
const AT_ONCE = 2;

const script = fileURLToPath(new URL('./scripts/fill-to-limit.mjs', import.meta.url));
const backends = ['pool_arena', 'pool_classic', 'pool_global'] as const;
const backings = ['growable', 'wasm', 'fixed'] as const;
const classSizes = Array.from({ length: 16 }, (_, i) => 32 << i); // 32 B ... 1 MiB
const largeSizes = [1.5 * MiB, 2 * MiB, 4 * MiB];
const oversizedSizes = [8 * MiB, 16 * MiB, 64 * MiB];
const sizes = [...classSizes, ...largeSizes, ...oversizedSizes];

interface CellResult {
  backend: string;
  backing: string;
  size: number;
  counts: { prefill: number; fill: number; extra: number; other: number };
  share: number;
  topEnd: number;
  /** The arena's slot size (0 for the pools). */
  arenaBytes: number;
  refusal: string | null;
  afterwards: string[];
  fillMs: number;
  totalMs: number;
  problems: string[];
}

let running = 0;
const waiting: (() => void)[] = [];
async function slot<T>(run: () => Promise<T>): Promise<T> {
  if (running >= AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await run();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Runs every size of one backend on one backing in one child (each cell a fresh heap, collected after it). */
function fillAll(backend: string, backing: string): Promise<Map<number, CellResult>> {
  const dist = fileURLToPath(new URL(`../dist/${backend.replace('_', '-')}.js`, import.meta.url));
  const cellList = sizes.map((size) => `${size}:${size < PREFILL_BELOW ? 'prefill' : 'empty'}`).join(',');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', script, dist, backing, String(MAX_BYTES), cellList], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const results = new Map<number, CellResult>();
      for (const line of out.split('\n')) if (line.startsWith('{')) {
        const r = JSON.parse(line) as CellResult;
        results.set(r.size, r);
      }
      if (code !== 0) reject(new Error(`the fills of ${backend} on ${backing} exited with ${code} after ${results.size} cells: ${err.slice(-2000)}`));
      else resolve(results);
    });
  });
}

const runs = new Map<string, Promise<Map<number, CellResult>>>();
/** The results of one backend on one backing: its child starts when a slot is free, once. */
function resultsOf(backend: string, backing: string): Promise<Map<number, CellResult>> {
  const key = `${backend} ${backing}`;
  let run = runs.get(key);
  if (run === undefined) {
    run = slot(() => fillAll(backend, backing));
    runs.set(key, run);
  }
  return run;
}

const cells = backends.flatMap((backend) => backings.flatMap((backing) => sizes.map((size) => [backend, backing, size] as const)));

describe('a 4 GiB heap filled to the refusal with blocks of one size', () => {
  it.concurrent.each(cells)('%s, %s backing, %i bytes', { timeout: 600_000 }, async (backend, backing, size) => {
    const r = (await resultsOf(backend, backing)).get(size);
    if (r === undefined) throw new Error(`no result for ${size} bytes`);
    expect(r.backend).toBe(backend);
    expect(r.problems, `fill of ${r.counts.fill} blocks: ${r.problems.join('; ')}`).toEqual([]);
    expect(r.refusal).toMatch(/^OUT_OF_MEMORY/);
    expect(r.counts.fill).toBeGreaterThan(0);
    // The small size reached the top: 2^32 for the pools, the end of the arena's highest carved slot.
    if (size < PREFILL_BELOW) expect(r.topEnd, `the highest ${size}-byte block ends at ${r.topEnd}`).toBeGreaterThanOrEqual(MAX_BYTES - r.arenaBytes);
  });
});
