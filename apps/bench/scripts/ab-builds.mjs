// Runs bench programs on two or more builds in turn, arena against classic, for A/B figures on a noisy machine:
// each build's `packages/allocator/dist` is copied in place (the programs' workers load that folder), then
// `node apps/bench/dist/main.js --only paddock,paddock-classic,<programs> --rounds 5` runs, and the medians of the
// run are kept. The original dist is put back at the end, also on an error.
//   node apps/bench/scripts/ab-builds.mjs <alternations> <program,program,...> <dist folder> <dist folder> ...
// Copy a build's dist under packages/allocator/build/ (ignored by git) to keep it. Prints, per program and build,
// each run's "arena M/s / classic M/s = arena against classic", or for a program measured in ms (idle-100m,
// idle-1g) the arena's samples.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [times, programs, ...builds] = process.argv.slice(2);
if (!times || !programs || builds.length === 0) {
  console.error('usage: node apps/bench/scripts/ab-builds.mjs <alternations> <program,program,...> <dist folder> ...');
  process.exit(2);
}
const root = fileURLToPath(new URL('../../../', import.meta.url));
const dist = `${root}packages/allocator/dist`;
const kept = `${root}packages/allocator/.dist-ab-kept`;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const rows = new Map();
if (!existsSync(kept)) renameSync(dist, kept);
try {
  for (let i = 0; i < Number(times); i++) {
    for (const build of builds) {
      rmSync(dist, { recursive: true, force: true });
      cpSync(build, dist, { recursive: true });
      execFileSync('node', ['apps/bench/dist/main.js', '--only', `paddock,paddock-classic,${programs}`, '--rounds', '5'], { cwd: root, stdio: 'ignore' });
      const run = JSON.parse(readFileSync(`${root}apps/bench/results/latest.json`, 'utf8'));
      for (const p of run.programs) {
        const cell = (peer) => p.cells.find((c) => c.peer === peer);
        const key = `${p.name} ${build.replace(/\/+$/, '').split('/').pop()}`;
        if (!rows.has(key)) rows.set(key, []);
        if (p.metric === 'ms') {
          // A time (the idle programs): the arena's samples as they are, in ms.
          rows.get(key).push(cell('paddock').samples.map((s) => s.value.toFixed(0)).join('/'));
          continue;
        }
        const of = (peer) => median(cell(peer).samples.map((s) => s.value));
        const [a, c] = [of('paddock'), of('paddock-classic')];
        rows.get(key).push(`${(a / 1e6).toFixed(1)}/${(c / 1e6).toFixed(1)}=${((a / c - 1) * 100).toFixed(0)}%`);
      }
    }
  }
} finally {
  rmSync(dist, { recursive: true, force: true });
  renameSync(kept, dist);
}
for (const [key, runs] of [...rows].sort()) console.log(key.padEnd(32), runs.join('  '));
