// The allocator's browser suite: the contract (every backend) and the bad-input table (every backend) run in
// headless Chromium and then in headless Firefox ESR (the same bundle), main thread plus module Web Workers over
// one growable SharedArrayBuffer per heap, the page cross-origin isolated. One bundle and one browser at a time
// for all of them; each case that ran there is a vitest case under `in Chromium` (or `in Firefox`) that fails
// with the page's error. The cases are test/cases, which vitest runs in Node too (contract.test.ts,
// bad-input-table.test.ts) and the other runtimes run too (runtime-suite.test.ts).
import { fileURLToPath } from 'node:url';
import { browserAvailable, registerSuiteResults, runSuitePage, type SuiteBuild } from '../../../tools/test-utils/browser.js';
import { backends } from './cases/contract.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const builds: SuiteBuild[] = [
  { entries: { page: here('./browser/suite-page.ts') } },
  // The contract's agent, once per backend: that backend's export condition picks its build of the allocator.
  ...backends.map(([name]) => ({ entries: { [`contract-agent-${name}`]: here('./browser/contract-agent.mjs') }, conditions: [`paddock-${name.replace('_', '-')}`] })),
];

const title = 'the allocator (contract and bad-input table, every backend)';
registerSuiteResults(title, browserAvailable() ? await runSuitePage(builds, 120_000) : null);
registerSuiteResults(title, browserAvailable('Firefox') ? await runSuitePage(builds, 180_000, 'Firefox') : null, 'Firefox');
