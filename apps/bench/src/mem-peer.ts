/**
 * The shape a peer takes in the workloads that look at memory as well as time (hold-then-free, the realloc
 * chain): a fresh instance per round, malloc / free / realloc, and what it holds from its buffer. The floor,
 * thi.ng and Paddock (one per profile rung) take it.
 */
export interface MemPeer {
  /** As the tables show it: `floor`, `thi.ng`, `paddock r3`. */
  readonly name: string;
  /** The peer it belongs to (what `--only` filters on): `floor`, `thi.ng`, `paddock`. */
  readonly family: string;
  /** Paddock's profile rung; null for the others. */
  readonly rung: number | null;
  setup(): void;
  malloc(size: number): number;
  free(ptr: number, size: number): void;
  /** Resizes the block at `ptr` (of `oldSize` bytes) to `size`; returns the new pointer, 0 when out of memory. */
  realloc(ptr: number, oldSize: number, size: number): number;
  /** The bytes pointers index, current (Paddock's buffer grows). */
  bytes(): Uint8Array;
  /**
   * Bytes the peer holds from its buffer: Paddock's committed bytes (all agents); the floor's and
   * thi.ng's high-water mark (neither can give memory back, so that is what they keep; thi.ng's is the
   * highest `top` seen at the calls to this, which the workloads make where the peak is).
   */
  committed(): number;
  /** Paddock's retention ledger in bytes (retained large units + stashed mappings); null for the others. */
  ledger(): number | null;
  teardown(): void;
}

