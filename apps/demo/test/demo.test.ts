// The demo is the main job: it must run, and what it prints must show the arena handing idle memory back
// while the classic pool keeps it, and a producer retired mid-run coming back through watch on the arena. It runs
// under the Node that runs vitest and again under Node 22, 24 and 26 (tools/runtimes.json; skipped where not
// installed). Paddock's own figure (the heap's committed bytes) must fall back to its start; the process's resident
// memory must give back at least 80 of the ~100 MiB held, not settle within a fixed distance of its start: what
// stays above the start after 2.5 s idle is the runtime's (its threads' malloc arenas and V8 heaps, 8 to 40 MiB
// by Node version and load, measured; the README's "Runs on" says so), with Paddock's committed bytes under 1 MiB.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RUNTIMES, runtimeAvailable, runtimeBinary } from '../../../tools/test-utils/runtimes.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

function checkDemo(node: string): void {
  const run = spawnSync(node, [MAIN], { encoding: 'utf8', timeout: 120_000 });
  expect(run.status, run.stderr).toBe(0);
  expect(run.stderr).not.toContain('\r'); // not a terminal: plain lines
  expect(run.stdout).toMatch(/native page return: active/);
  const line = (name: string) =>
    new RegExp(`${name}: (\\d+) messages, (\\d+) damaged; held ([\\d.]+) MiB above the start, ([\\d.]+) MiB after .*; Paddock committed ([\\d.]+) MiB at the start, ([\\d.]+) MiB after`).exec(run.stdout);
  const arena = line('pool_arena');
  const classic = line('pool_classic');
  expect(arena, run.stdout).not.toBeNull();
  expect(classic, run.stdout).not.toBeNull();
  // Every message went through the channel (no offset posted), and the channel counted them all received.
  for (const name of ['pool_arena', 'pool_classic']) {
    const handed = new RegExp(`${name}: (\\d+) blocks handed from 2 producers to the consumer through one channel \\(capacity \\d+; the channel counted (\\d+) received`).exec(run.stdout);
    expect(handed).not.toBeNull();
    expect(Number(handed![2])).toBe(Number(handed![1]));
    expect(Number(handed![1])).toBe(Number(line(name)![1]));
  }
  expect(Number(arena![2])).toBe(0);
  expect(Number(classic![2])).toBe(0);
  expect(Number(arena![3])).toBeGreaterThan(80); // about 100 MiB was really held
  expect(Number(arena![3]) - Number(arena![4])).toBeGreaterThanOrEqual(80); // and went back to the OS
  expect(Number(arena![6])).toBeLessThan(1); // Paddock's own: committed back to (near) nothing
  expect(Number(classic![4])).toBeGreaterThan(80); // the classic pool keeps its memory
  expect(Number(classic![6])).toBeGreaterThan(80);
  console.log(`${node === process.execPath ? process.version : node}: ${arena![0]}`);
  // The producer terminated mid-run: reaped by watch on the arena (the heap's own figure is exact), not on the classic pool.
  const retired = /pool_arena: producer 2 terminated holding \d+ unsent messages \(([\d.]+) MiB\); heap.watch reaped it .* heap committed ([\d.]+) MiB -> ([\d.]+) MiB/.exec(run.stdout);
  expect(retired).not.toBeNull();
  expect(Number(retired![1])).toBeGreaterThan(16);
  expect(Number(retired![3])).toBeLessThan(1);
  expect(run.stdout).toMatch(/pool_classic: producer 2 terminated .* heap.watch returned false/);
}

it('runs both backends; the arena gives its idle memory back, the classic pool does not', () => checkDemo(process.execPath));

for (const r of RUNTIMES.filter((r) => r.id.startsWith('node'))) {
  describe(`in ${r.label}`, () => {
    it.skipIf(!runtimeAvailable(r))(`the demo (${r.label} ${r.version}): the arena gives its idle memory back, the classic pool does not`, () => checkDemo(runtimeBinary(r)), 130_000);
  });
}
