// The departures program is the test: every scenario of the built program must pass (about 9 s on 2 cores),
// each scenario's resident memory ending within 10 MiB of its baseline, and the pool's results all freed.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

it('departures: workers that end by themselves, are retired by a pool, or are terminated give their memory back', () => {
  const t0 = Date.now();
  const run = spawnSync(process.execPath, [main, 'departures'], { encoding: 'utf8', timeout: 60_000 });
  const ms = Date.now() - t0;
  if (run.status !== 0) console.log(run.stdout, run.stderr);
  expect(run.status).toBe(0);
  const lines = run.stdout.trimEnd().split('\n');
  expect(lines.at(-1)).toMatch(/^departures: PASS - 4 scenarios: resident memory back within 10 MiB of each baseline/);
  for (const title of ['exit, main idling', 'exit, main not idling', 'piscina pool retires', 'terminate \\+ watch']) {
    const row = lines.find((l) => new RegExp(`^  ${title} +baseline`).test(l));
    expect(row, title).toBeDefined();
    expect(row).toMatch(/ ok$/);
    const figure = (name: string) => Number(new RegExp(`${name} +([\\d.]+)`).exec(row!)?.[1]);
    expect(figure('peak') - figure('baseline'), `${title}: the payload was resident`).toBeGreaterThan(title.startsWith('piscina') ? 20 : 80);
  }
  // The pool's details: every result block freed and every pool worker gone, the main agent holding nothing.
  const pool = lines[lines.findIndex((l) => l.startsWith('  piscina pool retires')) + 1]!;
  expect(pool).toMatch(/^ +25600 blocks, 25\.0 MiB payload; (\d+) of \1 workers? exited/);
  expect(pool).toMatch(/main agent: live 0 B/);
  expect(ms).toBeLessThan(30_000);
}, 70_000);

it('rejects a bad argument with exit 2', () => {
  for (const args of [['--only', 'nope'], ['--mib', '0'], ['--frobnicate']]) {
    const run = spawnSync(process.execPath, [main, 'departures', ...args], { encoding: 'utf8', timeout: 10_000 });
    expect(run.status, args.join(' ')).toBe(2);
    expect(run.stderr).toMatch(/usage: node apps\/stress\/dist\/main.js departures/);
  }
});
