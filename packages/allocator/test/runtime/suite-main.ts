// The allocator's runtime suite (runtime-suite.test.ts runs it under Node 22, 24 and 26, Bun and Deno): the
// contract on every backend and the bad-input table on every backend, the very cases vitest runs under the Node
// that runs it (test/cases), the contract's agent a worker_threads Worker bundled for the backend under test.
// A slice: the contract's 100k seeded operations (a minute per backend on 2 busy cores, with the native page
// return) run under the Node that runs vitest and in Chromium and Firefox, not five times more here.
import { reportSuite, threadAgents } from '../../../../tools/test-utils/runtime-host.js';
import { PageSuite, type Suite } from '../../../../tools/test-utils/suite.js';
import { backends as tableBackends, badInputCases } from '../cases/bad-input-table.js';
import { backends as contractBackends, contractCases } from '../cases/contract.js';

const SLOW = /^100k seeded operations/;
const slice = (g: Suite): Suite => ({
  it: (name, fn) => {
    if (!SLOW.test(name)) g.it(name, fn);
  },
  expect: (actual) => g.expect(actual),
});

const suite = new PageSuite();
await reportSuite(suite, () => {
  for (const [name, create] of contractBackends) contractCases(slice(suite.group(`contract: ${name}`)), name, create, threadAgents);
  for (const b of tableBackends) badInputCases(suite.group(`the bad-input table on ${b.name}`), b);
});
