#!/usr/bin/env node
// `node scripts/build.mjs vite|esbuild [use=flags] [out=folder]`: builds the example page (into dist/ by
// default) for the backend `use=` (or PADDOCK_USE) names, and prints what it built.
import { resolve } from 'node:path';
import { APP, buildWithEsbuild, buildWithVite, readUse } from './bundlers.mjs';

const [bundler, ...args] = process.argv.slice(2);
const out = args.find((a) => a.startsWith('out='));
const outDir = out ? resolve(out.slice(4)) : resolve(APP, bundler === 'esbuild' ? 'dist-esbuild' : 'dist');
try {
  const use = readUse(args.filter((a) => a !== out));
  const build = bundler === 'vite' ? buildWithVite : bundler === 'esbuild' ? buildWithEsbuild : null;
  if (!build) throw new Error(`name the bundler: vite or esbuild (got ${bundler ?? 'nothing'})`);
  const r = await build(use, outDir);
  const conditions = r.conditions.length ? r.conditions.join(', ') : 'none (dist/index.js)';
  console.log(`web-example: ${r.bundler} built ${r.outDir} in ${r.ms} ms: backend ${r.backend} (conditions: ${conditions}), ${r.scripts} scripts, ${(r.bytes / 1024).toFixed(1)} KiB (${(r.gzipBytes / 1024).toFixed(1)} KiB gzipped)`);
} catch (err) {
  console.error(`web-example build: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
}
