#!/usr/bin/env node
// Installs the runtimes of tools/runtimes.json into .runtimes/<id>/ (gitignored), each from its npm registry
// package at the pinned version (`npm pack <package>@<version>`, then untar): nothing is downloaded from
// anywhere else. A runtime already there at its version is kept, so CI's cache of .runtimes/ is reused.
// `--check` only says which are missing. .ci/run calls this; locally, `node tools/install-runtimes.mjs`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { runtimes } = JSON.parse(readFileSync(join(root, 'tools', 'runtimes.json'), 'utf8'));
const cache = process.env.PADDOCK_RUNTIMES_DIR ?? join(root, '.runtimes');
const checkOnly = process.argv.includes('--check');
let missing = 0;
for (const r of runtimes) {
  const dir = join(cache, r.id);
  const stamp = join(dir, 'installed.json');
  const have = existsSync(stamp) && JSON.parse(readFileSync(stamp, 'utf8')).version === r.version && existsSync(join(dir, r.bin));
  if (have) continue;
  if (checkOnly) {
    console.log(`missing: ${r.label} (${r.package}@${r.version})`);
    missing++;
    continue;
  }
  const t0 = Date.now();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('npm', ['pack', `${r.package}@${r.version}`, '--silent'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack ${r.package}@${r.version} left no tarball in ${dir}`);
  execFileSync('tar', ['xzf', tarball], { cwd: dir });
  rmSync(join(dir, tarball));
  const version = execFileSync(join(dir, r.bin), ['--version'], { encoding: 'utf8' }).trim();
  if (!version.includes(r.version)) throw new Error(`${r.label}: ${join(dir, r.bin)} --version says ${version}, not ${r.version}`);
  writeFileSync(stamp, JSON.stringify({ package: r.package, version: r.version }));
  console.log(`installed ${r.label} ${r.version} (${r.package}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
process.exit(checkOnly && missing > 0 ? 1 : 0);
