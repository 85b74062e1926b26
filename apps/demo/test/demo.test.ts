// The demo is the main job: it must run, and what it prints must show the pages really went back.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

it('runs, and the decommitting worker gives the 256 MiB back', () => {
  const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
  const run = spawnSync(process.execPath, [main], { encoding: 'utf8', timeout: 60_000 });
  expect(run.status).toBe(0);
  expect(run.stdout).toMatch(/native page return: active/);
  expect(run.stdout).toMatch(/pages that still hold data, read by the main thread: 0 of 65536/);
  const fell = Number(/resident fell by\s+([\d.]+) MiB/.exec(run.stdout)?.[1]);
  expect(fell).toBeGreaterThanOrEqual(230);
});
