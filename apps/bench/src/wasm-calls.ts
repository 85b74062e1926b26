/**
 * What a malloc/free pair costs when WebAssembly calls Paddock, against the module's own allocator and against
 * JavaScript calling Paddock, outside the bench's harness:
 *
 *   node apps/bench/dist/wasm-calls.js [--pairs 1000000] [--rounds 21] [--warmup 3] [--size 32] [--out apps/bench/report/wasm-calls.json]
 *
 * `wasm/paddock-calls.ts` is compiled at set-up with asc (the `incremental` runtime, so AssemblyScript's TLSF is
 * in the module) and instantiated twice: over each Paddock backend's heap, built in a shared WebAssembly.Memory
 * whose first page holds the module's static data and shadow stack (the heap starts after it), with Paddock's
 * malloc/free as its imports; and over a memory of its own, where its TLSF runs. Every lane runs `--pairs`
 * pairs of `--size` bytes per round, writing and reading one word of each block; the lanes are interleaved, the
 * order rotating round by round. It prints ns per pair (median and 95% interval) and writes the JSON that
 * `pnpm bench:report` turns into the "Calls from WebAssembly" section of docs/PERFORMANCE.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { commandLine } from './context.js';
import { loadPaddock, type PaddockBackend, type PaddockHeap } from './peers/paddock-heap.js';
import { estimate } from './stats.js';
import { APP, buildAsc } from './toolchain.js';

/** The wasm-calls JSON: what report-md.ts reads. */
export interface WasmCallsJson {
  schema: 'paddock-wasm-calls/1';
  date: string;
  command: string;
  build: string;
  machine: { cpuModel: string; cpus: number; node: string; v8: string; platform: string; arch: string; loadavgAtEnd: number[] };
  config: { pairs: number; rounds: number; warmup: number; size: number };
  lanes: { name: string; what: string; samplesNs: number[] }[];
}

const BACKENDS: PaddockBackend[] = ['pool_arena', 'pool_classic', 'pool_global'];
/** Each heap's limit: 256 MiB, enough for the arena's 64 MiB regions above the header. */
const HEAP_BYTES = 256 << 20;
const WASM_PAGE = 65536;

interface Exports {
  paddockPairs(n: number, size: number): number;
  ownPairs(n: number, size: number): number;
  crossings(n: number): number;
  ownMalloc(size: number): number;
  ownFree(ptr: number): void;
  staticEnd(): number;
}

interface Lane {
  name: string;
  what: string;
  run(n: number): number;
}

function option(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`--${name} takes a positive integer, got ${argv[i + 1]}`);
  return v;
}

