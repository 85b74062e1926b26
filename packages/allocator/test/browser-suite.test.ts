// The allocator's browser suite: the contract (every backend) and the bad-input table (every backend) run in
// headless Chromium, main thread plus module Web Workers over one growable SharedArrayBuffer per heap, the
// page cross-origin isolated. One bundle and one browser for all of them; each case that ran there is a
// vitest case under `in Chromium` that fails with the page's error. The cases are test/cases, which vitest
// runs in Node too (contract.test.ts, bad-input-table.test.ts).
import { fileURLToPath } from 'node:url';
import { browserAvailable, registerSuiteResults, runSuitePage, type SuiteBuild } from '../../../tools/test-utils/browser.js';
import { backends } from './cases/contract.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const builds: SuiteBuild[] = [
  { entries: { page: here('./browser/suite-page.ts') } },
  // The contract's agent, once per backend: that backend's export condition picks its build of the allocator.
  ...backends.map(([name]) => ({ entries: { [`contract-agent-${name}`]: here('./browser/contract-agent.mjs') }, conditions: [`paddock-${name.replace('_', '-')}`] })),
];

registerSuiteResults('the allocator (contract and bad-input table, every backend)', browserAvailable() ? await runSuitePage(builds, 120_000) : null);
