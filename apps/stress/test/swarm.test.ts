// The swarm's CI slice (about 2 minutes on 2 cores): fixed seeds that cover the three backends, every pattern,
// kills with reaps on pool_arena and without on pool_global, detaches and departures; seeds that fill their heap
// (4 GiB included) to out of memory on each backend, and a planted bug at the top of 4 GiB; then fresh seeds for a
// bounded time; then planted bugs (one line of the arena's drain protocol, one of the global pool's free list,
// flipped in a private copy of the built packages) that the swarm must catch, with a seed that replays. The
// full soak is `pnpm stress swarm --minutes N` (docs/RELIABILITY.md).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { snapshotLib } from '../src/swarm-lib.js';
import { drawConfig } from '../src/swarm-protocol.js';
import { FILL_SEEDS, FIXED_SEEDS, GLOBAL_SEEDS } from './swarm-seeds.js';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const packages = fileURLToPath(new URL('../../../packages', import.meta.url));

/**
 * Flags the CI slice adds while a bug the swarm found is open (it ran `--no-detaches` until the adopter bug,
 * seed 0xd5ab86b8, was fixed in 69a6704, and `--tolerate-kill-leaks` until the kill/reap leaks were fixed in
 * 4d8a2ea and 13d093c; docs/RELIABILITY.md). None is open now.
 */
const OPEN_BUG_FLAGS: string[] = [];

function swarm(args: string[], timeoutMs: number): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, [main, 'swarm', ...args], { encoding: 'utf8', timeout: timeoutMs });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

