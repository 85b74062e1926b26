import { preset } from '../../tools/vitest.preset.mjs';
import { DEFAULT_BACKEND, backendCondition, parseUse } from '../../tools/use-flags.mjs';

// `#backend` follows the same use= flags as the build, so `pnpm test use=pool_classic` tests that backend: the
// backend's condition makes vite resolve `#backend` (package.json "imports") to its module; the default backend
// needs none. Vitest also starts its test processes with these conditions (`--conditions`), and worker threads
// inherit them: a test's worker that imports `@paddock/allocator` then loads that backend's bundle
// (dist/pool-classic.js), the backend the test itself compiled.
const backend = parseUse([], process.env).backend;
const config = preset();
export default backend === DEFAULT_BACKEND ? config : { ...config, ssr: { resolve: { conditions: [backendCondition(backend)] } } };
