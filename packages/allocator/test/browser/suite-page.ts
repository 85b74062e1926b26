// The page of the allocator's browser suite: the contract, the views and strings, and the bad-input table on every
// backend, the very cases vitest runs in Node (test/cases), on the page's main thread, the contract's agent a
// module Web Worker built for the backend under test. Reports through `window.__done` (see runSuitePage).
import { PageSuite, pageAgents } from '../../../../tools/test-utils/suite.js';
import { backends as tableBackends, badInputCases } from '../cases/bad-input-table.js';
import { backends as contractBackends, contractCases } from '../cases/contract.js';
import { viewStringCases } from '../cases/views-strings.js';

const page = window as unknown as { __step?: string; __done?: unknown };
const suite = new PageSuite();
try {
  page.__step = 'registering the cases';
  for (const [name, create] of contractBackends) contractCases(suite.group(`contract: ${name}`), name, create, pageAgents);
  for (const [name, create] of contractBackends) viewStringCases(suite.group(`views and strings: ${name}`), name, create);
  for (const b of tableBackends) badInputCases(suite.group(`the bad-input table on ${b.name}`), b);
  const results = await suite.run((name) => (page.__step = name));
  page.__done = { registered: suite.size, results, crossOriginIsolated };
} catch (err) {
  page.__done = { error: (err as Error).stack ?? String(err), registered: suite.size, results: [], crossOriginIsolated };
}
