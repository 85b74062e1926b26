// The build flags `pnpm build use=...` accepts, parsed and checked before anything is built.
// A flag combination that cannot work stops the build with a message that says what to pair it with.
export const BACKENDS = ['pool_arena'];
export const DEFAULT_BACKEND = 'pool_arena';
const KNOWN = new Set([...BACKENDS]);

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
  const backends = flags.filter((f) => BACKENDS.includes(f));
  if (new Set(backends).size > 1) throw new Error(`use= names more than one backend (${backends.join(', ')}): pick one`);
  const backend = backends[0] ?? DEFAULT_BACKEND;
  const normalized = [backend, ...flags.filter((f) => !BACKENDS.includes(f))].sort().join(',');
  return { backend, flags: normalized, rest };
}