/** The JS side of a pair, shaped like the wasm loops: malloc, one word written and read, free. */
function jsPairs(heap: PaddockHeap, n: number, size: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) {
    const p = heap.malloc(size);
    const i32 = heap.i32;
    i32[p >>> 2] = i;
    s = (s + i32[p >>> 2]!) | 0;
    heap.free(p);
  }
  return s;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const pairs = option(argv, 'pairs', 1_000_000);
  const rounds = option(argv, 'rounds', 21);
  const warmup = option(argv, 'warmup', 3);
  const size = option(argv, 'size', 32);
  const oi = argv.indexOf('--out');
  const out = oi >= 0 ? resolve(argv[oi + 1]!) : join(APP, 'report', 'wasm-calls.json');

  const built = buildAsc('paddock-calls.ts', '-paddock-calls.wasm', [
    '--runtime', 'incremental', '-O3', '--noAssert', '--enable', 'threads', '--importMemory', '--sharedMemory', '--maximumMemory', '65536',
  ]);
  if (!built.ok) throw new Error(`wasm/paddock-calls.ts did not compile: ${built.reason}`);
  const module = new WebAssembly.Module(readFileSync(built.path));
  const abort = () => {
    throw new Error('paddock-calls: abort');
  };
  const nothing = (x: number) => x;

  // The module's own TLSF, in a memory of its own (it takes all of that memory as its pool).
  const ownMemory = new WebAssembly.Memory({ initial: 1, maximum: HEAP_BYTES / WASM_PAGE, shared: true });
  const own = new WebAssembly.Instance(module, {
    env: { memory: ownMemory, abort, nothing, malloc: () => 0, free: () => undefined },
  }).exports as unknown as Exports;
  const lanes: Lane[] = [
    { name: 'wasm: own TLSF', what: 'a wasm loop calling the module\'s own allocator (AssemblyScript\'s TLSF), no boundary crossed', run: (n) => own.ownPairs(n, size) },
    {
      name: 'JS: wasm TLSF',
      what: 'a JS loop calling the module\'s TLSF through its exports (ownMalloc/ownFree): a JS -> wasm crossing each call',
      run: (n) => {
        let s = 0;
        const u32 = new Uint32Array(ownMemory.buffer);
        for (let i = 0; i < n; i++) {
          const p = own.ownMalloc(size) >>> 0;
          u32[p >>> 2] = i;
          s = (s + u32[p >>> 2]!) | 0;
          own.ownFree(p);
        }
        return s;
      },
    },
    { name: 'wasm: empty import x2', what: 'a wasm loop calling an empty JS import twice: the two crossings of a pair, no allocator', run: (n) => own.crossings(n) },
  ];
  for (const backend of BACKENDS) {
    const load = await loadPaddock(backend);
    if (!load.ok) throw new Error(`${backend}: ${load.reason}`);
    // The first page holds the module's static data and shadow stack; the heap starts after the memory's length.
    const memory = new WebAssembly.Memory({ initial: 1, maximum: HEAP_BYTES / WASM_PAGE, shared: true });
    const createHeap = load.createHeap as unknown as (o: { memory: WebAssembly.Memory; maxBytes: number }) => PaddockHeap;
    const heap = createHeap({ memory, maxBytes: HEAP_BYTES });
    const inst = new WebAssembly.Instance(module, {
      env: {
        memory,
        abort,
        nothing,
        malloc: (n: number) => heap.malloc(n >>> 0),
        free: (p: number) => heap.free(p >>> 0),
      },
    }).exports as unknown as Exports;
    if (inst.staticEnd() > heap.space.base) throw new Error(`the module's static data ends at ${inst.staticEnd()}, above the heap's base ${heap.space.base}`);
    lanes.push(
      { name: `wasm: Paddock ${backend}`, what: `a wasm loop calling Paddock's ${backend} malloc/free, imported from JS (a wasm -> JS crossing each call)`, run: (n) => inst.paddockPairs(n, size) },
      { name: `JS: Paddock ${backend}`, what: `a JS loop calling Paddock's ${backend} heap.malloc/heap.free, the same heap`, run: (n) => jsPairs(heap, n, size) },
    );
  }

  const samples = lanes.map(() => [] as number[]);
  for (let r = 0; r < warmup + rounds; r++) {
    for (let j = 0; j < lanes.length; j++) {
      const k = (j + r) % lanes.length;
      const t = process.hrtime.bigint();
      lanes[k]!.run(pairs);
      const ns = Number(process.hrtime.bigint() - t) / pairs;
      if (r >= warmup) samples[k]!.push(ns);
    }
    process.stderr.write(`\rwasm-calls: round ${r + 1}/${warmup + rounds}`);
  }
  process.stderr.write('\n');

  const command = commandLine();
  const doc: WasmCallsJson = {
    schema: 'paddock-wasm-calls/1',
    date: new Date().toISOString(),
    command,
    build: built.command,
    machine: {
      cpuModel: os.cpus()[0]?.model?.trim() ?? 'unknown cpu',
      cpus: os.cpus().length,
      node: process.version,
      v8: process.versions.v8,
      platform: process.platform,
      arch: process.arch,
      loadavgAtEnd: os.loadavg(),
    },
    config: { pairs, rounds, warmup, size },
    lanes: lanes.map((l, i) => ({ name: l.name, what: l.what, samplesNs: samples[i]! })),
  };
  writeFileSync(out, `${JSON.stringify(doc, null, 1)}\n`);
  process.stdout.write(`${command}\nmodule: ${built.command}\nmalloc(${size}) + free, ns per pair, median [95% CI] of ${rounds} rounds of ${pairs} pairs:\n`);
  for (const l of doc.lanes) {
    const e = estimate(l.samplesNs)!;
    process.stdout.write(`  ${l.name.padEnd(28)} ${e.median.toFixed(1).padStart(7)} [${e.lo.toFixed(1)} .. ${e.hi.toFixed(1)}]\n`);
  }
  process.stdout.write(`wrote ${relative(process.cwd(), out)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`wasm-calls: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
