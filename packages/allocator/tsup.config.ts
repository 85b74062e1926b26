// The umbrella is built once per backend plus once more from one source: `dist/index.js` with the backend and
// flags chosen by `use=` (PADDOCK_USE, set by tools/build.mjs), and `dist/pool-<name>.js` per backend with that
// backend and no instrumentation, for the `paddock-pool-*` export conditions. Each bundle is built under its
// backend's condition, so `#backend` resolves (package.json "imports", the one declaration of the backends) to
// that backend's module, and only that backend is imported by the bundle.
//
// Each bundle also carries the layers between the platform and this package, compiled from their sources
// (BUNDLED below): one module, so esbuild inlines their layout constants into the hot paths and the engine
// calls their functions without module-binding loads (measured: a malloc/free pair 15 -> 11 ns). The platform
// stays an import: it owns HeapError (whose identity callers test with instanceof) and finds its native addon
// relative to its own files. The layering check reads the sources, where every import is still by package name.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';
import { preset } from '../../tools/tsup.preset.mjs';
import { BACKENDS, backendBundle, backendCondition, parseUse } from '../../tools/use-flags.mjs';

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
  '@paddock/pool-global': 'pool-global',
};
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// Each backend's bundle must be reachable through its export condition: a backend added to "imports" without
// its "exports" entry would build a bundle nobody can import.
const exported = (JSON.parse(readFileSync(here('./package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> }).exports['.']!;
for (const backend of BACKENDS) {
  const want = `./dist/${backendBundle(backend)}.js`;
  if (exported[backendCondition(backend)] !== want) {
    throw new Error(`package.json exports["."] needs "${backendCondition(backend)}": "${want}" for the ${backend} backend declared in imports["#backend"]`);
  }
}

function variant(name: string, backend: string, flags: string[], dts: boolean): Options {
  const conditions = [backendCondition(backend)];
  return preset({
    entry: { [name]: 'src/index.ts' },
    dts: dts && { compilerOptions: { customConditions: conditions } },
    clean: false,
    define: {
      __PADDOCK_TRACK__: String(flags.includes('pooltrack')),
      __PADDOCK_CHECKED__: String(flags.includes('checked')),
      __PADDOCK_RETAIN__: String(flags.includes('pool_retain')),
    },
    noExternal: Object.keys(BUNDLED),
    esbuildOptions(options) {
      options.conditions = conditions;
    },
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
    ],
  }) as Options;
}

export default defineConfig([
  variant('index', use.backend, use.flags.split(','), true),
  ...BACKENDS.map((backend) => variant(backendBundle(backend), backend, [], false)),
]);
