/**
 * The per-class free lists: lock-free Treiber stacks linked through the blocks' first words, with
 * ABA-resistant heads. Each head is one BigInt64 word, `tag << 32 | first block`, changed only by
 * `Atomics.compareExchange` on a BigInt64Array. The halves are split and joined through an 8-byte scratch
 * seen both as one BigInt64 and as two Uint32 (no BigInt arithmetic: it allocates several BigInts per
 * operation and is several times slower); the scratch holds nothing between calls.
 *
 * ABA: a pop reads the head X and X's link Y, then CASes the head from X to Y. Meanwhile other agents may
 * pop X, pop Y and push X back: the head is X again but its link is no longer Y. Every successful pop bumps
 * the tag, so the head word differs and the stale CAS fails (a push needs no bump: a CAS that expects a head
 * before a push only ever installs a link read after that head was read). The tag wraps after 2^32 pops
 * between one agent's read and its CAS. The read of X's link may see a block already handed out again and
 * written by its owner: harmless, because slab memory stays mapped and the CAS then fails.
 *
 * A pop is `load`, `linkOf`, `casPop` in a loop; they are separate so a test can stop an agent between
 * reading a head and its CAS.
 */

export class FreeLists {
  /** The heads, one BigInt64 per class, over the pool header. */
  private readonly heads: BigInt64Array;
  private readonly scratch64 = new BigInt64Array(1);
  private readonly scratch32 = new Uint32Array(this.scratch64.buffer);

  constructor(buffer: SharedArrayBuffer, headsAt: number, count: number) {
    this.heads = new BigInt64Array(buffer, headsAt, count);
  }

  /** The head word of class `c`'s list (a BigInt: tag and first block). */
  load(c: number): bigint {
    return Atomics.load(this.heads, c);
  }

  /** The first block a head word names (0: the list is empty). */
  first(head: bigint): number {
    this.scratch64[0] = head;
    return this.scratch32[0]!;
  }

  /** The tag a head word carries. */
  tag(head: bigint): number {
    this.scratch64[0] = head;
    return this.scratch32[1]!;
  }

  /**
   * Replaces head word `old` of class `c` by one naming `next` with the tag bumped; returns whether the head
   * still was `old` (the pop of `first(old)` succeeded).
   */
  casPop(c: number, old: bigint, next: number): boolean {
    const s = this.scratch32;
    this.scratch64[0] = old;
    s[0] = next;
    s[1] = (s[1]! + 1) >>> 0;
    return Atomics.compareExchange(this.heads, c, old, this.scratch64[0]!) === old;
  }

  /**
   * Pushes the chain `first` .. `last` (linked through their first words; one block when they are equal) on
   * class `c`'s list: the first word of `last` (in `u32`, the agent's view of the buffer) gets the current
   * first block, then a CAS installs `first` with the same tag.
   */
  push(u32: Uint32Array, c: number, first: number, last: number): void {
    const s = this.scratch32;
    const at = last >>> 2;
    for (;;) {
      const old = Atomics.load(this.heads, c);
      this.scratch64[0] = old;
      u32[at] = s[0]!;
      s[0] = first;
      if (Atomics.compareExchange(this.heads, c, old, this.scratch64[0]!) === old) return;
    }
  }
}
