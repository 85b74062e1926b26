/**
 * @packageDocumentation
 * `@paddock/platform`: the bottom layer of Paddock. It owns the one shared buffer a heap lives in and
 * says nothing about objects: it hands out address ranges (`reserve`/`release`), makes them usable
 * (`commit`), and gives their pages back (`decommit`, the arena's contract; `discard`, the classic
 * pool's), through a growable `SharedArrayBuffer`, a shared `WebAssembly.Memory` or a fixed
 * `SharedArrayBuffer`. Pointers are uint32 byte offsets and 0 is never handed out.
 *
 * JavaScript cannot return pages of shared memory to the OS; a small optional Node-API addon does it
 * with `madvise(MADV_DONTNEED)`. Without it (`pageReturn: 'none'`) decommit is bookkeeping only.
 *
 * ```ts
 * const space = createAddressSpace({ maxBytes: 1 << 30 });
 * const a = space.reserve(64 << 20, 64 << 20);   // 64 MiB, aligned to 64 MiB
 * space.commit(a, 1 << 20);
 * space.u8[a] = 1;
 * space.decommit(a, 1 << 20);                     // pages go back to the OS
 * new Worker(url, { workerData: space.handle });  // then openAddressSpace(workerData) there
 * ```
 */
export { AddressSpace, type AddressSpaceHandle } from './address-space.js';
export {
  MAX_SPACE_BYTES,
  MIN_SPACE_BYTES,
  createAddressSpace,
  openAddressSpace,
  type AddressSpaceOptions,
  type OpenOptions,
} from './open-space.js';
export { GRANULE, PAGE_SIZE, ROOT_COUNT, ROOT_WORD, headerBytesFor } from './space-header.js';
export { WASM_PAGE, type BackingKind } from './backing.js';
export {
  allBitsSet,
  bitMask,
  claimBitRange,
  claimFirstClearBit,
  clearBitRange,
  clearBitRangeAtomic,
  countSetBits,
  firstSetBit,
  popcount32,
  setBitRange,
  setBitRangeAtomic,
} from './bitmap.js';
export { HeapError, describeValue, formatAddress, formatBytes, type HeapErrorCode } from './errors.js';
export { checkAddressSpace, findRootHeader, publishRootHeader, type RootHeaderKind } from './root-header.js';
export {
  agentCanBlock,
  availableCores,
  hasAgentLocks,
  holdAgentLock,
  inNodeWorker,
  onMainThread,
  loadNativePageReturn,
  nativePageReturnError,
  pageReturnAddon,
  now,
  onThreadExit,
  rss,
  threadKey,
  type NativePageReturn,
  type PageReturnAddon,
  type PageReturnMode,
  type ThreadEnd,
  whenAgentLockFree,
} from './host.js';
