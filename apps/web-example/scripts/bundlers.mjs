// How the example page is built: with Vite (index.html is its entry; it finds the worker through
// `new Worker(new URL('./worker.js', import.meta.url))`) or with esbuild (which does not follow that pattern, so
// the worker is a second entry point written beside the page's bundle, where the same URL finds it).
//
// The backend follows `use=` the way the repository's build does (tools/use-flags.mjs): a build whose flags name
// only a backend selects that backend's bundle through the allocator's export condition (`paddock-pool-classic`
// in Vite's `resolve.conditions` and esbuild's `conditions`); a build with instrumentation flags takes the
// allocator's `dist/index.js`, which `pnpm build use=...` built with those flags, after checking that it was.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { backendCondition, parseUse } from '../../../tools/use-flags.mjs';

export const APP = fileURLToPath(new URL('..', import.meta.url));
/** The headers that make a page cross-origin isolated, which a SharedArrayBuffer needs. */
export const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

/** Parses `use=` arguments (and PADDOCK_USE) as `pnpm build` does. */
export function readUse(args = [], env = process.env) {
  return parseUse(args, env);
}

/** The export conditions a build with these flags resolves `@paddock/allocator` under. */
export function backendConditions(use) {
  return use.flags === use.backend ? [backendCondition(use.backend)] : [];
}

/** Vite's settings for the page (also what vite.config.mjs exports, so `vite build`, `vite preview` and `vite` agree). */
export async function viteConfig(use, outDir = join(APP, 'dist')) {
  const { defaultClientConditions } = await import('vite');
  return {
    root: APP,
    configFile: false,
    resolve: { conditions: [...backendConditions(use), ...defaultClientConditions] },
    worker: { format: 'es' },
    build: { outDir, emptyOutDir: true, target: 'es2022', reportCompressedSize: false },
    server: { headers: ISOLATION },
    preview: { headers: ISOLATION },
  };
}

async function checkInstrumentedDist(use) {
  if (backendConditions(use).length > 0) return;
  const { BACKEND, INSTRUMENTATION } = await import('@paddock/allocator');
  const built = [BACKEND, ...INSTRUMENTATION].sort().join(',');
  const wanted = use.flags.split(',').filter((f) => f === use.backend || ['pooltrack', 'checked'].includes(f)).sort().join(',');
  if (built !== wanted) {
    throw new Error(`use=${use.flags} takes the allocator's dist/index.js, which was built with ${built}: run \`pnpm build use=${use.flags}\` first`);
  }
}

/** Builds the page with Vite into `outDir`. */
export async function buildWithVite(use, outDir) {
  await checkInstrumentedDist(use);
  const { build } = await import('vite');
  const t0 = performance.now();
  await build({ ...(await viteConfig(use, outDir)), logLevel: 'warn' });
  return summary('vite', use, outDir, t0);
}

/** Builds the page with esbuild into `outDir`: the page's bundle, the worker's, and index.html pointed at the first. */
export async function buildWithEsbuild(use, outDir) {
  await checkInstrumentedDist(use);
  const { build } = await import('esbuild');
  const t0 = performance.now();
  mkdirSync(outDir, { recursive: true });
  await build({
    absWorkingDir: APP,
    entryPoints: { main: 'src/main.ts', worker: 'src/worker.ts' },
    outdir: outDir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    conditions: backendConditions(use),
    minify: true,
    logLevel: 'warning',
  });
  const html = readFileSync(join(APP, 'index.html'), 'utf8');
  if (!html.includes('src="/src/main.ts"')) throw new Error('index.html no longer loads /src/main.ts: update the esbuild build');
  writeFileSync(join(outDir, 'index.html'), html.replace('src="/src/main.ts"', 'src="./main.js"'));
  return summary('esbuild', use, outDir, t0);
}

/** What a build made: its backend, conditions, time, and the bytes of its scripts (raw and gzipped). */
function summary(bundler, use, outDir, t0) {
  const ms = Math.round(performance.now() - t0);
  const scripts = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.js')) scripts.push(readFileSync(p));
    }
  };
  walk(outDir);
  return {
    bundler,
    backend: use.backend,
    flags: use.flags,
    conditions: backendConditions(use),
    outDir,
    ms,
    scripts: scripts.length,
    bytes: scripts.reduce((n, b) => n + b.length, 0),
    gzipBytes: scripts.reduce((n, b) => n + gzipSync(b).length, 0),
  };
}
