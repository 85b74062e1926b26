// The contract suite's agent in a module Web Worker: bundled once per backend, with that backend's export
// condition, so `@paddock/allocator` is that backend's build; what it does is agents/contract-agent.mjs.
import * as lib from '@paddock/allocator';
import { pageEndpoint } from '../../../../tools/test-utils/suite.ts';
import { serveContractAgent } from '../agents/contract-agent.mjs';

serveContractAgent(lib, await pageEndpoint());
