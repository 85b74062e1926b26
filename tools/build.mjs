#!/usr/bin/env node
// `pnpm build [use=flag,flag] [turbo args]`: checks the use= flags, exports them as PADDOCK_USE (a variable
// turbo.json declares, so each flag set is built and cached on its own), then runs `turbo run build`.
import { spawnSync } from 'node:child_process';
import { parseUse } from './use-flags.mjs';

let parsed;
try {
  parsed = parseUse(process.argv.slice(2));
} catch (err) {
  console.error(`pnpm build: ${err.message}`);
  process.exit(2);
}
const env = { ...process.env, PADDOCK_USE: parsed.flags, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };
const run = spawnSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only', ...parsed.rest], { stdio: 'inherit', env });
process.exit(run.status ?? 1);
