// What a user installs from the registry, tried outside the repository: every package is packed (`pnpm pack`, which
// turns `workspace:*` into versions and runs `prepack`: the platform's prebuilt addon), the tarballs hold only what a
// user needs, publint and arethetypeswrong find nothing, and fresh projects (no workspace, no dev dependencies)
// install them with npm on a PATH that has no compiler and run the example at the top of each README: the
// allocator on all three backends (through its export conditions), the channel above it, the platform alone, and a
// middle layer alone; then the allocator's example (all three backends) and the prebuilt addon's page return under
// each of the other runtimes (Node 22, 24 and 26, Bun, Deno: tools/runtimes.json), in the same installed project.
// `pnpm test` builds first; run alone, this needs `pnpm build` before it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNTIMES, runtimeAvailable, runtimeBinary, type Runtime } from '../test-utils/runtimes.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const packagesDir = join(root, 'packages');
const packages = readdirSync(packagesDir)
  .filter((d) => existsSync(join(packagesDir, d, 'package.json')))
  .sort();

/** npm's own script, found the way a shell would (a fresh machine with Node 20 has npm). */
function npmCli(): string | null {
  const found = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' });
  return found.status === 0 ? realpathSync(found.stdout.trim()) : null;
}
const npm = npmCli();

let work = '';
/** Package folder name -> its tarball. */
const tarballs = new Map<string, string>();
/** A folder on PATH with node and sh and nothing else: no cc, no make, no python. */
let noCompilerPath = '';

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 240_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}${r.error ? String(r.error) : ''}` };
}

/** The body of the first ```js fence of the package's README. */
function readmeExample(pkg: string): string {
  const found = /^```js[ \t]*\r?\n([\s\S]*?)^```[ \t]*$/m.exec(readFileSync(join(packagesDir, pkg, 'README.md'), 'utf8'));
  if (!found) throw new Error(`packages/${pkg}/README.md has no js example`);
  return found[1]!;
}

/** A fresh project outside the repository with the tarballs of `pkgs` (and nothing else) installed by npm, no compiler on PATH. */
function project(name: string, pkgs: string[]): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `try-${name}`, private: true, type: 'module' }));
  const env = { ...process.env, PATH: noCompilerPath, npm_config_update_notifier: 'false' };
  delete env.PADDOCK_PAGE_RETURN;
  // --offline: every package it needs is one of the tarballs given; without it npm asks the registry for each
  // @paddock name (404s), and its retries on a slow network ran past the timeout.
  const r = run(process.execPath, [npm!, 'install', '--no-audit', '--no-fund', '--offline', ...pkgs.map((p) => tarballs.get(p)!)], dir, env);
  if (r.status !== 0) throw new Error(`npm install in ${name} failed:\n${r.out}`);
  return dir;
}

/**
 * Runs `code` from a file in `dir` with node (or `runtime`: Deno as `deno run -A`) and `args`; returns its output,
 * failing on a non-zero exit.
 */
