/**
 * Making an address space and opening it in another agent: the choice of backing, the checks of the
 * caller's options or handle, and the header a new space starts with (see space-header.ts).
 */
import { FixedBacking, GrowableBacking, WASM_PAGE, WasmBacking, type Backing, type BackingKind } from './backing.js';
import { AddressSpace, type AddressSpaceHandle } from './address-space.js';
import { HeapError, describeValue, formatAddress, formatBytes } from './errors.js';
import { defaultBacking, type PageReturnMode } from './host.js';
import { GRANULE, SPACE_MAGIC, SPACE_VERSION, headerBytesFor, spaceHeaderMismatch, writeSpaceHeader } from './space-header.js';

/** The largest space: Node 20 caps a growable SharedArrayBuffer at 4 GiB, which fits uint32 pointers. */
export const MAX_SPACE_BYTES = 2 ** 32;
/** The smallest space worth making. */
export const MIN_SPACE_BYTES = 1 << 20;

/** Options for {@link createAddressSpace}. */
export interface AddressSpaceOptions {
  /** Upper bound of the space in bytes, up to 4 GiB; rounded up to 64 KiB. Required unless `memory` is a SharedArrayBuffer. */
  maxBytes?: number;
  /** `'growable'`, `'wasm'` or `'fixed'`; default `'growable'`, `'wasm'` under Bun (see `defaultBacking`). Ignored when `memory` is given. */
  backing?: BackingKind;
  /** An existing shared `WebAssembly.Memory` or `SharedArrayBuffer` to build the space in. */
  memory?: WebAssembly.Memory | SharedArrayBuffer;
  /** `'auto'` (default): native page return when the addon loads; `'native'`: require it; `'none'`: never. */
  pageReturn?: 'auto' | PageReturnMode;
}

/** Options for {@link openAddressSpace}. */
export interface OpenOptions {
  pageReturn?: 'auto' | PageReturnMode;
}

/** Creates a new address space (the first agent). */
export function createAddressSpace(options: AddressSpaceOptions = {}): AddressSpace {
  if (options === null || typeof options !== 'object') throw new TypeError('createAddressSpace options must be an object');
  const { memory } = options;
  let backing: Backing;
  let maxBytes: number;
  let base = 0;
  let handleFields: { buffer?: SharedArrayBuffer; memory?: WebAssembly.Memory };

  if (memory !== undefined) {
    if (memory instanceof WebAssembly.Memory) {
      if (!isShared(memory.buffer)) {
        throw new TypeError('memory must be a shared WebAssembly.Memory (created with shared: true)');
      }
      if (options.maxBytes === undefined) {
        throw new RangeError('maxBytes is required with a wasm memory: its maximum cannot be read from JavaScript');
      }
      maxBytes = checkMaxBytes(options.maxBytes);
      base = Math.ceil(memory.buffer.byteLength / GRANULE) * GRANULE;
      backing = new WasmBacking(memory, maxBytes);
      handleFields = { memory };
    } else if (memory instanceof SharedArrayBuffer) {
      if (memory.growable) {
        maxBytes = checkMaxBytes(options.maxBytes ?? memory.maxByteLength);
        if (maxBytes > memory.maxByteLength) throw new RangeError(`maxBytes ${formatBytes(maxBytes)} exceeds the buffer's maxByteLength ${memory.maxByteLength}`);
        backing = new GrowableBacking(memory, maxBytes);
      } else {
        maxBytes = checkMaxBytes(options.maxBytes ?? Math.floor(memory.byteLength / GRANULE) * GRANULE);
        if (maxBytes > memory.byteLength) throw new RangeError(`maxBytes ${formatBytes(maxBytes)} exceeds the buffer's length ${memory.byteLength}`);
        backing = new FixedBacking(memory);
      }
      if (new Int32Array(memory, 0, Math.min(memory.byteLength, 4) >>> 2)[0] === SPACE_MAGIC) {
        throw new HeapError('BAD_HANDLE', 'this buffer already holds a Paddock address space: open it with openAddressSpace(handle)');
      }
      handleFields = { buffer: memory };
    } else {
      throw new TypeError(`memory must be a shared WebAssembly.Memory or a SharedArrayBuffer, got ${describeValue(memory)}`);
    }
  } else {
    maxBytes = checkMaxBytes(options.maxBytes);
    const kind = options.backing ?? defaultBacking();
    const header = headerBytesFor(maxBytes);
    if (kind === 'growable') {
      const sab = new SharedArrayBuffer(header, { maxByteLength: maxBytes });
      backing = new GrowableBacking(sab, maxBytes);
      handleFields = { buffer: sab };
    } else if (kind === 'fixed') {
      const sab = new SharedArrayBuffer(maxBytes);
      backing = new FixedBacking(sab);
      handleFields = { buffer: sab };
    } else if (kind === 'wasm') {
      const mem = new WebAssembly.Memory({ initial: header / WASM_PAGE, maximum: maxBytes / WASM_PAGE, shared: true });
      backing = new WasmBacking(mem, maxBytes);
      handleFields = { memory: mem };
    } else {
      throw new RangeError(`backing must be 'growable', 'wasm' or 'fixed', got ${describeValue(kind)}`);
    }
  }

  const headerBytes = headerBytesFor(maxBytes);
  if (base + headerBytes > maxBytes) {
    throw new RangeError(`maxBytes ${formatBytes(maxBytes)} leaves no room after the header at ${formatAddress(base)}`);
  }
  // The header must be usable before any bookkeeping exists: grow straight to it.
  const growWord = new Int32Array(1);
  growWord[0] = Math.ceil(backing.byteLength() / WASM_PAGE);
  backing.ensure(base + headerBytes, growWord, 0);
  const hdr = new Int32Array(backing.buffer(), base, headerBytes >>> 2);
  writeSpaceHeader(hdr, backing.kind, base, maxBytes, Math.ceil(backing.byteLength() / WASM_PAGE));

  const handle: AddressSpaceHandle = {
    kind: 'paddock-address-space',
    version: SPACE_VERSION,
    backing: backing.kind,
    ...handleFields,
    base,
    maxBytes,
  };
  return new AddressSpace(backing, base, maxBytes, hdr, handle, options.pageReturn);
}

