// The departures program run as a test. Resident memory is the program's own verdict (10 MiB by default,
// measured by hand: see docs/guides/worker-pools.md); this machine is shared and a process's RSS moves by a few
// MiB with V8 and glibc, so here the bound is wide enough to catch only memory that never came back (a worker's
// whole ~100 MiB payload), and the exact figures are the heap's own: committed bytes back to their baseline,
// no arena carved, the main agent holding nothing.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

it('departures: workers that end by themselves, are retired by a pool, or are terminated give their memory back', () => {
  const run = spawnSync(process.execPath, [main, 'departures', '--bound', '40'], { encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0) console.log(run.stdout, run.stderr);
  expect(run.status).toBe(0);
  const lines = run.stdout.trimEnd().split('\n');
  expect(lines.at(-1)).toMatch(/^departures: PASS - 4 scenarios: resident memory back within 40 MiB of each baseline/);
  for (const title of ['exit, main idling', 'exit, main not idling', 'piscina pool retires', 'terminate \\+ watch']) {
    const at = lines.findIndex((l) => new RegExp(`^  ${title} +baseline`).test(l));
    expect(at, title).toBeGreaterThanOrEqual(0);
    const row = lines[at]!;
    const details = lines[at + 1]!;
    const figure = (name: string) => Number(new RegExp(`${name} +([\\d.]+)`).exec(row)?.[1]);
    expect(figure('peak') - figure('baseline'), `${title}: the payload was resident`).toBeGreaterThan(title.startsWith('piscina') ? 20 : 80);
    const [, before, , after] = /committed ([\d.]+) -> ([\d.]+) -> ([\d.]+) MiB/.exec(details) ?? [];
    // What stays committed by design: the first page of each agent area a worker used (the list of areas runs
    // through it) and the registry's pages for the owner slots taken, 20 KiB in the pool's case: within the
    // figures' rounding of 0.1 MiB, whichever way it falls.
    expect(Number(after) - Number(before), `${title}: committed bytes back to the baseline`).toBeLessThanOrEqual(0.1);
    expect(details).toMatch(/arenas carved 0;/);
    expect(details).toMatch(/main agent: live 0 B/);
  }
  const pool = lines[lines.findIndex((l) => l.startsWith('  piscina pool retires')) + 1]!;
  expect(pool).toMatch(/^ +25600 blocks, 25\.0 MiB payload; (\d+) of \1 workers? exited/);
}, 70_000);

it('rejects a bad argument with exit 2', () => {
  for (const args of [['--only', 'nope'], ['--mib', '0'], ['--frobnicate']]) {
    const run = spawnSync(process.execPath, [main, 'departures', ...args], { encoding: 'utf8', timeout: 10_000 });
    expect(run.status, args.join(' ')).toBe(2);
    expect(run.stderr).toMatch(/usage: node apps\/stress\/dist\/main.js departures/);
  }
});