function runIn(dir: string, code: string, args: string[] = [], runtime?: Runtime): string {
  const file = join(dir, `example-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, code);
  const [bin, pre] = runtime ? [runtimeBinary(runtime), runtime.args] : [process.execPath, []];
  const r = run(bin, [...pre, ...args, file], dir, { ...process.env, PATH: noCompilerPath, PADDOCK_PAGE_RETURN: '', NO_COLOR: '1' });
  expect(r.status, `${runtime?.label ?? 'node'}: ${r.out}`).toBe(0);
  return r.out;
}

/** Frees 64 MiB the heap touched and returns it: which addon did, and how much resident memory dropped. */
const PAGE_RETURN = `import { createHeap } from '@paddock/allocator';
const heap = createHeap({ maxBytes: 1 << 30 });
const ps = Array.from({ length: 64 }, () => heap.malloc(1 << 20));
for (const p of ps) heap.u8.fill(1, p, p + (1 << 20));
const before = process.memoryUsage.rss();
for (const p of ps) heap.free(p);
heap.returnIdle();
console.log(JSON.stringify({ addon: heap.stats().pageReturnAddon, dropMiB: (before - process.memoryUsage.rss()) / 2 ** 20 }));`;

describe.skipIf(npm === null)('the packages, packed and installed outside the repository', () => {
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'paddock-packed-'));
    noCompilerPath = join(work, 'bin');
    mkdirSync(noCompilerPath);
    symlinkSync(process.execPath, join(noCompilerPath, 'node'));
    symlinkSync(realpathSync(spawnSync('sh', ['-c', 'command -v sh'], { encoding: 'utf8' }).stdout.trim()), join(noCompilerPath, 'sh'));
    const packs = join(work, 'tarballs');
    mkdirSync(packs);
    for (const pkg of packages) {
      const r = run('pnpm', ['pack', '--pack-destination', packs], join(packagesDir, pkg));
      if (r.status !== 0) throw new Error(`pnpm pack in packages/${pkg} failed:\n${r.out}`);
      const name = JSON.parse(readFileSync(join(packagesDir, pkg, 'package.json'), 'utf8')).name.replace('@', '').replace('/', '-');
      const file = readdirSync(packs).find((f) => f.startsWith(`${name}-`) && f.endsWith('.tgz'));
      if (!file) throw new Error(`no tarball for packages/${pkg} in ${packs}`);
      tarballs.set(pkg, join(packs, file));
    }
  }, 600_000);
  afterAll(() => {
    if (work !== '') rmSync(work, { recursive: true, force: true });
    rmSync(join(packagesDir, 'platform', 'prebuilds'), { recursive: true, force: true }); // made by prepack
  });

  it('each tarball holds what a user needs: no tests, no sources, no build leftovers', () => {
    for (const pkg of packages) {
      const files = run('tar', ['-tzf', tarballs.get(pkg)!], work).out.trim().split('\n').map((f) => f.replace(/^package\//, ''));
      expect(files, pkg).toContain('package.json');
      expect(files, pkg).toContain('README.md');
      expect(files, pkg).toContain('CHANGELOG.md');
      expect(files, pkg).toContain('dist/index.js');
      expect(files, pkg).toContain('dist/index.d.ts');
      const stray = files.filter((f) => /(^|\/)(test|tests|src|build|\.turbo|node_modules)\/|\.test\.|test-results\.json|tsconfig|vitest|tsup\.config/.test(f));
      expect(stray, pkg).toEqual([]);
      const allowed = pkg === 'platform' ? /^(package\.json|README\.md|CHANGELOG\.md|dist\/|native\/|scripts\/|binding\.gyp$|prebuilds\/)/ : /^(package\.json|README\.md|CHANGELOG\.md|dist\/)/;
      expect(files.filter((f) => !allowed.test(f)), pkg).toEqual([]);
      if (pkg === 'platform') expect(files).toContain(`prebuilds/${process.platform}-${process.arch}/node.napi.node`);
    }
  });

  it('publint is clean and arethetypeswrong finds no problem for an ESM-only package', () => {
    for (const pkg of packages) {
      const lint = run(process.execPath, [join(root, 'node_modules', 'publint', 'src', 'cli.js'), '--pack', 'false', '--strict'], join(packagesDir, pkg));
      expect(lint.status, `publint packages/${pkg}:\n${lint.out}`).toBe(0);
      const attw = run(process.execPath, [join(root, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js'), tarballs.get(pkg)!, '--profile', 'esm-only', '--format', 'ascii'], work);
      expect(attw.status, `attw packages/${pkg}:\n${attw.out}`).toBe(0);
    }
  }, 240_000); // two tools per package, a few seconds each: over a minute for a dozen packages on a loaded machine

  it('@paddock/allocator: its README example runs on all three backends; the prebuilt addon returns pages with no compiler', () => {
    const deps = ['allocator', 'arena', 'large', 'platform', 'pool-classic', 'pool-global', 'profile', 'region', 'registry', 'thread-cache'];
    const dir = project('allocator', deps);
    expect(existsSync(join(dir, 'node_modules', '@paddock', 'platform', 'build'))).toBe(false); // nothing was compiled
    const example = readmeExample('allocator');
    expect(runIn(dir, example)).toMatch(/^pool_arena: /m);
    expect(runIn(dir, example, ['--conditions=paddock-pool-classic'])).toMatch(/^pool_classic: /m);
    expect(runIn(dir, example, ['--conditions=paddock-pool-global'])).toMatch(/^pool_global: /m);
    const pages = runIn(dir, PAGE_RETURN);
    const got = JSON.parse(pages.trim().split('\n').pop()!) as { addon: string; dropMiB: number };
    expect(got.addon).toBe('prebuilt');
    expect(got.dropMiB).toBeGreaterThan(32);
  });

  it('@paddock/channel, the top layer, with the allocator under it: its README example runs', () => {
    const deps = ['channel', 'allocator', 'arena', 'large', 'platform', 'pool-classic', 'pool-global', 'profile', 'region', 'registry', 'thread-cache'];
    const dir = project('channel', deps);
    expect(runIn(dir, readmeExample('channel'))).toMatch(/received: 100/);
  });

  // Each other runtime, in the project the allocator's case installed.
  for (const r of RUNTIMES) {
    it.skipIf(!runtimeAvailable(r))(`under ${r.label} ${r.version}: the allocator's README example runs on all three backends, and the prebuilt addon returns pages`, () => {
      const dir = join(work, 'allocator');
      const example = readmeExample('allocator');
      expect(runIn(dir, example, [], r)).toMatch(/^pool_arena: /m);
      expect(runIn(dir, example, ['--conditions=paddock-pool-classic'], r)).toMatch(/^pool_classic: /m);
      expect(runIn(dir, example, ['--conditions=paddock-pool-global'], r)).toMatch(/^pool_global: /m);
      const got = JSON.parse(runIn(dir, PAGE_RETURN, [], r).trim().split('\n').pop()!) as { addon: string; dropMiB: number };
      expect(got.addon).toBe('prebuilt');
      expect(got.dropMiB).toBeGreaterThan(32);
    });
  }

  it('@paddock/platform used alone: its README example runs', () => {
    const dir = project('platform', ['platform']);
    expect(runIn(dir, readmeExample('platform'))).toMatch(/page return: native/);
  });

  it('@paddock/region, a middle layer, used alone (with the platform under it): its README example runs', () => {
    const dir = project('region', ['region', 'platform']);
    runIn(dir, readmeExample('region'));
  });
});
