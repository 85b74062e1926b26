// The use= flags: forbidden combinations stop the build with their message; allowed ones build, and the
// umbrella's bundle then holds exactly the chosen backend and instrumentation.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseUse } from '../use-flags.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('parseUse', () => {
  it('defaults to pool_arena and normalises the flag list', () => {
    expect(parseUse([], {})).toMatchObject({ backend: 'pool_arena', flags: 'pool_arena' });
    expect(parseUse(['use=checked,pool_classic', '--force'], {})).toMatchObject({
      backend: 'pool_classic',
      flags: 'pool_classic,checked',
      rest: ['--force'],
    });
    expect(parseUse([], { PADDOCK_USE: 'pooltrack' }).flags).toBe('pool_arena,pooltrack');
    expect(parseUse(['use=pool_global'], {})).toMatchObject({ backend: 'pool_global', flags: 'pool_global' });
  });

  it.each([
    ['use=pool_arena,pool_classic', /more than one backend \(pool_arena and pool_classic\)/],
    ['use=pool_retain', /pool_retain only applies to the pool_classic backend: pair it with use=pool_classic,pool_retain/],
    ['use=pool_arena,pool_retain', /pool_retain only applies to the pool_classic backend/],
    ['use=pool_global,pool_retain', /pool_retain only applies to the pool_classic backend: pair it with use=pool_classic,pool_retain \(this build's backend is pool_global\)/],
    ['use=fast', /unknown use= flag 'fast'/],
  ])('%s is refused', (arg, message) => {
    expect(() => parseUse([arg], {})).toThrow(message);
  });

  it.each([['use=pool_arena,pool_classic'], ['use=pool_retain'], ['use=nonsense']])('pnpm build %s stops before building, with the message', (arg) => {
    const run = spawnSync(process.execPath, [join(root, 'tools/build.mjs'), arg], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^pnpm build: /);
  });
});

describe('each allowed combination builds the umbrella with only what it asked for', () => {
  const cases: [string, string, string[]][] = [
    ['pool_arena', '@paddock/arena', []],
    ['pool_classic', '@paddock/pool-classic', []],
    ['pool_classic,pool_retain', '@paddock/pool-classic', ['retain']],
    ['pool_arena,pooltrack', '@paddock/arena', ['pooltrack']],
    ['pool_arena,checked', '@paddock/arena', ['checked']],
    ['pool_classic,checked,pooltrack', '@paddock/pool-classic', ['checked', 'pooltrack']],
    ['pool_global', '@paddock/pool-global', []],
  ];
  it.each(cases)('use=%s', (flags, backendPackage, extras) => {
    const out = mkdtempSync(join(tmpdir(), 'paddock-use-'));
    const run = spawnSync('pnpm', ['exec', 'tsup', '--out-dir', out, '--no-dts'], {
      cwd: join(root, 'packages/allocator'),
      env: { ...process.env, PADDOCK_USE: flags },
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    const bundle = readFileSync(join(out, 'index.js'), 'utf8');
    // The layers are bundled from their sources (packages/allocator/tsup.config.ts): the chosen backend's
    // engine class is in the bundle, the other's is not, and neither is imported.
    const engines: Record<string, RegExp> = {
      '@paddock/arena': /\bArenaHeap = class\b/,
      '@paddock/pool-classic': /\bClassicPool = class\b/,
      '@paddock/pool-global': /\bGlobalPool = class\b/,
    };
    const engine = (pkg: string) => engines[pkg]!;
    expect(engine(backendPackage).test(bundle)).toBe(true);
    for (const other of Object.keys(engines)) if (other !== backendPackage) expect(engine(other).test(bundle)).toBe(false);
    expect(bundle).not.toMatch(/from '@paddock\/(arena|pool-classic|pool-global)'/);
    expect(/function withTrace/.test(bundle)).toBe(extras.includes('pooltrack'));
    expect(/function withChecks/.test(bundle)).toBe(extras.includes('checked'));
    if (backendPackage === '@paddock/pool-classic') expect(/var RETAIN = true/.test(bundle)).toBe(extras.includes('retain'));
    // The conditional entries are always single-backend.
    expect(readFileSync(join(out, 'pool-classic.js'), 'utf8')).not.toMatch(engine('@paddock/arena'));
    expect(readFileSync(join(out, 'pool-arena.js'), 'utf8')).not.toMatch(engine('@paddock/pool-classic'));
    expect(readFileSync(join(out, 'pool-global.js'), 'utf8')).not.toMatch(engine('@paddock/arena'));
    expect(readFileSync(join(out, 'pool-global.js'), 'utf8')).not.toMatch(engine('@paddock/pool-classic'));
    expect(readFileSync(join(out, 'pool-arena.js'), 'utf8')).not.toMatch(engine('@paddock/pool-global'));
  });
});
