// The build flags `pnpm build use=...` accepts, parsed and checked before anything is built. A combination
// that cannot work stops the build with a message that says what to pair the flag with.
//
// The backends are declared once, as the conditions of the allocator's `#backend` import
// (packages/allocator/package.json, "imports"): backend `pool_x` is the condition `paddock-pool-x`, which
// selects its source module there and its bundle `dist/pool-x.js` through the package's exports; the entry
// `default` names the backend a plain build gets. tsup, vitest and TypeScript resolve `#backend` themselves
// from that declaration, given the condition; this module derives the flag list from it.
import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync(new URL('../packages/allocator/package.json', import.meta.url), 'utf8'));
const seam = manifest.imports?.['#backend'] ?? {};
const CONDITION = /^paddock-(pool-[a-z]+)$/;

/** The export and import condition that selects `backend` (`pool_classic` -> `paddock-pool-classic`). */
export function backendCondition(backend) {
  return `paddock-${backendBundle(backend)}`;
}
/** The name of `backend`'s own bundle in the allocator's dist (`pool_classic` -> `pool-classic`, for `dist/pool-classic.js`). */
export function backendBundle(backend) {
  return backend.replace('_', '-');
}

export const BACKENDS = Object.keys(seam).flatMap((c) => {
  const m = CONDITION.exec(c);
  return m ? [m[1].replace('-', '_')] : [];
});
export const DEFAULT_BACKEND = BACKENDS.find((b) => seam[backendCondition(b)] === seam.default);
if (DEFAULT_BACKEND === undefined) {
  throw new Error('packages/allocator/package.json: imports["#backend"] needs a paddock-pool-* condition per backend and a "default" naming one of their modules');
}
/** Flags that modify one backend only: flag -> the backend it needs. */
export const BACKEND_FLAGS = { pool_retain: 'pool_classic' };
/** Instrumentation that works with every backend. */
export const INSTRUMENTATION = ['pooltrack', 'checked'];
const KNOWN = new Set([...BACKENDS, ...Object.keys(BACKEND_FLAGS), ...INSTRUMENTATION]);

/** Parses `use=a,b` arguments (and PADDOCK_USE) into a checked flag list; throws an Error with the reason. */
export function parseUse(args, env = process.env) {
  const flags = [];
  const rest = [];
  for (const arg of args) {
    if (arg.startsWith('use=')) flags.push(...arg.slice(4).split(',').filter(Boolean));
    else rest.push(arg);
  }
  if (flags.length === 0 && env.PADDOCK_USE) flags.push(...env.PADDOCK_USE.split(',').filter(Boolean));
  for (const f of flags) {
    if (!KNOWN.has(f)) throw new Error(`unknown use= flag '${f}'; known flags: ${[...KNOWN].join(', ')}`);
  }
  const backends = [...new Set(flags.filter((f) => BACKENDS.includes(f)))];
  if (backends.length > 1) {
    throw new Error(`use= names more than one backend (${backends.join(' and ')}): a build has exactly one; pick one of them`);
  }
  const backend = backends[0] ?? DEFAULT_BACKEND;
  for (const f of flags) {
    const needs = BACKEND_FLAGS[f];
    if (needs && needs !== backend) {
      throw new Error(`use=${f} only applies to the ${needs} backend: pair it with use=${needs}${f === 'pool_retain' ? ',pool_retain' : ''} (this build's backend is ${backend})`);
    }
  }
  const others = [...new Set(flags.filter((f) => !BACKENDS.includes(f)))].sort();
  return { backend, flags: [backend, ...others].join(','), rest };
}
