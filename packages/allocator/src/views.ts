/**
 * What every backend's heap offers the same way: views of the heap that are always current (refreshed on
 * access when another agent grew the buffer), and this agent's id.
 */
import type { AddressSpace } from '@paddock/platform';

export abstract class HeapViews {
  /** The address space underneath (views, reserve, commit). */
  abstract readonly space: AddressSpace;

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
  /** A DataView over the heap, current. */
  get view(): DataView {
    this.space.refresh();
    return new DataView(this.space.buffer, 0, this.space.viewBytes);
  }
}
