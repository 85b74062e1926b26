import { fileURLToPath } from 'node:url';
import { preset } from '../../tools/vitest.preset.mjs';
import { parseUse } from '../../tools/use-flags.mjs';

// `#backend` follows the same use= flags as the build, so `pnpm test use=pool_classic` tests that backend.
const backend = parseUse([], process.env).backend === 'pool_classic' ? 'backend-classic' : 'backend-arena';
const config = preset();
export default {
  ...config,
  resolve: { alias: { '#backend': fileURLToPath(new URL(`./src/${backend}.ts`, import.meta.url)) } },
};
