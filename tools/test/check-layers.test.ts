// The layering check must fail on each kind of violation and pass on a clean tree.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkLayers } from '../check-layers.mjs';
import { LAYERS } from '../layers.mjs';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'paddock-layers-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const pkg = (name: string) => JSON.stringify({ name });
const base = {
  'packages/platform/package.json': pkg('@paddock/platform'),
  'packages/platform/src/index.ts': 'export const x = 1;\n',
  'packages/region/package.json': pkg('@paddock/region'),
  'packages/allocator/package.json': pkg('@paddock/allocator'),
};

describe('layering check', () => {
  it('passes a tree where each package imports lower layers by name', () => {
    const root = tree({
      ...base,
      'packages/region/src/index.ts': "import { x } from '@paddock/platform';\nexport const y = x;\n",
      'packages/allocator/src/index.ts': "export * from '@paddock/region';\nconst m = await import('@paddock/platform');\n",
      'apps/demo/package.json': pkg('demo'),
      'apps/demo/src/main.ts': "import '@paddock/allocator';\n",
    });
    expect(checkLayers(root)).toEqual([]);
  });

  it('fails an import of a higher layer', () => {
    const root = tree({ ...base, 'packages/platform/src/up.ts': "import { a } from '@paddock/allocator';\n" });
    const problems = checkLayers(root);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/@paddock\/platform \(layer 1\) imports @paddock\/allocator \(layer 6\)/);
  });

  it('fails an import between packages of the same layer', () => {
    const root = tree({
      ...base,
      'packages/registry/package.json': pkg('@paddock/registry'),
      'packages/registry/src/index.ts': "export { r } from '@paddock/region';\n",
    });
    expect(checkLayers(root).join('\n')).toMatch(/registry \(layer 3\) imports @paddock\/region \(layer 3\)/);
  });

  it("fails a deep import into another package's src or dist", () => {
    const root = tree({
      ...base,
      // Built from parts so that the project's own grep for deep imports does not flag this fixture.
      'packages/region/src/index.ts': `import { x } from '@paddock/platform${'/src'}/index.js';\n`,
      'apps/demo/package.json': pkg('demo'),
      'apps/demo/src/main.ts': `import { h } from '@paddock/allocator${'/dist'}/index.js';\n`,
    });
    const problems = checkLayers(root);
    expect(problems).toHaveLength(2);
    expect(problems.every((p) => /deep import/.test(p))).toBe(true);
  });

  it("fails a relative path into another package", () => {
    const root = tree({ ...base, 'packages/region/src/index.ts': "import { x } from '../../platform/src/index.js';\n" });
    expect(checkLayers(root).join('\n')).toMatch(/reaches into packages\/platform\/src\/index.js by path/);
  });

  it('fails a layout file that imports anything, even its own package', () => {
    const root = tree({
      ...base,
      'packages/region/src/layout.ts': "export const A = 1;\n",
      'packages/region/src/agent-layout.ts': "import { x } from '@paddock/platform';\nexport const B = x;\n",
      'packages/region/src/slot-layout.ts': "import { A } from './layout.js';\nexport const C = A;\n",
    });
    const problems = checkLayers(root).sort();
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/agent-layout\.ts:1: a layout file imports nothing \(it imports '@paddock\/platform'\)/);
    expect(problems[1]).toMatch(/slot-layout\.ts:1: a layout file imports nothing \(it imports '\.\/layout\.js'\)/);
  });

  it('fails a package that has no layer', () => {
    const root = tree({ ...base, 'packages/extra/package.json': pkg('@paddock/extra') });
    expect(checkLayers(root).join('\n')).toMatch(/@paddock\/extra has no layer/);
  });

  it('knows exactly the packages that exist', () => {
    const packages = fileURLToPath(new URL('../../packages', import.meta.url));
    const names = readdirSync(packages)
      .filter((d) => existsSync(join(packages, d, 'package.json')))
      .map((d) => (JSON.parse(readFileSync(join(packages, d, 'package.json'), 'utf8')) as { name: string }).name);
    expect(Object.keys(LAYERS).sort()).toEqual(names.sort());
    expect(LAYERS['@paddock/platform']).toBe(1);
    expect(LAYERS['@paddock/allocator']).toBe(6);
  });
});

describe('the API reference', () => {
  it('pnpm build:docs builds it with no warnings (typedoc treats warnings as errors here)', async () => {
    const { spawnSync } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const out = mkdtempSync(join(tmpdir(), 'paddock-api-'));
    const run = spawnSync('pnpm', ['exec', 'typedoc', '--out', out], { cwd: root, encoding: 'utf8' });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(/warning/i);
  });
});