describe('the swarm', () => {
  it('the fixed seeds cover the three backends, every pattern, kills, reaps, detaches and departures', () => {
    const global = GLOBAL_SEEDS.map((s) => drawConfig(Number(s)));
    expect(global.every((c) => c.backend === 'pool_global' && c.kills.length > 0 && c.kills.every((k) => !k.watch))).toBe(true);
    expect(global.some((c) => c.kills.some((k) => k.atOp > c.ops / 4 && k.atOp < (c.ops * 3) / 4))).toBe(true);
    const configs = [...FIXED_SEEDS.map((s) => drawConfig(Number(s), 1, { noGlobal: true })), ...global];
    expect(new Set(configs.map((c) => c.backend))).toEqual(new Set(['pool_arena', 'pool_classic', 'pool_global']));
    expect(new Set(configs.map((c) => c.pattern))).toEqual(new Set(['ring', 'producer-consumer', 'all-to-all']));
    expect(configs.some((c) => c.kills.some((k) => k.watch))).toBe(true);
    expect(configs.some((c) => c.kills.some((k) => !k.watch))).toBe(true);
    expect(configs.some((c) => c.detaches.length > 0)).toBe(true);
    expect(configs.every((c) => c.backend !== 'pool_classic' || c.kills.length === 0)).toBe(true);
    const departures = configs.flatMap((c) => c.departures.map((d) => ({ ...d, backend: c.backend })));
    expect(new Set(departures.map((d) => d.how))).toEqual(new Set(['natural', 'exit', 'close']));
    expect(new Set(departures.map((d) => d.backend))).toEqual(new Set(['pool_arena', 'pool_classic', 'pool_global']));
    expect(departures.some((d) => d.transit && d.handOff === 1)).toBe(true);
    expect(departures.some((d) => !d.transit)).toBe(true);
  });

  it('passes on the fixed seeds', () => {
    const r = swarm(['--seed', FIXED_SEEDS.join(','), '--no-global', '--scale', '0.6', ...OPEN_BUG_FLAGS], 85_000);
    console.log(r.out);
    expect(r.status).toBe(0);
    const verdict = r.out.trimEnd().split('\n').at(-1)!;
    expect(verdict).toMatch(/^swarm: PASS - 8 runs, /);
    // Departing workers left blocks they allocated live with other agents (who freed them into owners that left).
    const [, leftLive] = / left by ending their thread \((\d+) of their blocks live elsewhere/.exec(verdict)!;
    expect(Number(leftLive)).toBeGreaterThan(0);
    expect(r.out).not.toMatch(/known kill\/reap leak.*\n.*seed 0xc4f57283/); // a classic run never kills
  }, 95_000);

  it('passes on the pool_global seeds: the killed workers are never reaped, and only what they held stays live', () => {
    const r = swarm(['--seed', GLOBAL_SEEDS.join(','), '--scale', '0.6', ...OPEN_BUG_FLAGS], 40_000);
    console.log(r.out);
    expect(r.status).toBe(0);
    const verdict = r.out.trimEnd().split('\n').at(-1)!;
    expect(verdict).toMatch(/^swarm: PASS - 2 runs, .* 3 workers killed \(0 reaped, 0 of them by watch\)/);
    // The w8 run's two workers die holding blocks (a few hundred in every replay seen; the w4 run's consumer
    // held 4 to 71): they died with them, and the pool's live blocks at the end were exactly those.
    const died = [...r.out.matchAll(/^run \d+ seed \S+: global .* (\d+) died with a worker \(/gm)].map((m) => Number(m[1]));
    expect(died).toHaveLength(2);
    expect(died[0]).toBeGreaterThan(0);
  }, 50_000);

  it('fills heaps to their limit, 4 GiB included, on every backend: a clear out of memory, never a block twice', () => {
    const configs = FILL_SEEDS.map((s) => drawConfig(Number(s)));
    expect(configs.every((c) => c.fill !== null)).toBe(true);
    expect(new Set(configs.map((c) => c.backend))).toEqual(new Set(['pool_arena', 'pool_classic', 'pool_global']));
    expect(configs.filter((c) => c.backend === 'pool_arena' && c.heapBytes === 2 ** 32).length).toBeGreaterThanOrEqual(3);
    const r = swarm(['--seed', FILL_SEEDS.join(','), ...OPEN_BUG_FLAGS], 80_000);
    console.log(r.out);
    expect(r.status).toBe(0);
    const verdict = r.out.trimEnd().split('\n').at(-1)!;
    expect(verdict).toMatch(/^swarm: PASS - 6 runs, .* 6 heaps filled to out of memory \(\d+ blocks; /);
    // Every arena fill of a 4 GiB heap reached the region at its top, where a slab's end once wrapped to 0.
    const shares = [...r.out.matchAll(/^run \d+ seed \S+: arena .*4096MiB.* filled to the limit with \d+ blocks \(([\d.]+)% of maxBytes/gm)].map((m) => Number(m[1]));
    expect(shares).toHaveLength(3);
  }, 95_000);

  it('catches a planted bug: the slot that ends at 4 GiB is carved again', () => {
    const dest = mkdtempSync(join(tmpdir(), 'paddock-planted-top-'));
    temps.push(dest);
    // One word of the region header, flipped: the slot whose arena would end at 2^32 is no longer held out.
    const lib = snapshotLib(dest, [{ pkg: 'allocator', file: 'pool-arena.js', find: 'i32[b + 1] = 3 | this.heldOutBit(r)', replace: 'i32[b + 1] = 3' }], packages);
    const r = swarm(['--seed', FILL_SEEDS[0]!, '--lib', lib], 40_000);
    console.log(r.out);
    expect(r.status).toBe(1);
    expect(r.out.trimEnd().split('\n').at(-1)).toMatch(/^swarm: FAIL - 1 of 1 runs failed .*first: seed 0x89d900a8: /);
  }, 50_000);

  it('passes on fresh seeds for 30 s (a failure prints the seed to replay)', () => {
    const r = swarm(['--minutes', '0.5', '--scale', '0.4', ...OPEN_BUG_FLAGS], 90_000);
    console.log(r.out);
    expect(r.status).toBe(0);
    expect(r.out.trimEnd().split('\n').at(-1)).toMatch(/^swarm: PASS - \d+ runs, /);
  }, 110_000);

  it('catches a planted bug: drain skips every second batch of an inbox', () => {
    const dest = mkdtempSync(join(tmpdir(), 'paddock-planted-'));
    temps.push(dest);
    // One line of the drain protocol, flipped: as a batch begins, the queue moves on past the batch after it
    // (reaching it first, so the bug is the lost batch and never a read past this agent's views).
    const lib = snapshotLib(dest, [{ pkg: 'allocator', file: 'pool-arena.js', find: 'h.u32[dw + 0] = h.u32[bw + 3],', replace: 'h.u32[dw + 0] = h.u32[bw + 3] !== 0 && h.cover(h.u32[bw + 3] + 16) ? h.u32[(h.u32[bw + 3] >>> 2) + 3] : 0,' }], packages);
    const t0 = Date.now();
    const r = swarm(['--seed', FIXED_SEEDS.join(','), '--no-global', '--scale', '0.6', '--lib', lib], 80_000);
    console.log(r.out);
    expect(r.status).toBe(1);
    const verdict = r.out.trimEnd().split('\n').at(-1)!;
    expect(verdict).toMatch(/^swarm: FAIL - 1 of \d runs failed \(leak 1\); first: seed 0x[0-9a-f]{8}: live bytes at the end: /);
    const seed = /first: seed (0x[0-9a-f]{8})/.exec(verdict)![1]!;
    // More than twice what the open kill/reap leak ever loses (at most about 11 MB in the soak): the planted bug. (It
    // lost 42 to 88 MB in runs on Node 20 and 24; fewer steps run on a loaded machine, so less is lost.)
    const [, live, expected] = /live bytes at the end: (\d+), expected (\d+)/.exec(verdict)!;
    expect(Number(live) - Number(expected)).toBeGreaterThan(24 * 2 ** 20);
    const replay = `pnpm stress swarm --seed ${seed} --scale 0.6 --no-global --lib ${lib}`;
    expect(r.out).toContain(`replay: ${replay}`);
    console.log(`planted bug caught in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    // The printed seed replays the same run, which fails again.
    const again = swarm(replay.split(' ').slice(3), 40_000);
    console.log(again.out);
    expect(again.status).toBe(1);
    expect(again.out).toContain(`seed ${seed}: `);
  }, 130_000);

  it('catches a planted bug in the global pool: a push drops the free list behind the block it pushes', () => {
    const dest = mkdtempSync(join(tmpdir(), 'paddock-planted-global-'));
    temps.push(dest);
    // One line of the free list, flipped: a pushed block links to nothing instead of the old first block, so
    // the blocks behind it are free (marked) but on no list: the pool counts them live for good.
    const lib = snapshotLib(dest, [{ pkg: 'allocator', file: 'pool-global.js', find: 'u32[at] = s[0], s[0] = first', replace: 'u32[at] = 0, s[0] = first' }], packages);
    const r = swarm(['--seed', GLOBAL_SEEDS.join(','), '--scale', '0.6', '--lib', lib], 40_000);
    console.log(r.out);
    expect(r.status).toBe(1);
    const verdict = r.out.trimEnd().split('\n').at(-1)!;
    expect(verdict).toMatch(/^swarm: FAIL - 1 of \d runs failed \((leak|check) 1\); first: seed 0x[0-9a-f]{8}: /);
    const seed = /first: seed (0x[0-9a-f]{8})/.exec(verdict)![1]!;
    const replay = `pnpm stress swarm --seed ${seed} --scale 0.6 --lib ${lib}`;
    expect(r.out).toContain(`replay: ${replay}`);
    const again = swarm(replay.split(' ').slice(3), 40_000);
    expect(again.status).toBe(1);
    expect(again.out).toContain(`seed ${seed}: `);
  }, 90_000);

  it('rejects a bad argument with exit 2', () => {
    const r = swarm(['--runs', 'x'], 10_000);
    expect(r.status).toBe(2);
    expect(r.out).toMatch(/--runs needs a number/);
  });
});
