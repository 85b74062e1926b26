// The suspend-drain program is the test: one round of the built program must pass, and its verdict must
// show resident memory falling and climbing back by at least half the 128 MiB payload.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

it('suspend-drain: memory freed by one worker while the others idle goes back, then comes back with new work', () => {
  const t0 = Date.now();
  const run = spawnSync(process.execPath, [main, 'suspend-drain', '--rounds', '1', '--timeout', '25'], { encoding: 'utf8', timeout: 30_000 });
  const ms = Date.now() - t0;
  if (run.status !== 0) console.log(run.stdout, run.stderr);
  expect(run.status).toBe(0);
  const verdict = run.stdout.trimEnd().split('\n').at(-1)!;
  expect(verdict).toMatch(/^suspend-drain: PASS - 1 round, payload 128\.0 MiB: /);
  const fell = Number(/resident fell by ([\d.]+) MiB/.exec(verdict)?.[1]);
  const climbed = Number(/climbed back by ([\d.]+) MiB/.exec(verdict)?.[1]);
  expect(fell).toBeGreaterThanOrEqual(64);
  expect(climbed).toBeGreaterThanOrEqual(64);
  expect(ms).toBeLessThan(30_000);
}, 40_000);

it('rejects a bad argument with exit 2', () => {
  const run = spawnSync(process.execPath, [main, 'suspend-drain', '--rounds', 'x'], { encoding: 'utf8', timeout: 10_000 });
  expect(run.status).toBe(2);
  expect(run.stderr).toMatch(/--rounds needs a number/);
});