/**
 * Opens, in this agent, a space another agent created, from its handle.
 * @throws HeapError `BAD_HANDLE` when the handle is not a Paddock address space handle or its header does not match.
 */
export function openAddressSpace(handle: AddressSpaceHandle, options: OpenOptions = {}): AddressSpace {
  const bad = (why: string): never => {
    throw new HeapError('BAD_HANDLE', `not a Paddock address space handle: ${why}`);
  };
  if (handle === null || typeof handle !== 'object') bad(`got ${describeValue(handle)}`);
  if (handle.kind !== 'paddock-address-space') bad(`kind is ${describeValue(handle.kind)}`);
  if (handle.version !== SPACE_VERSION) bad(`version ${describeValue(handle.version)}, this build reads ${SPACE_VERSION}`);
  const { base, maxBytes } = handle;
  if (!Number.isInteger(maxBytes) || maxBytes < MIN_SPACE_BYTES || maxBytes > MAX_SPACE_BYTES || maxBytes % GRANULE !== 0) {
    bad(`maxBytes ${describeValue(maxBytes)}`);
  }
  if (!Number.isInteger(base) || base < 0 || base % GRANULE !== 0 || base >= maxBytes) bad(`base ${describeValue(base)}`);
  // One memory, of the kind the handle names: a handle that carries both is forged or mangled.
  if (handle.buffer !== undefined && handle.memory !== undefined) bad('it names both a buffer and a memory');
  let backing: Backing;
  if (handle.backing === 'wasm') {
    if (!(handle.memory instanceof WebAssembly.Memory) || !isShared(handle.memory.buffer)) bad('memory is not a shared WebAssembly.Memory');
    backing = new WasmBacking(handle.memory!, maxBytes);
  } else if (handle.backing === 'growable') {
    if (!(handle.buffer instanceof SharedArrayBuffer) || !handle.buffer.growable) bad('buffer is not a growable SharedArrayBuffer');
    backing = new GrowableBacking(handle.buffer!, maxBytes);
  } else if (handle.backing === 'fixed') {
    if (!(handle.buffer instanceof SharedArrayBuffer) || handle.buffer.growable) bad('buffer is not a fixed SharedArrayBuffer');
    backing = new FixedBacking(handle.buffer!);
  } else {
    return bad(`backing ${describeValue(handle.backing)}`);
  }
  const mismatch = spaceHeaderMismatch(backing.buffer(), backing.byteLength(), backing.kind, base, maxBytes);
  if (mismatch !== null) bad(mismatch);
  const hdr = new Int32Array(backing.buffer(), base, headerBytesFor(maxBytes) >>> 2);
  return new AddressSpace(backing, base, maxBytes, hdr, handle, options.pageReturn);
}


function checkMaxBytes(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < MIN_SPACE_BYTES || value > MAX_SPACE_BYTES) {
    throw new RangeError(
      `maxBytes must be an integer from ${formatBytes(MIN_SPACE_BYTES)} to ${formatBytes(MAX_SPACE_BYTES)}, got ${describeValue(value)}`,
    );
  }
  return Math.ceil(value / GRANULE) * GRANULE;
}

function isShared(buffer: unknown): boolean {
  return Object.prototype.toString.call(buffer) === '[object SharedArrayBuffer]';
}
