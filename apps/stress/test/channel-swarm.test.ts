// The channel-swarm program run as a test: two seeded runs (their backends, capacities and worker counts drawn from
// the seeds; the events' timing is the machine's) must pass, and a bad argument exits 2.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

it('channel-swarm: blocks through a channel while producers and consumers are killed and depart', () => {
  const run = spawnSync(process.execPath, [main, 'channel-swarm', '--seed', '0x2cf5be60'], { encoding: 'utf8', timeout: 120_000 });
  const again = spawnSync(process.execPath, [main, 'channel-swarm', '--seed', '0x524e4d41'], { encoding: 'utf8', timeout: 120_000 });
  for (const r of [run, again]) {
    if (r.status !== 0) console.log(r.stdout, r.stderr);
    expect(r.status).toBe(0);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('channel-swarm: PASS - 1 runs');
    expect(r.stdout).toMatch(/: \d+ killed, \d+ departed, [1-9]\d* received/);
  }
  expect(run.stdout).toMatch(/pool_arena/);
  expect(again.stdout).toMatch(/pool_global/);
}, 250_000);

it('rejects a bad argument with exit 2', () => {
  for (const args of [['--seeds', '0'], ['--backend', 'nope'], ['--frobnicate']]) {
    const run = spawnSync(process.execPath, [main, 'channel-swarm', ...args], { encoding: 'utf8', timeout: 10_000 });
    expect(run.status, args.join(' ')).toBe(2);
  }
});
