/**
 * `wasi-dlmalloc`: wasi-libc's `malloc` / `free` (dlmalloc) exported from `wasm/dlmalloc.c`, compiled at
 * set-up with Debian's clang for wasm32-wasi against Debian's wasi-libc (packages clang, lld, wasi-libc,
 * libclang-rt-dev-wasm32).
 */
import { join } from 'node:path';
import { APP, build, type Built, have } from '../toolchain.js';
import { wasmPeer } from './wasm.js';

function buildDlmalloc(): Built {
  const source = join(APP, 'wasm', 'dlmalloc.c');
  if (!have('clang')) return { ok: false, reason: 'no clang (apt-get install -y clang lld wasi-libc libclang-rt-dev-wasm32)' };
  const r = build('wasm', source, '-dlmalloc.wasm', 'clang', (o) => ['--target=wasm32-wasi', '-O2', '-nostartfiles', '-Wl,--no-entry', '-o', o, source]);
  if (!r.ok) return { ok: false, reason: `clang for wasm32-wasi failed (apt-get install -y lld wasi-libc libclang-rt-dev-wasm32): ${r.reason}` };
  return r;
}

export const wasiDlmalloc = wasmPeer('wasi-dlmalloc', buildDlmalloc, { malloc: 'dl_malloc', free: 'dl_free' });
