// The swarm's browser slice: the CI slice's fixed seeds (every backend, every pattern, kills by
// `worker.terminate()`, detaches) run in headless Chromium by the swarm's own runs, main thread plus module Web Workers over one
// growable SharedArrayBuffer, checked against the ledger as in Node. Without departures (a Web Worker never
// ends by itself) and with every kill reaped explicitly: `terminate()` returns before a Web Worker's thread has
// stopped, so the run waits on the worker's own Web Lock before it reaps, while a watch reaps by the agent's
// lock on its own time. Each seed that ran there is a vitest case under `in Chromium`.
import { fileURLToPath } from 'node:url';
import { browserAvailable, registerSuiteResults, runSuitePage, type SuiteBuild } from '../../../tools/test-utils/browser.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const builds: SuiteBuild[] = [
  { entries: { page: here('./browser/swarm-page.ts'), 'swarm-worker': here('../src/swarm-worker.ts') } },
  ...['pool_arena', 'pool_classic', 'pool_global'].map((b) => ({ entries: { [b.replace('_', '-')]: here('./browser/lib.ts') }, conditions: [`paddock-${b.replace('_', '-')}`] })),
];

registerSuiteResults('the swarm (fixed seeds, every backend)', browserAvailable() ? await runSuitePage(builds, 240_000) : null);
