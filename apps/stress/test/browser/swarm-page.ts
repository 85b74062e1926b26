// The page of the swarm's browser slice: fixed seeds run by the swarm's own runs (src/swarm-run.ts) on the
// page's main thread, their workers module Web Workers (src/swarm-host-browser.ts), each heap one growable
// SharedArrayBuffer. As `--no-departures --no-watch` in Node: a Web Worker never ends by itself, and the kills
// (`terminate()`) are reaped explicitly (see swarm-browser.test.ts). Reports through `window.__done`.
import { PageSuite } from '../../../../tools/test-utils/suite.js';
import { describeConfig, drawConfig } from '../../src/swarm-protocol.js';
import { hex, runOne } from '../../src/swarm-run.js';
import { FIXED_SEEDS, GLOBAL_SEEDS } from '../swarm-seeds.js';

/** The share of each seed's operations the browser runs (as Node's CI slice). */
const SCALE = 0.6;

const page = window as unknown as { __step?: string; __done?: unknown };
const suite = new PageSuite();
try {
  // Every fixed seed of the CI slice (swarm-seeds.ts): arena, classic and global runs of every pattern, kills
  // and detaches, oversized blocks and realloc chains; their departures left out and their kills unwatched.
  const configs = [...FIXED_SEEDS.map((s) => drawConfig(Number(s), SCALE, { noGlobal: true, noFill: true })), ...GLOBAL_SEEDS.map((s) => drawConfig(Number(s), SCALE, { noFill: true }))];
  const t = suite.group('the swarm');
  for (const config of configs) {
    config.departures = [];
    for (const k of config.kills) k.watch = false;
    t.it(`seed ${hex(config.seed)} at scale ${SCALE}: ${describeConfig(config)}`, async () => {
      const f = await runOne(config, `${location.origin}/`, 60_000, () => {});
      if (!f.ok) throw new Error(`seed ${f.seed}: ${f.reason}`);
      t.expect(f.kills).toBe(config.kills.length);
      t.expect(f.detaches).toBe(config.detaches.length);
      t.expect(f.checks).toBeGreaterThanOrEqual(1 + config.kills.length);
      return `${f.blocks} blocks, ${f.sent} sent, ${f.reallocs} reallocs, ${f.kills} killed (${f.reaps} reaped), ${f.detaches} detached, ${f.died} died with a worker, ${f.checks} checks`;
    });
  }
  const results = await suite.run((name) => (page.__step = name));
  page.__done = { registered: suite.size, results, crossOriginIsolated };
} catch (err) {
  page.__done = { error: (err as Error).stack ?? String(err), registered: suite.size, results: [], crossOriginIsolated };
}
