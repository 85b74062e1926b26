/**
 * Typed views of heap blocks, and strings in heap blocks: what `HeapBase` inherits from `HeapViews` (the view and
 * string methods of {@link Heap}). A view is a fixed-length typed array over the heap's shared buffer, starting at
 * a block; it is made by one `malloc` (or `calloc`, `realloc`) and one typed-array construction, and `free(view)`
 * checks that the view is over this heap's memory (the current buffer, an older buffer of a wasm memory, or the
 * same memory received from another agent) and starts at a block before anything changes. A string is a record:
 * its UTF-8 byte length in a Uint32 and the bytes right after (see strings.ts). docs/design/allocator.md says why.
 */
import { HeapError, ROOT_WORD, describeValue, type AddressSpace } from '@paddock/platform';
import { STRING_HEADER_BYTES, decodeUtf8, encodeString, encodeUtf8, encodesWhole, utf8Length, writeEncoded } from './strings.js';

/** A typed array a heap block can be viewed as: every integer and float type (Float16Array too where the runtime has it). */
export type HeapView =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

/** A typed array's constructor (`Float64Array`, `BigInt64Array`, ...), what the view methods take. */
export interface HeapViewConstructor {
  readonly prototype: HeapView;
  readonly BYTES_PER_ELEMENT: number;
  new (buffer: SharedArrayBuffer, byteOffset: number, length: number): HeapView;
}

/** The view a constructor makes: `ViewOf<typeof Float64Array>` is a Float64Array. */
export type ViewOf<C extends HeapViewConstructor> = C['prototype'];

/** `%TypedArray%`, every typed array constructor's prototype: how a constructor is told to be one. */
const TypedArray = Object.getPrototypeOf(Int8Array) as object;

/**
 * The root word (of the space header's eight) that holds the heap's memory identity: a random non-zero number the
 * first agent that needs it stores (see {@link HeapViews.ownsBuffer}). Roots 0 to 2 hold the layers' headers.
 */
export const IDENTITY_ROOT = 7;

/**
 * Buffers found to be some heap's memory, with that heap's identity: a view's buffer is probed once per buffer
 * object (per thread), then found here. Weak: an old buffer no view holds any longer goes.
 */
const bufferIdentity = new WeakMap<object, number>();

/** @throws TypeError unless `ctor` is a typed array constructor. */
function checkCtor(ctor: HeapViewConstructor, op: string): number {
  if (typeof ctor !== 'function' || Object.getPrototypeOf(ctor) !== TypedArray) {
    throw new TypeError(`${op} takes a typed array constructor (Float64Array, BigInt64Array, ...), got ${describeValue(ctor)}`);
  }
  return ctor.BYTES_PER_ELEMENT;
}

/** @throws RangeError unless `length` is a non-negative integer whose bytes (`length * bpe`) are within `maxBytes`. */
function checkLength(length: number, bpe: number, maxBytes: number, op: string): number {
  if ((length >>> 0) !== length && !(Number.isInteger(length) && length >= 0)) {
    throw new RangeError(`${op}: length must be a non-negative integer, got ${describeValue(length)}`);
  }
  const bytes = length * bpe;
  if (bytes > maxBytes) throw new RangeError(`${op}: ${length} elements of ${bpe} bytes are ${bytes} bytes, more than maxBytes ${maxBytes}`);
  return bytes;
}

/** A pointer error of a view method, with what the backend said. */
function badPointer(op: string, ptr: unknown, why: string): HeapError {
  return new HeapError('BAD_POINTER', `${op}(${describeValue(ptr)}): ${why}`, typeof ptr === 'number' ? ptr : undefined);
}

/**
 * The view and string methods every backend's heap has (see {@link Heap}); `HeapBase` extends this class. It
 * declares no fields and assigns none (the backends keep their own field order, see heap-base.ts).
 */
export abstract class HeapViews {
  abstract readonly space: AddressSpace;
  abstract malloc(size: number): number;
  abstract calloc(count: number, size: number): number;
  abstract realloc(ptr: number, size: number): number;
  abstract free(ptr: number | HeapView, size?: number): void;
  abstract usableSize(ptr: number): number;

  /** A view of `length` elements over the block at `ptr`, through this agent's views once they cover it. */
  private viewAt<C extends HeapViewConstructor>(ctor: C, ptr: number, length: number, bytes: number): ViewOf<C> {
    const space = this.space;
    if (ptr + bytes > space.viewBytes) space.covers(ptr + bytes);
    // `space.buffer`, not `space.u8.buffer`: a typed array's `buffer` getter costs several times a field read.
    return new ctor(space.buffer, ptr, length) as ViewOf<C>;
  }

