/**
 * What every backend's heap offers the same way: views of the heap that are always current (refreshed on
 * access when another agent grew the buffer), this agent's id, and the idle tick run on the event loop.
 */
import { HeapError, describeValue, type AddressSpace } from '@paddock/platform';
import { TICK_MIN_MS, type HeapHandle } from './types.js';

/** The heap handle format every backend writes. */
export const HANDLE_VERSION = 1;

/**
 * Checks that `handle` is a Paddock heap handle of this format made by `backend`.
 * @throws HeapError BAD_HANDLE naming what is wrong.
 */
export function checkHandle(handle: HeapHandle, backend: string): void {
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

export abstract class HeapViews {
  /** The address space underneath (views, reserve, commit). */
  abstract readonly space: AddressSpace;
  /** One idle visit; returns the milliseconds until the next. */
  abstract tick(): number;
  /** Whether the agent has left the heap (its idle timers then stop). */
  abstract readonly isDetached: boolean;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private dataView: DataView | null = null;

  /** Runs {@link tick} on this agent's event loop with unref'd timers (they never keep a process alive). */
  startIdle(): void {
    if (this.idleTimer !== null) return;
    const visit = () => {
      this.idleTimer = null;
      if (this.isDetached) return;
      this.idleTimer = setTimeout(visit, this.tick());
      (this.idleTimer as { unref?: () => void }).unref?.();
    };
    this.idleTimer = setTimeout(visit, TICK_MIN_MS);
    (this.idleTimer as { unref?: () => void }).unref?.();
  }

  /** Stops the idle timers. */
  stopIdle(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** This agent's id in the heap (what `reap` takes for an agent that died). */
  get agentId(): number {
    return this.space.agentId;
  }
  /** Bytes view of the heap, current (refreshed if another agent grew the buffer). */
  get u8(): Uint8Array {
    this.space.refresh();
    return this.space.u8;
  }
  /** Int32 view of the heap, current. Index with `ptr >>> 2`. */
  get i32(): Int32Array {
    this.space.refresh();
    return this.space.i32;
  }
  /** Uint32 view of the heap, current. */
  get u32(): Uint32Array {
    this.space.refresh();
    return this.space.u32;
  }
  /** Float64 view of the heap, current. Index with `ptr >>> 3`. */
  get f64(): Float64Array {
    this.space.refresh();
    return this.space.f64;
  }
  /** A DataView over the heap, current (the same object until the buffer grows). */
  get view(): DataView {
    this.space.refresh();
    const bytes = this.space.viewBytes;
    if (this.dataView === null || this.dataView.byteLength !== bytes) this.dataView = new DataView(this.space.buffer, 0, bytes);
    return this.dataView;
  }
}
