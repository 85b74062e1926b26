// The umbrella is built three times from one source: `dist/index.js` with the backend and flags chosen by
// `use=` (PADDOCK_USE, set by tools/build.mjs), and `dist/pool-arena.js` / `dist/pool-classic.js` with one
// backend each and no instrumentation, for the `paddock-pool-*` export conditions. `#backend` resolves to
// the chosen backend's module, so only that backend is imported by each bundle.
//
// Each bundle also carries the layers between the platform and this package, compiled from their sources
// (BUNDLED below): one module, so esbuild inlines their layout constants into the hot paths and the engine
// calls their functions without module-binding loads (measured: a malloc/free pair 15 -> 11 ns). The platform
// stays an import: it owns HeapError (whose identity callers test with instanceof) and finds its native addon
// relative to its own files. The layering check reads the sources, where every import is still by package name.
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';
import { preset } from '../../tools/tsup.preset.mjs';
import { parseUse } from '../../tools/use-flags.mjs';

const use = parseUse([], process.env);
/** The workspace layers bundled into the umbrella from their sources (package name -> folder). */
const BUNDLED: Record<string, string> = {
  '@paddock/profile': 'profile',
  '@paddock/region': 'region',
  '@paddock/registry': 'registry',
  '@paddock/arena': 'arena',
  '@paddock/thread-cache': 'thread-cache',
  '@paddock/large': 'large',
  '@paddock/pool-classic': 'pool-classic',
};
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
    noExternal: Object.keys(BUNDLED),
    esbuildPlugins: [
      {
        name: 'paddock-layer-sources',
        setup(build) {
          build.onResolve({ filter: /^@paddock\/[a-z-]+$/ }, (args) => {
            const dir = BUNDLED[args.path];
            return dir === undefined ? undefined : { path: here(`../${dir}/src/index.ts`) };
          });
        },
      },
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
