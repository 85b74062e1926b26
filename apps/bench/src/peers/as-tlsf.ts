/**
 * `as-tlsf`: AssemblyScript's TLSF (the `incremental` runtime's memory manager, `heap.alloc` / `heap.free`
 * exported bare from `wasm/tlsf.ts`), compiled at set-up with `asc` from the `assemblyscript` npm package.
 */
import { buildAsc, type Built } from '../toolchain.js';
import { wasmPeer } from './wasm.js';

function buildTlsf(): Built {
  return buildAsc('tlsf.ts', '-tlsf.wasm', ['--runtime', 'incremental', '-O3', '--noAssert']);
}

export const asTlsf = wasmPeer('as-tlsf', buildTlsf, { malloc: 'tlsf_malloc', free: 'tlsf_free' });