  /** A new block of `length` elements, as a view (see {@link Heap.mallocAs}). */
  mallocAs<C extends HeapViewConstructor>(ctor: C, length: number): ViewOf<C> {
    const bytes = checkLength(length, checkCtor(ctor, 'mallocAs'), this.space.maxBytes, 'mallocAs');
    return this.viewAt(ctor, this.malloc(bytes), length, bytes);
  }

  /** A new zeroed block of `length` elements, as a view (see {@link Heap.callocAs}). */
  callocAs<C extends HeapViewConstructor>(ctor: C, length: number): ViewOf<C> {
    const bpe = checkCtor(ctor, 'callocAs');
    const bytes = checkLength(length, bpe, this.space.maxBytes, 'callocAs');
    return this.viewAt(ctor, this.calloc(length, bpe), length, bytes);
  }

  /** Resizes the block `view` starts to `length` of its elements; a new view (see {@link Heap.reallocAs}). */
  reallocAs<V extends HeapView>(view: V, length: number): V {
    const ctor = (ArrayBuffer.isView(view) ? view.constructor : null) as HeapViewConstructor;
    const bytes = checkLength(length, checkCtor(ctor, 'reallocAs'), this.space.maxBytes, 'reallocAs');
    const ptr = this.viewPointer(view, 'reallocAs');
    return this.viewAt(ctor, this.realloc(ptr, bytes), length, bytes) as V;
  }

  /** A view of `length` elements over the live block at `ptr`, checked (see {@link Heap.viewAs}). */
  viewAs<C extends HeapViewConstructor>(ctor: C, ptr: number, length: number): ViewOf<C> {
    const bpe = checkCtor(ctor, 'viewAs');
    const bytes = checkLength(length, bpe, this.space.maxBytes, 'viewAs');
    if (typeof ptr === 'number' && ptr % bpe !== 0) {
      throw new HeapError('MISALIGNED', `viewAs(${ctor.name}, ${describeValue(ptr)}): a ${ctor.name} needs an address aligned to ${bpe} bytes`, ptr);
    }
    const usable = this.liveBlockSize(ptr, 'viewAs');
    if (bytes > usable) throw new RangeError(`viewAs: ${length} elements of ${bpe} bytes are ${bytes} bytes, more than the ${usable} the block at ${ptr} holds`);
    return this.viewAt(ctor, ptr, length, bytes);
  }

  /** The pointer of the live block `view` starts, checked (see {@link Heap.pointerOf}). */
  pointerOf(view: HeapView | DataView): number {
    const ptr = this.viewPointer(view, 'pointerOf');
    this.liveBlockSize(ptr, 'pointerOf');
    return ptr;
  }

  /** The usable size of the live block at `ptr`; every refusal of the backend a BAD_POINTER (DETACHED stays). */
  private liveBlockSize(ptr: number, op: string): number {
    if (typeof ptr !== 'number' || ptr === 0) throw badPointer(op, ptr, 'not a block of this heap');
    try {
      return this.usableSize(ptr);
    } catch (err) {
      if (err instanceof HeapError && err.code !== 'DETACHED') throw badPointer(op, ptr, `not a live block of this heap (${err.message})`);
      throw err;
    }
  }

  /**
   * The byte offset of `view` once its buffer is this heap's memory: where a block would start (not yet checked; each
   * backend's `free` takes a view through this, then checks the offset as any pointer).
   * @throws TypeError for something that is not a typed array or DataView; HeapError BAD_POINTER for a view of
   * another buffer or one at offset 0.
   */
  protected viewPointer(view: unknown, op: string): number {
    if (!ArrayBuffer.isView(view)) throw new TypeError(`${op} takes a typed array over this heap, got ${describeValue(view)}`);
    const buffer = view.buffer;
    if (buffer !== this.space.buffer && !this.ownsBuffer(buffer)) {
      throw new HeapError('BAD_POINTER', `${op}: the view is over another buffer, not this heap's memory`);
    }
    const ptr = view.byteOffset;
    if (ptr === 0) throw badPointer(op, ptr, 'a view at offset 0 starts no block');
    return ptr;
  }

  /**
   * Whether `buffer` is this heap's memory though not this agent's current buffer object: a wasm memory's buffer
   * from before a grow, or the heap's buffer as another agent sent it (a new object over the same memory). Probed
   * once per buffer object: the heap's identity word (root {@link IDENTITY_ROOT}, set to a random number on first
   * need) must read the same through it. Another heap's buffer has another identity, or none.
   */
  private ownsBuffer(buffer: ArrayBufferLike): boolean {
    const id = this.identity();
    const known = bufferIdentity.get(buffer);
    if (known !== undefined) return known === id;
    if (typeof SharedArrayBuffer === 'undefined' || !(buffer instanceof SharedArrayBuffer)) return false;
    const word = this.space.base + (ROOT_WORD + IDENTITY_ROOT) * 4;
    if (buffer.byteLength < word + 4) return false;
    const seen = Atomics.load(new Int32Array(buffer, word, 1), 0);
    if (seen === 0) return false; // no heap's identity, or a heap that never needed one (then not this one)
    bufferIdentity.set(buffer, seen);
    return seen === id;
  }

