// Compiles the AssemblyScript module test/wasm/block-exchange.ts in memory with the compiler of the
// `assemblyscript` package (a dev dependency, so `pnpm install` brings it): a module that imports a shared
// memory of up to 4 GiB and Paddock's malloc/free, with no runtime allocator and no stack in memory.
import { readFileSync } from 'node:fs';
import asc from 'assemblyscript/asc';

/** The compiler's options, also what the tests print as the command that built the module. */
export const BLOCK_EXCHANGE_OPTIONS = {
  runtime: 'stub',
  optimizeLevel: 3,
  noAssert: true,
  enable: ['threads'],
  importMemory: true,
  sharedMemory: true,
  initialMemory: 1,
  maximumMemory: 65536,
  noExportMemory: true,
};

/** The module's exports, as the tests call them. */
export interface BlockExchange {
  staticEnd(): number;
  tableSum(): number;
  sizeFor(tag: number, k: number): number;
  stampByte(tag: number, k: number, j: number): number;
  allocStamped(list: number, count: number, tag: number): number;
  verifyAndFree(list: number, count: number, tag: number): number;
}

/** The compiled module's bytes. */
export async function compileBlockExchange(): Promise<Uint8Array<ArrayBuffer>> {
  const source = readFileSync(new URL('./wasm/block-exchange.ts', import.meta.url), 'utf8');
  const r = await asc.compileString({ 'block-exchange.ts': source }, BLOCK_EXCHANGE_OPTIONS);
  if (r.error !== null || r.binary === null) throw new Error(`asc could not compile block-exchange.ts: ${r.error?.message}\n${r.stderr.toString()}`);
  return new Uint8Array(r.binary);
}
