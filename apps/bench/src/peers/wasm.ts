/**
 * Allocators compiled to WebAssembly at set-up and called from JavaScript (AssemblyScript's TLSF,
 * wasi-libc's dlmalloc). Each `setup` is a fresh instance with a fresh, small memory that the allocator
 * grows itself (`memory.grow`); pointers are offsets into it.
 */
import { readFileSync } from 'node:fs';
import type { Adapter, Callee } from '../adapter.js';
import { errorText } from '../format.js';
import { makePeer } from '../runner.js';
import type { Built } from '../toolchain.js';
import { ARRAY_BYTES, type PeerDescriptor } from './peer.js';

export class WasmAdapter implements Adapter {
  private readonly module: WebAssembly.Module;
  private mem: WebAssembly.Memory | null = null;
  private u8 = new Uint8Array(0);
  private m: (n: number) => number = () => 0;
  private f: (p: number) => void = () => undefined;
  /** The module's own malloc and free, for the timed loops (set up with the instance). */
  private direct: Callee = { malloc: () => 0, free: () => undefined };

  constructor(
    readonly name: string,
    wasmPath: string,
    private readonly mallocName: string,
    private readonly freeName: string,
  ) {
    this.module = new WebAssembly.Module(readFileSync(wasmPath));
  }

  setup(_maxBytes: number): void {
    const inst = new WebAssembly.Instance(this.module, {
      env: {
        abort: () => {
          throw new Error(`${this.name}: abort`);
        },
      },
    });
    const e = inst.exports as Record<string, unknown>;
    this.mem = e.memory as WebAssembly.Memory;
    this.m = e[this.mallocName] as (n: number) => number;
    this.f = e[this.freeName] as (p: number) => void;
    this.direct = { malloc: this.m, free: this.f };
    this.u8 = new Uint8Array(this.mem.buffer);
  }

  malloc(size: number): number {
    return this.m(size) >>> 0;
  }

  free(ptr: number, _size: number): void {
    this.f(ptr);
  }

  teardown(): void {
    this.mem = null;
    this.u8 = new Uint8Array(0);
    this.m = () => 0;
    this.f = () => undefined;
    this.direct = { malloc: this.m, free: this.f };
  }

  callee(): Callee {
    return this.direct;
  }

  bytes(): Uint8Array | null {
    if (this.mem === null) return null;
    if (this.u8.buffer !== this.mem.buffer || this.u8.length === 0) this.u8 = new Uint8Array(this.mem.buffer);
    return this.u8;
  }
}

/** The module's exported malloc and free, by name. */
export interface WasmExports {
  readonly malloc: string;
  readonly free: string;
}

/**
 * A wasm peer: `build` compiles its module at set-up; each instance is the module instantiated afresh. It
 * is skipped when the module does not compile here.
 */
export function wasmPeer(name: string, build: () => Built, exports: WasmExports): PeerDescriptor {
  return {
    name,
    offers: ['pair-churn', 'one-agent'],
    build: { toolchain: 'wasm', build },
    load(peer, path) {
      const adapter = () => new WasmAdapter(peer, path as string, exports.malloc, exports.free);
      try {
        return { timed: makePeer(adapter(), ARRAY_BYTES), adapter };
      } catch (err) {
        return { skip: `the compiled module does not load: ${errorText(err)}` };
      }
    },
  };
}
