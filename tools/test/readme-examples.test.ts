// Every package's README opens with a runnable example of that layer used alone. This runs the first ```js
// block of each one with node, from a file inside the package (so `@paddock/*` resolve through the package's
// own links and its self-reference) against the built dist, and fails when it is missing, throws or asserts
// wrong; then every package's example again under each of the other runtimes (Node 22, 24 and 26, Bun, Deno:
// tools/runtimes.json), one case per runtime. `pnpm test` builds first; run alone, this needs `pnpm build` (or
// `node tools/build.mjs`) before it.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RUNTIMES, runtimeAvailable, runtimeBinary } from '../test-utils/runtimes.js';

const packagesDir = fileURLToPath(new URL('../../packages', import.meta.url));
const designDir = fileURLToPath(new URL('../../docs/design', import.meta.url));
const packages = readdirSync(packagesDir)
  .filter((d) => existsSync(join(packagesDir, d, 'package.json')))
  .sort();

/** The body of the first fence opened with exactly ```js (not ```json, ```ts or ```sh), or null. */
function firstJsBlock(markdown: string): string | null {
  const found = /^```js[ \t]*\r?\n([\s\S]*?)^```[ \t]*$/m.exec(markdown);
  return found ? found[1]! : null;
}

/** The package's README, or null when it has none. */
function readme(pkg: string): string | null {
  const path = join(packagesDir, pkg, 'README.md');
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}

/** Runs `code` from a file inside packages/`pkg` with `bin` (and `args` before the file). */
function runExample(pkg: string, code: string, bin: string, args: string[]): SpawnSyncReturns<string> {
  const file = join(packagesDir, pkg, `.readme-example-${process.pid}.mjs`);
  writeFileSync(file, code);
  try {
    return spawnSync(bin, [...args, file], { cwd: join(packagesDir, pkg), encoding: 'utf8', timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } });
  } finally {
    rmSync(file, { force: true });
  }
}

describe('finding the example', () => {
  it('takes the first js fence only, and nothing from a README without one', () => {
    const md = '# x\n\n```ts\nts();\n```\n\n```json\n{}\n```\n\n```js\nfirst();\n```\n\n```js\nsecond();\n```\n';
    expect(firstJsBlock(md)).toBe('first();\n');
    expect(firstJsBlock('# x\n\n```sh\npnpm test\n```\n')).toBeNull();
    expect(firstJsBlock('')).toBeNull();
  });
});

describe.each(packages)('packages/%s/README.md', (pkg) => {
  it('opens with a js example that runs and whose assertions hold', () => {
    const text = readme(pkg);
    expect(text, `packages/${pkg} has no README.md`).not.toBeNull();
    const code = firstJsBlock(text!);
    expect(code, `packages/${pkg}/README.md has no \`\`\`js block`).not.toBeNull();
    expect(existsSync(join(packagesDir, pkg, 'dist')), `packages/${pkg}/dist is missing: run pnpm build first`).toBe(true);

    const run = runExample(pkg, code!, process.execPath, []);
    const shown = `exit ${run.status}${run.signal ? ` (${run.signal})` : ''}\n${run.stderr}${run.stdout}`;
    expect(run.status, shown).toBe(0);
  });

  it('links its design note, which exists', () => {
    const text = readme(pkg) ?? '';
    expect(text).toContain(`](../../docs/design/${pkg}.md)`);
    expect(existsSync(join(designDir, `${pkg}.md`))).toBe(true);
  });
});

describe.each(RUNTIMES.map((r) => [r.label, r] as const))('under %s', (_, r) => {
  it.skipIf(!runtimeAvailable(r))(`every package's README example runs (${r.label} ${r.version})`, () => {
    for (const pkg of packages) {
      const code = firstJsBlock(readme(pkg) ?? '');
      if (code === null) continue; // the case above fails for it
      const run = runExample(pkg, code, runtimeBinary(r), r.args);
      expect(run.status, `packages/${pkg} under ${r.label}: exit ${run.status}\n${run.stderr}${run.stdout}`).toBe(0);
    }
  });
});
