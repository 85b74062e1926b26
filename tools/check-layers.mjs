#!/usr/bin/env node
// The layering check: every package under packages/ imports only packages on lower layers (LAYERS in
// layers.mjs, the README's layer table), only through their package names, and never reaches into
// another package's src/ or dist/ by path. Apps and tools may import any package, but by name only.
// A layout file (a package source named `layout.ts` or `*-layout.ts`: word offsets and constants that the hot
// paths read) imports nothing at all, so that a bundler inlines its constants wherever they are used.
// Usage: node tools/check-layers.mjs [repoRoot]   (exit 1 and one line per violation when it fails)
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAYERS } from './layers.mjs';

const IMPORT_RE = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;
const SOURCE_RE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/;
const LAYOUT_RE = /(?:^|[-/\\])layout\.ts$/;

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name === 'build' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* walk(p);
    else if (SOURCE_RE.test(name)) yield p;
  }
}

function packageDirs(root, group) {
  const dir = join(root, group);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((n) => join(dir, n))
    .filter((p) => existsSync(join(p, 'package.json')));
}

/** Returns a list of violation messages for the repository at `root` (empty when it is clean). */
export function checkLayers(root, layers = LAYERS) {
  const problems = [];
  const pkgs = packageDirs(root, 'packages');
  const pkgByDir = new Map(pkgs.map((d) => [d, JSON.parse(readFileSync(join(d, 'package.json'), 'utf8')).name]));
  for (const [dir, name] of pkgByDir) {
    if (!(name in layers)) problems.push(`${relative(root, dir)}: package ${name} has no layer (add it to tools/layers.mjs and the README's layer table)`);
  }
  const scanned = [...pkgs, ...packageDirs(root, 'apps'), ...(existsSync(join(root, 'tools')) ? [join(root, 'tools')] : [])];
  for (const dir of scanned) {
    const own = pkgByDir.get(dir);
    const ownLayer = own ? layers[own] : undefined;
    for (const file of walk(dir)) {
      // The checker's own tests write violating trees on purpose.
      if (file.startsWith(join(root, 'tools', 'test') + sep)) continue;
      const text = readFileSync(file, 'utf8');
      const where = relative(root, file);
      const layoutFile = own !== undefined && LAYOUT_RE.test(file);
      for (const m of text.matchAll(IMPORT_RE)) {
        const spec = m[1];
        const line = text.slice(0, m.index).split('\n').length;
        if (layoutFile) problems.push(`${where}:${line}: a layout file imports nothing (it imports '${spec}'): move what needs '${spec}' out of it`);
        if (spec.startsWith('@paddock/')) {
          const parts = spec.split('/');
          const target = `${parts[0]}/${parts[1]}`;
          if (parts.length > 2) problems.push(`${where}:${line}: deep import '${spec}': import '${target}' by its package name`);
          if (own && target !== own) {
            const t = layers[target];
            if (t === undefined) problems.push(`${where}:${line}: imports unknown package ${target}`);
            else if (ownLayer !== undefined && t >= ownLayer) {
              problems.push(`${where}:${line}: ${own} (layer ${ownLayer}) imports ${target} (layer ${t}): only lower layers may be imported`);
            }
          }
        } else if (spec.startsWith('.')) {
          const target = resolve(dirname(file), spec);
          for (const other of pkgByDir.keys()) {
            if (other === dir) continue;
            if (target === other || target.startsWith(other + sep)) {
              problems.push(`${where}:${line}: reaches into ${relative(root, target)} by path: import ${pkgByDir.get(other)} by its package name`);
            }
          }
        }
      }
    }
  }
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const problems = checkLayers(root);
  if (problems.length) {
    console.error(`layering check: ${problems.length} problem(s)`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  console.log('layering check: every package imports only lower layers, by package name');
}
