// The demo is the main job: it must run, and what it prints must show the arena handing idle memory back
// while the classic pool keeps it, and a producer retired mid-run coming back through watch on the arena.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

it('runs both backends; the arena settles near its start when idle, the classic pool does not', () => {
  const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
  const run = spawnSync(process.execPath, [main], { encoding: 'utf8', timeout: 120_000 });
  expect(run.status).toBe(0);
  expect(run.stdout).toMatch(/native page return: active/);
  const line = (name: string) => new RegExp(`${name}: (\\d+) messages, (\\d+) damaged; held ([\\d.]+) MiB above the start, ([\\d.]+) MiB after`).exec(run.stdout);
  const arena = line('pool_arena');
  const classic = line('pool_classic');
  expect(arena).not.toBeNull();
  expect(classic).not.toBeNull();
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
  expect(Number(arena![4])).toBeLessThanOrEqual(10); // and given back
  expect(Number(classic![4])).toBeGreaterThan(80); // the classic pool keeps its memory
  // The producer terminated mid-run: reaped by watch on the arena (the heap's own figure is exact), not on the classic pool.
  const retired = /pool_arena: producer 2 terminated holding \d+ unsent messages \(([\d.]+) MiB\); heap.watch reaped it .* heap committed ([\d.]+) MiB -> ([\d.]+) MiB/.exec(run.stdout);
  expect(retired).not.toBeNull();
  expect(Number(retired![1])).toBeGreaterThan(16);
  expect(Number(retired![3])).toBeLessThan(1);
  expect(run.stdout).toMatch(/pool_classic: producer 2 terminated .* heap.watch returned false/);
});
