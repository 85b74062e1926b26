/**
 * The heap handle and the address space behind it, the same for every backend: `createHeap`'s options checked
 * and its space made, a handle checked (format, version, backend) and its space opened in this agent. Each
 * backend then lays out or opens its own structures in the space.
 */
import { HeapError, createAddressSpace, describeValue, openAddressSpace, type AddressSpace } from '@paddock/platform';
import { DEFAULT_PROFILE, validateProfile } from '@paddock/profile';
import type { AttachOptions, HeapHandle, HeapOptions } from './types.js';

/** The heap handle format every backend writes. */
export const HANDLE_VERSION = 1;

/**
 * Checks `createHeap`'s options and makes the address space of a new heap.
 * @throws TypeError when `options` is not an object; RangeError for a bad profile rung or size.
 */
export function createHeapSpace(options: HeapOptions): { space: AddressSpace; profile: number } {
  if (options === null || typeof options !== 'object') throw new TypeError('createHeap options must be an object');
  checkOnError(options);
  const profile = validateProfile(options.profile ?? DEFAULT_PROFILE);
  const space = createAddressSpace({
    maxBytes: options.maxBytes,
    memory: options.memory,
    backing: options.backing,
    pageReturn: options.pageReturn,
  });
  return { space, profile };
}

/**
 * Opens, in this agent, the address space of the heap `handle` names, once the handle is checked.
 * @throws HeapError BAD_HANDLE for anything that is not a live Paddock heap handle made by `backend`.
 */
export function openHeapSpace(handle: HeapHandle, backend: string, options: AttachOptions): AddressSpace {
  checkHandle(handle, backend);
  if (options !== null && typeof options === 'object') checkOnError(options);
  return openAddressSpace(handle.space, options);
}

/** @throws TypeError when the `onError` option is there and not a function, or `watchWorkers` not a boolean. */
function checkOnError(options: AttachOptions): void {
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new TypeError(`the onError option must be a function, got ${describeValue(options.onError)}`);
  }
  if (options.watchWorkers !== undefined && typeof options.watchWorkers !== 'boolean') {
    throw new TypeError(`the watchWorkers option must be a boolean, got ${describeValue(options.watchWorkers)}`);
  }
}

/**
 * Checks that `handle` is a Paddock heap handle of this format made by `backend`.
 * @throws HeapError BAD_HANDLE naming what is wrong.
 */
function checkHandle(handle: HeapHandle, backend: string): void {
  if (handle === null || typeof handle !== 'object' || handle.kind !== 'paddock-heap') {
    throw new HeapError('BAD_HANDLE', `not a Paddock heap handle: ${describeValue(handle)}`);
  }
  if (handle.version !== HANDLE_VERSION) {
    throw new HeapError('BAD_HANDLE', `heap handle version ${describeValue(handle.version)}, this build reads ${HANDLE_VERSION}`);
  }
  if (handle.backend !== backend) {
    throw new HeapError('BAD_HANDLE', `the heap uses backend ${describeValue(handle.backend)}; this heap API is ${backend}`);
  }
}
