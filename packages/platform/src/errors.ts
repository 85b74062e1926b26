/**
 * The error every Paddock layer throws for a bad pointer, a bad handle, heap corruption or exhaustion.
 * Sizes and other plain bad numbers throw `RangeError` instead.
 */

/** What went wrong, as a stable code a program can test. */
export type HeapErrorCode =
  | 'OUT_OF_MEMORY'
  | 'NOT_RESERVED'
  | 'NOT_COMMITTED'
  | 'BAD_HANDLE'
  | 'BAD_POINTER'
  | 'MISALIGNED'
  | 'DOUBLE_FREE'
  | 'WRONG_SIZE'
  | 'WRONG_OWNER'
  | 'CORRUPTION'
  | 'NATIVE_UNAVAILABLE'
  | 'PROFILE_LOCKED'
  | 'DETACHED'
  /** A pointer from a scope that has been closed (checked builds keep such memory poisoned and refuse it). */
  | 'SCOPE_RELEASED'
  /** A blocking wait on a thread that may not block (a browser window's main thread): use `waitAsync`. */
  | 'CANNOT_BLOCK'
  /** A reap of an agent that is alive (its worker has not exited, or its thread answered): reaping is for agents that are gone. */
  | 'AGENT_ALIVE'
  /** A send on a channel that has been closed (`@paddock/channel`). */
  | 'CHANNEL_CLOSED'
  /** Any use of a channel that has been dropped: its blocks went back to the heap. */
  | 'CHANNEL_DROPPED'
  /** Opening a channel whose every agent record is held by a live agent (see its `agents` option). */
  | 'CHANNEL_AGENTS'
  | 'UNSUPPORTED';

/** An error from the heap, with a `code` that says which rule was broken. */
export class HeapError extends Error {
  /** The broken rule. */
  readonly code: HeapErrorCode;
  /** The address involved, when there is one. */
  readonly address: number | undefined;

  constructor(code: HeapErrorCode, message: string, address?: number) {
    super(message);
    this.name = 'HeapError';
    this.code = code;
    this.address = address;
  }
}

/** Formats a byte count for messages: exact bytes plus a readable size. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 * 1024 && n % (1024 * 1024 * 1024) === 0) return `${n} (${n / 2 ** 30} GiB)`;
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n} (${n / 2 ** 20} MiB)`;
  if (n >= 1024 && n % 1024 === 0) return `${n} (${n / 1024} KiB)`;
  return String(n);
}

/** Formats an address for messages. */
export function formatAddress(p: number): string {
  return `0x${(p >>> 0).toString(16)}`;
}

/** Describes any value for an error message without throwing. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  return Object.prototype.toString.call(value);
}
