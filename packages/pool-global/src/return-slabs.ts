/**
 * Giving empty slabs back: a slab whose blocks are all free returns its MiB to the address space (and its
 * pages to the OS), though its free blocks sit on the class's shared list, linked through their own memory,
 * among blocks of other slabs.
 *
 * A lock-free stack offers no way to take out the blocks of one slab while other agents pop and push, so the
 * agent that returns slabs takes the whole list: one CAS swaps the head for an empty one and bumps its tag.
 * From then on the chain is the agent's alone (an agent that read the old head fails its CAS on the tag, as
 * after any pop; a read of a link in memory given back meanwhile is harmless: the space stays mapped, and
 * the CAS fails). It counts the chain's blocks per slab, seals each slab where every block it ever carved
 * is in the chain (a CAS on its TOP word to the used-up offset, from the value it counted against, so a carve
 * that raced the count makes the seal fail and the slab stays), drops a sealed slab from CARVE, clears its
 * ENTRY kind, relinks the chain without the sealed slabs' blocks, pushes what is left back in one push, and
 * only then releases the sealed slabs.
 *
 * Why nothing is lost or handed out twice: a block on the list cannot be live, so a slab whose carved
 * blocks are all in the chain has no live block; a free in flight (marked, not yet pushed) is not in the
 * chain, so its slab is not counted full. A free that checked the ENTRY before it was cleared and marks its
 * block after (possible only for a block that was already free: a second free) re-reads the ENTRY, sees it
 * changed, and refuses with DOUBLE_FREE. A carve that read CARVE before the slab was returned finds the TOP
 * word sealed, or naming another class once the MiB is a slab again, and carves nothing from it.
 *
 * Cost and risk: the walk touches every free block of the class, and while it runs other agents find the list
 * empty and carve fresh blocks; an agent terminated during the walk strands the chain it holds (those free
 * blocks are never handed out again, but every structure stays consistent). So the allocator runs it only on
 * the main thread, which no agent can terminate half way (the swarm found the stranded chain when workers ran
 * it: seed 0xc0216fd2, a worker killed in its idle return, four 128 KiB blocks lost), when asked (`returnIdle`)
 * and, from the idle tick or a wait that timed out, only for a class whose list has not changed since the
 * previous look.
 */
import type { AddressSpace } from '@paddock/platform';
import { corrupt } from './errors.js';
import type { FreeLists } from './free-lists.js';
import { freeBlockProblem } from './check.js';
import { H_CARVE, H_ENTRY, H_RETURNED, MiB, SLAB_BYTES, clearedEntry, topClass, topOffset, topWord } from './layout.js';

/** Per-MiB scratch for one call: free blocks counted per slab (-1: sealed, to return), and the MiBs touched. */
export interface SlabReturnScratch {
  counts: Int32Array;
  touched: Int32Array;
}

/** What the return needs of the pool. */
export interface SlabReturnContext {
  space: AddressSpace;
  hdr: Int32Array;
  lists: FreeLists;
  /** Word index of TOP[0] in `hdr`. */
  topAt: number;
  scratch: SlabReturnScratch;
}

/** Returns the class `c` slabs whose blocks are all free; returns the bytes given back. @throws HeapError `CORRUPTION`. */
export function returnEmptySlabs(ctx: SlabReturnContext, c: number): number {
  const { lists } = ctx;
  let first = 0;
  for (;;) {
    const old = lists.load(c);
    first = lists.first(old);
    if (first === 0) return 0;
    if (lists.casPop(c, old, 0)) break;
  }
  const { last, touched, problem } = countChain(ctx, c, first);
  if (problem !== '') {
    if (last !== 0) lists.push(ctx.space.u32, c, first, last);
    resetCounts(ctx.scratch, touched);
    return corrupt(`class ${c}'s free list ${problem}; the list is cut before it`);
  }
  const sealed = sealEmptySlabs(ctx, c, touched);
  if (sealed === 0) {
    lists.push(ctx.space.u32, c, first, last);
    resetCounts(ctx.scratch, touched);
    return 0;
  }
  relinkAndPush(ctx, c, first);
  const { counts, touched: mibs } = ctx.scratch;
  for (let i = 0; i < touched; i++) {
    const m = mibs[i]!;
    if (counts[m] === -1) ctx.space.release(m * MiB, SLAB_BYTES);
  }
  Atomics.add(ctx.hdr, H_RETURNED, sealed);
  resetCounts(ctx.scratch, touched);
  return sealed * SLAB_BYTES;
}

/**
 * Counts the chain from `first` per slab, checking each block as `check()` does; stops at the first block that
 * is not a free block of class `c` (or one that would make its slab hold more free blocks than it carved: a
 * repeat, which also ends a cycle). Returns the last good block, how many MiBs it touched, and what was wrong.
 */
function countChain(ctx: SlabReturnContext, c: number, first: number): { last: number; touched: number; problem: string } {
  const { space, hdr, topAt } = ctx;
  const { counts, touched: mibs } = ctx.scratch;
  const size = 32 << c;
  let touched = 0;
  let last = 0;
  for (let p = first; p !== 0; ) {
    const problem = freeBlockProblem(space, hdr, topAt, c, p);
    if (problem !== null) return { last, touched, problem };
    const m = p >>> 20;
    const n = counts[m]!;
    if (n >= topOffset(Atomics.load(hdr, topAt + m)) / size) {
      return { last, touched, problem: `names more blocks of the slab at ${m * MiB} than it carved (a repeat, or a cycle) at ${p}` };
    }
    if (n === 0) mibs[touched++] = m;
    counts[m] = n + 1;
    last = p;
    p = space.u32[p >>> 2]!;
  }
  return { last, touched, problem: '' };
}

/**
 * Seals every touched slab whose carved blocks are all counted (its count becomes -1), drops it from CARVE and
 * clears its ENTRY kind. Returns how many it sealed.
 */
function sealEmptySlabs(ctx: SlabReturnContext, c: number, touched: number): number {
  const { hdr, topAt } = ctx;
  const { counts, touched: mibs } = ctx.scratch;
  const size = 32 << c;
  let sealed = 0;
  for (let i = 0; i < touched; i++) {
    const m = mibs[i]!;
    const t = Atomics.load(hdr, topAt + m);
    if (topClass(t) !== c || counts[m] !== topOffset(t) / size) continue;
    if (Atomics.compareExchange(hdr, topAt + m, t, topWord(c, SLAB_BYTES)) !== t) continue;
    Atomics.compareExchange(hdr, H_CARVE + c, (m * MiB) | 0, 0);
    const e = Atomics.load(hdr, H_ENTRY + m);
    Atomics.store(hdr, H_ENTRY + m, clearedEntry(e));
    counts[m] = -1;
    sealed++;
  }
  return sealed;
}

/** Relinks the chain from `first` without the sealed slabs' blocks and pushes what is left back on the list. */
function relinkAndPush(ctx: SlabReturnContext, c: number, first: number): void {
  const u32 = ctx.space.u32;
  const counts = ctx.scratch.counts;
  let head = 0;
  let tail = 0;
  for (let p = first; p !== 0; ) {
    const next = u32[p >>> 2]!;
    if (counts[p >>> 20] !== -1) {
      if (tail === 0) head = p;
      else u32[tail >>> 2] = p;
      tail = p;
    }
    p = next;
  }
  if (tail !== 0) ctx.lists.push(u32, c, head, tail);
}

function resetCounts(scratch: SlabReturnScratch, touched: number): void {
  for (let i = 0; i < touched; i++) scratch.counts[scratch.touched[i]!] = 0;
}
