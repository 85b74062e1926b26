// The umbrella is built three times from one source: `dist/index.js` with the backend and flags chosen by
// `use=` (PADDOCK_USE, set by tools/build.mjs), and `dist/pool-arena.js` / `dist/pool-classic.js` with one
// backend each and no instrumentation, for the `paddock-pool-*` export conditions. `#backend` resolves to
// the chosen backend's module, so only that backend is imported by each bundle.
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';
import { preset } from '../../tools/tsup.preset.mjs';
import { parseUse } from '../../tools/use-flags.mjs';

const use = parseUse([], process.env);
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

function variant(name: string, backend: string, flags: string[], dts: boolean): Options {
  return preset({
    entry: { [name]: 'src/index.ts' },
    dts,
    clean: false,
    define: {
      __PADDOCK_TRACK__: String(flags.includes('pooltrack')),
      __PADDOCK_CHECKED__: String(flags.includes('checked')),
      __PADDOCK_RETAIN__: String(flags.includes('pool_retain')),
    },
    esbuildPlugins: [
      {
        name: 'paddock-backend',
        setup(build) {
          build.onResolve({ filter: /^#backend$/ }, () => ({
            path: here(backend === 'pool_classic' ? './src/backend-classic.ts' : './src/backend-arena.ts'),
          }));
        },
      },
    ],
  }) as Options;
}

export default defineConfig([
  variant('index', use.backend, use.flags.split(','), true),
  variant('pool-arena', 'pool_arena', [], false),
  variant('pool-classic', 'pool_classic', [], false),
]);