  /** This heap's identity word, set once to a random non-zero number by whichever agent needs it first. */
  private identity(): number {
    const space = this.space;
    let id = space.root(IDENTITY_ROOT);
    while (id === 0) {
      const drawn = (Math.random() * 0xffffffff) | 0;
      if (drawn === 0) continue;
      const was = space.casRoot(IDENTITY_ROOT, 0, drawn);
      id = was === 0 ? drawn : was;
    }
    return id;
  }

  // ---- strings ------------------------------------------------------------------------------------

  /** A new block holding `s` as a string record (see {@link Heap.mallocString}). */
  mallocString(s: string): number {
    if (typeof s !== 'string') throw new TypeError(`mallocString takes a string, got ${describeValue(s)}`);
    if (encodesWhole(s)) {
      const encoded = encodeUtf8(s);
      const at = this.malloc(STRING_HEADER_BYTES + encoded.length);
      writeEncoded(this.space, encoded, at);
      return at;
    }
    const bytes = utf8Length(s);
    const ptr = this.malloc(STRING_HEADER_BYTES + bytes);
    encodeString(this.space, s, ptr, bytes);
    return ptr;
  }

  /** Writes `s` as a string record at `ptr` within `capacity` bytes (see {@link Heap.writeString}). */
  writeString(s: string, ptr: number, capacity: number): number {
    if (typeof s !== 'string') throw new TypeError(`writeString takes a string, got ${describeValue(s)}`);
    if ((capacity >>> 0) !== capacity) throw new RangeError(`writeString: capacity must be a non-negative integer, got ${describeValue(capacity)}`);
    this.checkRange(ptr, capacity, 'writeString');
    const encoded = encodesWhole(s) ? encodeUtf8(s) : null;
    const bytes = encoded === null ? utf8Length(s) : encoded.length;
    if (STRING_HEADER_BYTES + bytes > capacity) {
      throw new RangeError(`writeString: the string takes ${STRING_HEADER_BYTES + bytes} bytes (a ${STRING_HEADER_BYTES}-byte length and ${bytes} of UTF-8), more than the capacity ${capacity}`);
    }
    if (encoded === null) encodeString(this.space, s, ptr, bytes);
    else writeEncoded(this.space, encoded, ptr);
    return STRING_HEADER_BYTES + bytes;
  }

  /** The string of the record at `ptr` (see {@link Heap.readString}). */
  readString(ptr: number): string {
    this.checkRange(ptr, STRING_HEADER_BYTES, 'readString');
    const space = this.space;
    const bytes = space.u32[ptr >>> 2]!;
    const end = ptr + STRING_HEADER_BYTES + bytes;
    if (end > space.viewBytes && !space.covers(end)) {
      throw new HeapError('CORRUPTION', `readString(${ptr}): the record says ${bytes} bytes, past the end of the heap's memory: no string record starts there`, ptr);
    }
    return decodeUtf8(space.u8, ptr + STRING_HEADER_BYTES, bytes);
  }

  /** The UTF-8 bytes of `s` (see {@link Heap.stringBytes}). */
  stringBytes(s: string): number {
    if (typeof s !== 'string') throw new TypeError(`stringBytes takes a string, got ${describeValue(s)}`);
    return utf8Length(s);
  }

  /**
   * @throws HeapError DETACHED once closed; BAD_POINTER unless `ptr` is a 4-aligned address past the space header
   * whose `bytes` lie within the heap's memory.
   */
  private checkRange(ptr: number, bytes: number, op: string): void {
    if ((this as unknown as { detached: boolean }).detached) {
      throw new HeapError('DETACHED', 'this heap object is closed (its agent left the heap); attach again to use the heap');
    }
    const space = this.space;
    if ((ptr >>> 0) !== ptr || (ptr & 3) !== 0 || ptr < space.base + space.headerBytes) {
      throw badPointer(op, ptr, `a string record lies at a 4-aligned address inside the heap (past its header, ${space.base + space.headerBytes})`);
    }
    const end = ptr + bytes;
    if (end > space.viewBytes && !space.covers(end)) throw badPointer(op, ptr, `${bytes} bytes from it reach past the heap's memory (${space.viewBytes} bytes)`);
  }
}
