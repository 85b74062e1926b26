// The allocator's runtime suite: the contract (every backend) and the bad-input table (every backend) under
// Node 22, 24 and 26, Bun and Deno (tools/runtimes.json), one runtime after another: the cases of test/cases,
// bundled with their agents (a worker_threads Worker per backend, under that backend's export condition) and run
// by the runtime itself (tools/test-utils/runtimes.ts). Each case that ran there is a vitest case under
// `in <runtime>`; a runtime not installed here skips (CI installs them and requires them).
import { fileURLToPath } from 'node:url';
import { registerSuiteResults, type SuiteBuild } from '../../../tools/test-utils/browser.js';
import { RUNTIMES, runRuntimeSuite, runtimeAvailable } from '../../../tools/test-utils/runtimes.js';
import { backends } from './cases/contract.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const builds: SuiteBuild[] = [
  { entries: { main: here('./runtime/suite-main.ts') } },
  ...backends.map(([name]) => ({ entries: { [`contract-agent-${name}`]: here('./workers/contract-agent.mjs') }, conditions: [`paddock-${name.replace('_', '-')}`] })),
];

for (const r of RUNTIMES) {
  registerSuiteResults(`the allocator (contract and bad-input table, every backend; ${r.label} ${r.version})`, runtimeAvailable(r) ? await runRuntimeSuite(r, builds, 120_000) : null, r.label);
}
