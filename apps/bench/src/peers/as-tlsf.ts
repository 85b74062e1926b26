/**
 * `as-tlsf`: AssemblyScript's TLSF (the `incremental` runtime's memory manager, `heap.alloc` / `heap.free`
 * exported bare from `wasm/tlsf.ts`), compiled at set-up with `asc` from the `assemblyscript` npm package.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { errorText } from '../format.js';
import { APP, build, type Built } from '../toolchain.js';
import { wasmPeer } from './wasm.js';

function buildTlsf(): Built {
  const source = join(APP, 'wasm', 'tlsf.ts');
  let asc: string;
  try {
    const pkg = createRequire(import.meta.url).resolve('assemblyscript/package.json');
    asc = join(dirname(pkg), 'bin', 'asc.js');
    if (!existsSync(asc)) throw new Error(`${asc} missing`);
  } catch (err) {
    return { ok: false, reason: `the assemblyscript package is not installed (pnpm install): ${errorText(err)}` };
  }
  return build('wasm', source, '-tlsf.wasm', process.execPath, (o) => [asc, source, '--runtime', 'incremental', '-O3', '--noAssert', '-o', o]);
}

export const asTlsf = wasmPeer('as-tlsf', buildTlsf, { malloc: 'tlsf_malloc', free: 'tlsf_free' });
