/**
 * Bench set-up: the peers that are compiled here, on this machine, before any timing. Nothing prebuilt
 * is downloaded; a peer whose toolchain is missing is skipped with a note that says what to install.
 *
 * - native references: `native/programs.c` built with the machine's `cc` twice, against glibc's malloc
 *   and against mimalloc (Debian's libmimalloc-dev: `-DUSE_MIMALLOC -lmimalloc`);
 * - AssemblyScript's TLSF: `wasm/tlsf.ts` compiled with the `assemblyscript` npm package's `asc`;
 * - wasi-libc's dlmalloc: `wasm/dlmalloc.c` compiled with Debian's clang for wasm32-wasi against
 *   Debian's wasi-libc (packages clang, lld, wasi-libc, libclang-rt-dev-wasm32).
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

const APP = fileURLToPath(new URL('..', import.meta.url)); // apps/bench/ (from dist/)
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

function hashOf(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 12);
}

function run(cmd: string, args: string[], timeoutMs = 120_000): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs });
  if (r.error) return { ok: false, out: r.error.message };
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

function firstLine(s: string): string {
  const line = s.split('\n').find((l) => /error|not found|cannot|No such/i.test(l)) ?? s.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}

function build(kind: string, source: string, ext: string, cmd: string, argsFor: (out: string) => string[]): Built {
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

function have(cmd: string): boolean {
  return run(cmd, ['--version'], 10_000).ok;
}

export interface NativeBuilds {
  readonly glibc: Built;
  readonly mimalloc: Built;
  readonly cc: string | null;
}

export function buildNative(): NativeBuilds {
  const source = join(APP, 'native', 'programs.c');
  if (!have('cc')) {
    const reason = 'no C compiler: `cc` not found (apt-get install -y gcc)';
    return { glibc: { ok: false, reason }, mimalloc: { ok: false, reason }, cc: null };
  }
  const cc = run('cc', ['--version']).out.split('\n')[0] ?? 'cc';
  const base = ['-O2', '-pthread', '-o'];
  const glibc = build('native', source, '-glibc', 'cc', (o) => [...base, o, source, '-lm']);
  let mimalloc = build('native', source, '-mimalloc', 'cc', (o) => [...base, o, '-DUSE_MIMALLOC', source, '-lmimalloc', '-lm']);
  if (!mimalloc.ok && /mimalloc/.test(mimalloc.reason)) {
    mimalloc = { ok: false, reason: `mimalloc not found (apt-get update && apt-get install -y libmimalloc-dev): ${mimalloc.reason}` };
  }
  return { glibc, mimalloc, cc };
}

export function buildTlsf(): Built {
  const source = join(APP, 'wasm', 'tlsf.ts');
  let asc: string;
  try {
    const pkg = createRequire(import.meta.url).resolve('assemblyscript/package.json');
    asc = join(dirname(pkg), 'bin', 'asc.js');
    if (!existsSync(asc)) throw new Error(`${asc} missing`);
  } catch (err) {
    return { ok: false, reason: `the assemblyscript package is not installed (pnpm install): ${err instanceof Error ? err.message : String(err)}` };
  }
  return build('wasm', source, '-tlsf.wasm', process.execPath, (o) => [asc, source, '--runtime', 'incremental', '-O3', '--noAssert', '-o', o]);
}

export function buildDlmalloc(): Built {
  const source = join(APP, 'wasm', 'dlmalloc.c');
  if (!have('clang')) return { ok: false, reason: 'no clang (apt-get install -y clang lld wasi-libc libclang-rt-dev-wasm32)' };
  const r = build('wasm', source, '-dlmalloc.wasm', 'clang', (o) => ['--target=wasm32-wasi', '-O2', '-nostartfiles', '-Wl,--no-entry', '-o', o, source]);
  if (!r.ok) return { ok: false, reason: `clang for wasm32-wasi failed (apt-get install -y lld wasi-libc libclang-rt-dev-wasm32): ${r.reason}` };
  return r;
}
