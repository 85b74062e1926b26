// Where page return comes from: the prebuilt addon the package ships for this platform (loaded first, needs no
// compiler, so the install builds nothing), the one built from source at install, or none (pure JS). Each path
// in a fresh Node process, with what it returns to the OS measured.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(pkg, 'build', 'Release', 'paddock_page_return.node');
const prebuilt = join(pkg, 'prebuilds', `${process.platform}-${process.arch}`, 'node.napi.node');
/** A PATH with node and nothing else: no cc, no make, no python (a machine without a compiler). */
const nodeOnly = mkdtempSync(join(tmpdir(), 'paddock-node-only-'));
symlinkSync(process.execPath, join(nodeOnly, 'node'));
const noCompiler = { ...process.env, PATH: nodeOnly, PADDOCK_PAGE_RETURN: '' };

/** In a fresh process: which addon loads, and the resident bytes 64 MiB of touched pages give back on decommit. */
function probe(env: NodeJS.ProcessEnv): { addon: string | null; mode: string; error: string | null; dropMiB: number } {
  const script = `
    import { createAddressSpace, nativePageReturnError, pageReturnAddon } from ${JSON.stringify(join(pkg, 'dist', 'index.js'))};
    const space = createAddressSpace({ maxBytes: 256 << 20 });
    const a = space.reserve(64 << 20);
    space.commit(a, 64 << 20);
    space.u8.fill(1, a, a + (64 << 20));
    const before = process.memoryUsage.rss();
    space.decommit(a, 64 << 20);
    const after = process.memoryUsage.rss();
    console.log(JSON.stringify({ addon: pageReturnAddon(), mode: space.pageReturn, error: nativePageReturnError(), dropMiB: (before - after) / 2 ** 20 }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`probe failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

describe.skipIf(process.platform !== 'linux' || !existsSync(built))('page return on Linux', () => {
  beforeAll(() => {
    // The package's own script, as `prepack` runs it: compiled in a scratch folder, copied to prebuilds/.
    const r = spawnSync(process.execPath, [join(pkg, 'scripts', 'prebuild.mjs')], { encoding: 'utf8', timeout: 240_000 });
    if (r.status !== 0) throw new Error(`prebuild failed: ${r.stdout}\n${r.stderr}`);
  }, 300_000);
  afterAll(() => {
    rmSync(join(pkg, 'prebuilds'), { recursive: true, force: true });
    rmSync(nodeOnly, { recursive: true, force: true });
  });

  it('the prebuilt addon is loaded first, without a compiler on PATH, and returns pages', () => {
    expect(existsSync(prebuilt)).toBe(true);
    expect(spawnSync('cc', ['--version'], { env: noCompiler }).error).toBeDefined(); // no cc to be found
    const r = probe(noCompiler);
    expect(r).toMatchObject({ addon: 'prebuilt', mode: 'native', error: null });
    expect(r.dropMiB).toBeGreaterThan(48);
  });

  it('the install step uses a prebuilt that loads and builds nothing, even with no compiler', () => {
    const mtime = statSync(built).mtimeMs;
    const r = spawnSync(process.execPath, [join(pkg, 'scripts', 'build-native.mjs')], { env: noCompiler, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/prebuilt for linux-/);
    expect(statSync(built).mtimeMs).toBe(mtime);
  });

  it('the addon built from source at install serves where no prebuilt is taken', () => {
    const r = probe({ ...process.env, PADDOCK_PAGE_RETURN: 'built' });
    expect(r).toMatchObject({ addon: 'built', mode: 'native', error: null });
    expect(r.dropMiB).toBeGreaterThan(48);
  });

  it('with neither, decommit is bookkeeping only and says why', () => {
    rmSync(join(pkg, 'prebuilds'), { recursive: true, force: true });
    const r = probe({ ...process.env, PADDOCK_PAGE_RETURN: 'prebuilt' });
    expect(r.addon).toBeNull();
    expect(r.mode).toBe('none');
    expect(r.error).toMatch(/prebuilt: .*node\.napi\.node/);
    expect(r.dropMiB).toBeLessThan(16);
  });
});
