// docs/guides/channels.md: every snippet runs as written. Each ```js block starts with `// <file>.mjs:`; the
// blocks are written under a fresh folder whose node_modules links the built @paddock/allocator and
// @paddock/channel (and piscina, from the allocator's dev dependencies), each main file runs with node, and
// what it prints must be what its comments say. Run alone, this needs `pnpm build` first.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const guide = readFileSync(join(root, 'docs', 'guides', 'channels.md'), 'utf8');
const blocks = [...guide.matchAll(/^```js[ \t]*\r?\n([\s\S]*?)^```[ \t]*$/gm)].map((m) => m[1]!);
const dir = mkdtempSync(join(tmpdir(), 'paddock-guide-channels-'));
mkdirSync(join(dir, 'node_modules', '@paddock'), { recursive: true });
symlinkSync(join(root, 'packages', 'allocator'), join(dir, 'node_modules', '@paddock', 'allocator'));
symlinkSync(join(root, 'packages', 'channel'), join(dir, 'node_modules', '@paddock', 'channel'));
symlinkSync(realpathSync(join(root, 'packages', 'allocator', 'node_modules', 'piscina')), join(dir, 'node_modules', 'piscina'));
writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
for (const b of blocks) {
  const name = /^\/\/ ([\w-]+\.mjs):/.exec(b)?.[1];
  if (name) writeFileSync(join(dir, name), b);
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(file: string): string {
  const r = spawnSync(process.execPath, [join(dir, file)], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, `${file}: exit ${r.status} ${r.signal ?? ''}\n${r.stderr}${r.stdout}`).toBe(0);
  return r.stdout;
}

describe('docs/guides/channels.md', () => {
  it('names every snippet', () => {
    expect(blocks.length).toBe(6);
    for (const b of blocks) expect(b).toMatch(/^\/\/ [\w-]+\.mjs:/);
  });
  it('pipeline', () => expect(run('pipeline.mjs')).toContain('sum of squares 333833500'));
  it('fan-out: three workers share the 10,240 blocks', () => {
    const m = /blocks per worker \[ (\d+), (\d+), (\d+) \]/.exec(run('fan-out.mjs'));
    expect(m).not.toBeNull();
    expect(Number(m![1]) + Number(m![2]) + Number(m![3])).toBe(10_240);
  });
  it('fan-in', () => expect(run('fan-in.mjs')).toContain('blocks from workers 1..4 [ 2500, 2500, 2500, 2500 ]'));
  it('request and reply', () => expect(run('request-reply.mjs')).toContain('6 100'));
  it('a piscina pool: four tasks share the 10,000 blocks', () => {
    const m = /blocks per task \[ ([\d, ]+) \] sum of doubles 100010000/.exec(run('pool-main.mjs'));
    expect(m).not.toBeNull();
    expect(m![1]!.split(', ').reduce((n, x) => n + Number(x), 0)).toBe(10_000);
  });
});
