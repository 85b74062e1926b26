// Builds the optional page-return addon during `pnpm install`. It must never fail the install:
// without the addon Paddock runs with pageReturn 'none'. node-gyp is pointed at the headers that ship
// with this Node (`<prefix>/include/node`) so the build needs no network.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const skip = (why) => {
  console.warn(`@paddock/platform: native page return not built (${why}); decommit will be bookkeeping only.`);
  process.exit(0);
};

if (process.env.PADDOCK_SKIP_NATIVE === '1') skip('PADDOCK_SKIP_NATIVE=1');
if (process.platform === 'win32') skip('madvise is not available on Windows');

const nodedir = join(dirname(process.execPath), '..');
const args = ['rebuild', '--release', '--loglevel=warn'];
if (existsSync(join(nodedir, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${nodedir}`);

let gyp;
try {
  gyp = createRequire(join(here, 'package.json')).resolve('node-gyp/bin/node-gyp.js');
} catch {
  const bundled = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (!existsSync(bundled)) skip('node-gyp not found');
  gyp = bundled;
}
const run = spawnSync(process.execPath, [gyp, ...args], { cwd: here, stdio: 'inherit', timeout: 180_000 });
if (run.status !== 0) skip(`node-gyp exited with ${run.status ?? run.signal}`);
console.log('@paddock/platform: native page return built');
