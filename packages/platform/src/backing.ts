/**
 * The three ways a Paddock address space can be backed, behind one small interface: a growable
 * `SharedArrayBuffer` (the default), a shared `WebAssembly.Memory`, and a fixed `SharedArrayBuffer`.
 * A backing only knows how long the buffer is now and how to make it at least so long; everything
 * else (what is reserved, what is committed) lives in the address space's header inside the buffer.
 */
import { HeapError, formatBytes } from './errors.js';

/** Which kind of buffer holds the space. */
export type BackingKind = 'growable' | 'wasm' | 'fixed';

/** 64 KiB: the wasm page, and the unit in which the buffer grows. */
export const WASM_PAGE = 65536;
/** The buffer grows in steps of at least this much, to keep grow calls rare. */
const GROW_STEP = 1 << 20;

export interface Backing {
  readonly kind: BackingKind;
  /** The buffer as it is now (for wasm memory, a new object after each growth). */
  buffer(): SharedArrayBuffer;
  /** Its byte length now. */
  byteLength(): number;
  /** Makes the buffer at least `bytes` long; `growPages` is the header word wasm growth is counted in. */
  ensure(bytes: number, header: Int32Array, growPagesWord: number): void;
}

export class GrowableBacking implements Backing {
  readonly kind = 'growable' as const;
  constructor(readonly sab: SharedArrayBuffer, private readonly maxBytes: number) {}
  buffer(): SharedArrayBuffer {
    return this.sab;
  }
  byteLength(): number {
    return this.sab.byteLength;
  }
  ensure(bytes: number): void {
    if (this.sab.byteLength >= bytes) return;
    const target = Math.min(this.maxBytes, Math.ceil(bytes / GROW_STEP) * GROW_STEP);
    try {
      this.sab.grow(target);
    } catch (err) {
      // Another agent may have grown it past us in the meantime; grow never shrinks.
      if (this.sab.byteLength < bytes) {
        throw new HeapError('OUT_OF_MEMORY', `cannot grow the shared buffer to ${formatBytes(bytes)} bytes: ${String(err)}`);
      }
    }
  }
}

export class FixedBacking implements Backing {
  readonly kind = 'fixed' as const;
  constructor(readonly sab: SharedArrayBuffer) {}
  buffer(): SharedArrayBuffer {
    return this.sab;
  }
  byteLength(): number {
    return this.sab.byteLength;
  }
  ensure(bytes: number): void {
    if (bytes > this.sab.byteLength) {
      throw new HeapError('OUT_OF_MEMORY', `the fixed buffer is ${formatBytes(this.sab.byteLength)} bytes; ${bytes} needed`);
    }
  }
}

export class WasmBacking implements Backing {
  readonly kind = 'wasm' as const;
  constructor(readonly memory: WebAssembly.Memory, private readonly maxBytes: number) {}
  buffer(): SharedArrayBuffer {
    return this.memory.buffer as unknown as SharedArrayBuffer;
  }
  byteLength(): number {
    return this.memory.buffer.byteLength;
  }
  /**
   * `memory.grow` takes a delta, so racing agents could grow twice for one need. Each agent instead moves
   * a shared target (in pages) with one CAS and grows by exactly the pages its own CAS added: the sum of
   * all deltas is the target. An agent whose need is covered by another's in-flight growth spins briefly,
   * then grows by the shortfall itself (so a grower that died mid-way cannot stall the others).
   */
  ensure(bytes: number, header: Int32Array, growPagesWord: number): void {
    if (this.memory.buffer.byteLength >= bytes) return;
    const need = Math.ceil(Math.min(this.maxBytes, Math.ceil(bytes / GROW_STEP) * GROW_STEP) / WASM_PAGE);
    for (;;) {
      const target = Atomics.load(header, growPagesWord);
      if (target >= need) break;
      if (Atomics.compareExchange(header, growPagesWord, target, need) === target) {
        this.grow(need - target, bytes);
        break;
      }
    }
    for (let spin = 0; spin < 100_000 && this.memory.buffer.byteLength < bytes; spin++);
    const short = bytes - this.memory.buffer.byteLength;
    if (short > 0) this.grow(Math.ceil(short / WASM_PAGE), bytes);
  }
  private grow(pages: number, bytes: number): void {
    try {
      this.memory.grow(pages);
    } catch (err) {
      if (this.memory.buffer.byteLength < bytes) {
        throw new HeapError('OUT_OF_MEMORY', `cannot grow the wasm memory to ${formatBytes(bytes)} bytes: ${String(err)}`);
      }
    }
  }
}
