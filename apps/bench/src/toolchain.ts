/**
 * How the peers that are compiled here, on this machine, before any timing are built (each peer's file
 * says what it compiles and with what: the native references with `cc`, the wasm peers with `asc` or
 * clang). Nothing prebuilt is downloaded; a peer whose toolchain is missing is skipped with a note that
 * says what to install.
 *
 * Outputs go to `apps/bench/build/` (ignored by git), named by a hash of the source and the command, so
 * an unchanged source is not rebuilt.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorText } from './format.js';

/** apps/bench/ (from dist/). */
export const APP = fileURLToPath(new URL('..', import.meta.url));
const ROOT = join(APP, '..', '..');
const BUILD = join(APP, 'build');

/** The command as it would be typed at the repository root (no machine-specific paths in the JSON). */
function shown(cmd: string): string {
  return cmd
    .split(`${ROOT}/`)
    .join('')
    .split(ROOT)
    .join('.')
    .replace(/node_modules\/\.pnpm\/[^ ]*\/node_modules\//g, 'node_modules/');
}

export type Built = { ok: true; path: string; cached: boolean; command: string } | { ok: false; reason: string };

/** What a build needs: `native` the machine's C compiler, `wasm` a compiler to WebAssembly. The set-up builds in this order. */
export const TOOLCHAINS = ['native', 'wasm'] as const;
export type Toolchain = (typeof TOOLCHAINS)[number];

function hashOf(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 12);
}

export function run(cmd: string, args: string[], timeoutMs = 120_000): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs });
  if (r.error) return { ok: false, out: r.error.message };
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

function firstLine(s: string): string {
  const line = s.split('\n').find((l) => /error|not found|cannot|No such/i.test(l)) ?? s.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}

export function build(kind: string, source: string, ext: string, cmd: string, argsFor: (out: string) => string[]): Built {
  const src = readFileSync(source, 'utf8');
  const probe = argsFor('OUT').join(' ');
  const out = join(BUILD, kind, `${kind}-${hashOf(src, cmd, probe)}${ext}`);
  const command = shown(`${cmd === process.execPath ? 'node' : cmd} ${argsFor(out).join(' ')}`);
  if (existsSync(out)) return { ok: true, path: out, cached: true, command };
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.tmp${process.pid}`;
  const r = run(cmd, argsFor(tmp));
  if (!r.ok) return { ok: false, reason: firstLine(r.out) || `${cmd} failed` };
  renameSync(tmp, out);
  return { ok: true, path: out, cached: false, command };
}

/**
 * Compiles the AssemblyScript file `wasm/<file>` with `asc` from the `assemblyscript` npm package (a dev
 * dependency) and the given flags, into `build/wasm/wasm-<hash><suffix>`.
 */
export function buildAsc(file: string, suffix: string, flags: string[]): Built {
  const source = join(APP, 'wasm', file);
  let asc: string;
  try {
    const pkg = createRequire(import.meta.url).resolve('assemblyscript/package.json');
    asc = join(dirname(pkg), 'bin', 'asc.js');
    if (!existsSync(asc)) throw new Error(`${asc} missing`);
  } catch (err) {
    return { ok: false, reason: `the assemblyscript package is not installed (pnpm install): ${errorText(err)}` };
  }
  return build('wasm', source, suffix, process.execPath, (o) => [asc, source, ...flags, '-o', o]);
}

export function have(cmd: string): boolean {
  return run(cmd, ['--version'], 10_000).ok;
}

/** The first line of `cc --version`; null without a C compiler. */
export function ccVersion(): string | null {
  return have('cc') ? (run('cc', ['--version']).out.split('\n')[0] ?? 'cc') : null;
}
