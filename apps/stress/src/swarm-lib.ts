/**
 * A private copy of the built Paddock packages for the swarm to test: every `packages/* /dist` file is
 * copied and its `@paddock/...` imports are pointed at the copies (the page-return addon comes along), so
 * a long soak is not disturbed by a rebuild, and a test can plant a bug in the copy without touching the
 * sources. `patches` are textual replacements applied to one built file of one package (the allocator's
 * `dist/pool-arena.js` carries the arena and the layers between, bundled from their sources).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LibPatch {
  /** The package folder under packages/, e.g. 'allocator'. */
  pkg: string;
  /** The file in its dist/ (default `index.js`). */
  file?: string;
  find: string | RegExp;
  replace: string;
}

/** The packages/ folder of this checkout. */
export function packagesDir(): string {
  const allocator = fileURLToPath(import.meta.resolve('@paddock/allocator'));
  return join(dirname(allocator), '..', '..');
}

/**
 * Copies the built packages into `dest` (dest/<pkg>/dist/...) with imports rewritten, applies `patches`,
 * and returns the folder to pass as `--lib` (the allocator's dist, holding pool-arena.js and pool-classic.js).
 * @throws Error when a patch does not match exactly once, or a package is not built.
 */
export function snapshotLib(dest: string, patches: LibPatch[] = [], root = packagesDir()): string {
  for (const pkg of readdirSync(root)) {
    const dist = join(root, pkg, 'dist');
    if (!existsSync(dist)) continue;
    const out = join(dest, pkg, 'dist');
    mkdirSync(out, { recursive: true });
    for (const f of readdirSync(dist)) {
      if (!f.endsWith('.js')) continue;
      let text = readFileSync(join(dist, f), 'utf8');
      text = text.replace(/from (['"])@paddock\/([a-z-]+)\1/g, (_m, q: string, name: string) => `from ${q}../../${name}/dist/index.js${q}`);
      for (const p of patches) {
        if (p.pkg !== pkg || f !== (p.file ?? 'index.js')) continue;
        const hits = typeof p.find === 'string' ? text.split(p.find).length - 1 : (text.match(new RegExp(p.find.source, `${p.find.flags.replace('g', '')}g`)) ?? []).length;
        if (hits !== 1) throw new Error(`patch for ${pkg}/dist/${f} matched ${hits} times, not once: ${String(p.find)}`);
        text = text.replace(p.find, p.replace);
      }
      writeFileSync(join(out, f), text);
    }
    const addons = join(root, pkg, 'build', 'Release');
    if (existsSync(addons)) {
      mkdirSync(join(dest, pkg, 'build', 'Release'), { recursive: true });
      for (const f of readdirSync(addons)) if (f.endsWith('.node')) copyFileSync(join(addons, f), join(dest, pkg, 'build', 'Release', f));
    }
  }
  const lib = join(dest, 'allocator', 'dist');
  if (!existsSync(join(lib, 'pool-arena.js'))) throw new Error(`no built allocator under ${root}: run pnpm build first`);
  return lib;
}
