// The allocator contract, run against every backend: pool_arena, pool_classic and pool_global. The cases are
// in cases/contract.ts (the browser suite runs the same ones in Chromium); here they run under vitest, their
// agent a worker_threads Worker started under the export condition of the backend.
import { describe, expect, it } from 'vitest';
import { nodeAgents } from '../../../tools/test-utils/workers.js';
import { backends, contractCases } from './cases/contract.js';

const agents = nodeAgents(new URL('./workers/', import.meta.url), (backend) => [`paddock-${backend.replace('_', '-')}`]);

describe.each(backends)('contract: %s', (backend, create) => {
  contractCases({ it, expect }, backend, create, agents);
});
