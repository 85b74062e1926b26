// The swarm's runtime slice: a few of the CI slice's fixed seeds (swarm-seeds.ts), the built swarm
// (dist/main.js) run by Node 22, 24 and 26, Bun and Deno themselves (tools/runtimes.json), workers and all:
// pool_arena ring with a worker killed and reaped by watch, pool_classic ring with two detaches and a departure
// whose last sends are in transit, pool_global producer-consumer with a kill never reaped, a detach and a
// departure by process.exit. Each run is a vitest case under `in <runtime>`; a runtime not installed here skips
// (CI installs them and requires them).
//
// Deno emits a terminated worker's `exit` event while its thread may still run: the watch's reap waits until the
// thread stops answering its presence ping (the allocator's heap-base.ts), and the swarm waits for that reap.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RUNTIMES, runUnder, runtimeAvailable, type Runtime } from '../../../tools/test-utils/runtimes.js';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const app = fileURLToPath(new URL('..', import.meta.url));

/** The runs of the slice: the swarm's arguments and how many runs its verdict counts. */
function slice(r: Runtime): { what: string; args: string[]; runs: number }[] {
  return [
    { what: 'pool_arena and pool_classic seeds (a kill reaped by watch, detaches, a departure in transit)', args: ['--seed', '0x036d820c,0xc4f57283', '--no-global'], runs: 2 },
    { what: 'a pool_global seed (a kill never reaped, a detach, a departure by process.exit)', args: ['--seed', '0x7b071649'], runs: 1 },
  ];
}

for (const r of RUNTIMES) {
  const available = runtimeAvailable(r);
  describe(`in ${r.label}`, () => {
    describe(`the swarm (${r.label} ${r.version})`, () => {
      for (const s of slice(r)) {
        it.skipIf(!available)(s.what, async () => {
          const run = await runUnder(r, main, ['swarm', ...s.args, '--scale', '0.3'], 90_000, app);
          const verdict = run.out.trimEnd().split('\n').at(-1) ?? '';
          if (run.status !== 0) console.log(run.out.slice(-6000));
          expect(verdict).toMatch(new RegExp(`^swarm: PASS - ${s.runs} runs, `));
          expect(run.status).toBe(0);
          console.log(`${r.label}: ${verdict.slice(0, 160)} (${(run.ms / 1000).toFixed(1)} s)`);
        }, 100_000);
      }
    });
  });
}
