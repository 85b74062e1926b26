/**
 * The one shape every peer takes in the benchmark. The timed loops call only `malloc` and `free`;
 * `setup` and `teardown` run outside the timing, once per round, so every round starts from a fresh
 * allocator instance.
 */
export interface Adapter {
  /** The peer's name, as the table and the JSON show it. */
  readonly name: string;
  /** Create a fresh allocator instance able to hold `maxBytes`. Untimed. */
  setup(maxBytes: number): void;
  /** Allocate `size` bytes; 0 when out of memory. */
  malloc(size: number): number;
  /**
   * Free `ptr`. The drivers always pass the size given to `malloc`: the floor needs it (its blocks
   * carry no header); every other peer ignores it.
   */
  free(ptr: number, size: number): void;
  /** Drop the instance (and its memory). Untimed. */
  teardown(): void;
  /** The bytes `ptr` indexes into, for the self-check; null where the peer cannot show them. */
  bytes(): Uint8Array | null;
  /**
   * The allocator's own object, which the timed loops call instead of the adapter (valid from `setup` to
   * `teardown`), so that no peer's per-op time includes a wrapper's call: Paddock's heap, thi.ng's pool, the
   * wasm module's exports. Its `free` takes the pointer alone (the loops pass no size; see {@link sized}).
   * Absent: the loops call the adapter itself (the floor, which is its own allocator).
   */
  callee?(): Callee;
  /** Whether `free` needs the size (only the floor: nothing records it). The loops pass it only then. */
  readonly sized?: boolean;
}

/** What the timed loops call: an allocator's own `malloc` and `free`. */
export interface Callee {
  malloc(size: number): number;
  free(ptr: number, size?: number): void;
}
