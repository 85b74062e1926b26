// Builds the page-return addon from source with node-gyp into build/Release, pointed at the headers that ship
// with this Node (`<prefix>/include/node`) so the build needs no network. Shared by the install script
// (build-native.mjs) and the script that makes the prebuilt binary (prebuild.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's folder. */
export const PACKAGE_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
/** Where node-gyp puts the addon. */
export const BUILT_ADDON = join(PACKAGE_DIR, 'build', 'Release', 'paddock_page_return.node');
/** Where the prebuilt addon for this platform lives (the layout node-gyp-build reads: one N-API binary per platform-arch). */
export const PREBUILT_ADDON = join(PACKAGE_DIR, 'prebuilds', `${process.platform}-${process.arch}`, 'node.napi.node');

/** Runs node-gyp in `dir` (a folder with binding.gyp and native/); returns null when the addon was built, else why not. */
export function buildAddon(dir = PACKAGE_DIR) {
  if (process.platform === 'win32') return 'madvise is not available on Windows';
  const nodedir = join(dirname(process.execPath), '..');
  const args = ['rebuild', '--release', '--loglevel=warn'];
  if (existsSync(join(nodedir, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${nodedir}`);
  let gyp;
  try {
    gyp = createRequire(join(PACKAGE_DIR, 'package.json')).resolve('node-gyp/bin/node-gyp.js');
  } catch {
    gyp = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    if (!existsSync(gyp)) return 'node-gyp not found';
  }
  const run = spawnSync(process.execPath, [gyp, ...args], { cwd: dir, stdio: 'inherit', timeout: 180_000 });
  return run.status === 0 ? null : `node-gyp exited with ${run.status ?? run.signal}`;
}

/** Whether the addon at `file` loads in a fresh Node process (so a binary for another platform or ABI is not trusted). */
export function addonLoads(file) {
  if (!existsSync(file)) return false;
  const probe = `const a = require(${JSON.stringify(file)}); if (typeof a.discard !== 'function') process.exit(1);`;
  return spawnSync(process.execPath, ['-e', probe], { stdio: 'ignore', timeout: 30_000 }).status === 0;
}
