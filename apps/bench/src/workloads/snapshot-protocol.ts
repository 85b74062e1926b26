/** What the `snapshot-load` workload's main thread and its workers share: the control words and the worker's data. */
import type { HeapHandle } from '@paddock/allocator';

/** Control words (Int32): 1 tells the workers to stop; then one operation counter per worker. */
export const L_STOP = 0;
export const L_COUNTERS = 1;

export interface SnapshotLoadWorkerData {
  readonly paddockUrl: string;
  readonly handle: HeapHandle;
  readonly control: SharedArrayBuffer;
  readonly index: number;
  readonly window: number;
  readonly seed: number;
}
