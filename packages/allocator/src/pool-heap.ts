/**
 * What the two pool backends' heaps (classic and global) do the same way, written once: neither can reap an
 * agent (watch returns false, a thread that crashed just leaves), neither has a thread cache or a retention
 * ledger (flushCache and purgeRetention return 0), both serve every size up to the heap's, and both keep the
 * profile rung in the handle. It declares no fields and assigns none: each backend's constructor keeps its
 * own field order (malloc, free and realloc stay methods of the concrete class, see heap-base.ts).
 */
import { HeapError, describeValue } from '@paddock/platform';
import { validateProfile } from '@paddock/profile';
import { HeapBase, closedError } from './heap-base.js';
import type { HeapHandle } from './types.js';

/** The error for `free(ptr, size)` with a size that does not name the block (`usable` bytes) at `ptr`. */
export function wrongSize(ptr: number, size: number, usable: number): HeapError {
  return new HeapError('WRONG_SIZE', `free of ${ptr} with size ${describeValue(size)}: the block holds ${usable} bytes`, ptr);
}

export abstract class PoolHeapBase extends HeapBase {
  abstract readonly handle: HeapHandle;
  abstract profile: number;

  protected get canReap(): boolean {
    return false;
  }
  /** The pool serves every size above 1 MiB as a large block, up to the heap's size. */
  get largeMax(): number {
    return this.space.maxBytes;
  }
  /** No thread cache: nothing to send home. */
  flushCache(): number {
    if (this.detached) throw closedError();
    return 0;
  }
  /** No retention ledger: nothing retained to return. */
  purgeRetention(): number {
    if (this.detached) throw closedError();
    return 0;
  }
  /** A thread that crashed: the pool cannot be reaped, so the agent hands back what it can and leaves. */
  protected threadCrashed(): void {
    this.detach();
  }
  protected reapThread(): number {
    return 0;
  }
  protected watchByLocks(): boolean {
    return false;
  }
  setProfile(rung: number): void {
    if (this.detached) throw closedError();
    this.profile = validateProfile(rung);
    (this.handle as { profile?: number }).profile = this.profile;
  }
}
