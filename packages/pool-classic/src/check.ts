/**
 * The classic pool's consistency check: it walks everything one agent can see and validates it, throwing
 * HeapError `CORRUPTION` that names the first broken rule. It sees the MiB table, the agent's own free
 * lists, bump ranges and free large blocks, every list on the global stacks and the global large list
 * (each taken off while it is checked, then put back); it cannot see other agents' local lists.
 */
import { formatAddress, type AddressSpace } from '@paddock/platform';
import {
  CLASS_COUNT,
  H_ENTRY,
  H_MAGIC,
  H_MIBS,
  H_STACK_COUNT,
  KIND_MASK,
  LARGE_GLOBAL,
  LARGE_LIVE,
  LARGE_LOCAL,
  MAGIC,
  MIN_OBJECT,
  MiB,
  PAGES_PER_MIB,
  entryWord,
  freeMark,
  keyFootprint,
  keyMib,
  listCapacity,
} from './layout.js';
import { corrupt } from './errors.js';
import type { LargeBlocks } from './large.js';
import { popList, pushList, type LargeList } from './shared.js';

/** The checking agent's small-object state: per class its free list (head, length) and bump range. */
export interface AgentLists {
  readonly head: Float64Array;
  readonly len: Int32Array;
  readonly bump: Float64Array;
  readonly bumpEnd: Float64Array;
}

/**
 * Checks the pool whose header is at `headerAddress` (`hdr` its Int32 view, `heads` its stack heads),
 * as the agent with small-object state `lists` and large blocks `large` sees it.
 * @throws HeapError `CORRUPTION` naming the first broken rule.
 */
export function checkPool(space: AddressSpace, headerAddress: number, hdr: Int32Array, heads: BigInt64Array, lists: AgentLists, large: LargeBlocks): void {
  if (Atomics.load(hdr, H_MAGIC) !== MAGIC) corrupt('the pool header lost its magic', headerAddress);
  const check = new PoolCheck(space, hdr, heads);
  check.table();
  check.agentLists(lists);
  check.globalStacks();
  check.localLarge(large.keys);
  check.globalLarge(large.global);
}

/** One run of the check: the pool's views, and every free object and block seen so far. */
class PoolCheck {
  private readonly mibs: number;
  private readonly maxBytes: number;
  private readonly pagesAt: number;
  /**
   * Free objects and free large blocks already found on a list (none may be on two): one bit per 32 bytes of
   * the space, bit `p >>> 5` for the object or block at `p` (every one starts on a 32-byte boundary), so
   * the record costs maxBytes / 256 bytes (16 MiB for 4 GiB) however many blocks are free.
   */
  private readonly seen: Int32Array;

  constructor(
    private readonly space: AddressSpace,
    private readonly hdr: Int32Array,
    private readonly heads: BigInt64Array,
  ) {
    this.mibs = hdr[H_MIBS]!;
    this.maxBytes = space.maxBytes;
    this.pagesAt = H_ENTRY + this.mibs;
    this.seen = new Int32Array(Math.ceil(this.maxBytes / (MIN_OBJECT * 32)));
  }

  /** Records the free object or block at `p` (a multiple of 32 inside the space); false if it was recorded before. */
  private firstSighting(p: number): boolean {
    const word = p >>> 10;
    const bit = 1 << ((p >>> 5) & 31);
    const w = this.seen[word]!;
    if ((w & bit) !== 0) return false;
    this.seen[word] = w | bit;
    return true;
  }

  /** The MiB table: kinds known, high-water marks sane, no entry inside a large block. */
  table(): void {
    const hdr = this.hdr;
    let coverHead = -1;
    let coverEnd = 0;
    for (let m = 0; m < this.mibs; m++) {
      const e = Atomics.load(hdr, H_ENTRY + m);
      const k = e & KIND_MASK;
      if (k === 0) continue;
      if (m < coverEnd) {
        // Another agent may have split that block since we read it: splitting only shrinks a head.
        coverEnd = coverHead + (Atomics.load(hdr, H_ENTRY + coverHead) >>> 8);
        if (m < coverEnd) corrupt(`MiB ${m} has an entry but lies inside the large block at ${formatAddress(coverHead * MiB)}`, m * MiB);
      }
      const v = e >>> 8;
      if ((e & 0xe0) !== 0) corrupt(`MiB ${m} has a malformed entry ${e}`, m * MiB);
      if (k <= CLASS_COUNT) {
        if (v > MiB || v % (32 << (k - 1)) !== 0) corrupt(`class block at MiB ${m} has high-water offset ${v}`, m * MiB);
      } else if (k >= LARGE_LIVE && k <= LARGE_GLOBAL) {
        if (v < 1 || m + v > this.mibs) corrupt(`large block at MiB ${m} claims ${v} MiBs`, m * MiB);
        if (k === LARGE_LIVE) {
          const pages = hdr[this.pagesAt + m]!;
          if (pages <= PAGES_PER_MIB || Math.ceil(pages / PAGES_PER_MIB) !== v) corrupt(`live large block at MiB ${m} has ${pages} pages in ${v} MiBs`, m * MiB);
        }
        coverHead = m;
        coverEnd = m + v;
      } else {
        corrupt(`MiB ${m} has an unknown kind ${k}`, m * MiB);
      }
    }
  }

  /** This agent's free list and bump range of every class. */
  agentLists(lists: AgentLists): void {
    for (let c = 0; c < CLASS_COUNT; c++) {
      this.walkList(c, lists.head[c]!, lists.len[c]!, `this agent's class ${c} list`);
      const b = lists.bump[c]!;
      const end = lists.bumpEnd[c]!;
      if (b !== 0) {
        const base = end - MiB;
        const e = this.hdr[H_ENTRY + base / MiB]!;
        if (end % MiB !== 0 || b < base || b > end) corrupt(`class ${c} bump range [${formatAddress(b)}, ${formatAddress(end)}) is not inside one 1 MiB block`, b);
        if ((e & KIND_MASK) !== c + 1) corrupt(`class ${c} bump range lies in a MiB that is not a class ${c} block`, base);
        if (e >>> 8 !== b - base) corrupt(`class ${c} block's high-water offset ${e >>> 8} differs from this agent's bump offset ${b - base}`, base);
      }
    }
  }

  /** Every list on the global stacks: each is taken off (so nobody changes it while we look), checked, and put back. */
  globalStacks(): void {
    const space = this.space;
    for (let c = 0; c < CLASS_COUNT; c++) {
      const taken: number[] = [];
      try {
        for (let h = popList(space, this.heads, c); h !== 0; h = popList(space, this.heads, c)) {
          taken.push(h);
          const n = space.u32[(h >>> 2) + 2]!;
          if (n < 1 || n > listCapacity(c)) corrupt(`a class ${c} list on the global stack claims ${n} objects (1 to ${listCapacity(c)} allowed)`, h);
          this.walkList(c, h, n, `a class ${c} list on the global stack`);
        }
      } finally {
        for (let j = taken.length - 1; j >= 0; j--) {
          const h = taken[j]!;
          const n = space.u32[(h >>> 2) + 2]!;
          Atomics.sub(this.hdr, H_STACK_COUNT + c, n);
          pushList(space, this.hdr, this.heads, c, h, n);
        }
      }
    }
  }

  /** This agent's free large blocks, as ascending keys: sorted, and each marked free and local. */
  localLarge(keys: readonly number[]): void {
    for (let j = 0; j < keys.length; j++) {
      const key = keys[j]!;
      if (j > 0 && keys[j - 1]! >= key) corrupt(`this agent's large list is not sorted at entry ${j}`);
      const fp = keyFootprint(key);
      const m = keyMib(key);
      if (this.hdr[H_ENTRY + m] !== entryWord(LARGE_LOCAL, fp)) corrupt(`a block on this agent's large list (${fp} MiB) is not marked as a free local block`, m * MiB);
      if (!this.firstSighting(m * MiB)) corrupt('a large block is on this agent\'s large list twice', m * MiB);
    }
  }

  /** The global large list, taken while it is checked and put back: sorted, and each block marked free and global. */
  globalLarge(global: LargeList): void {
    const list = global.take();
    try {
      let prevKey = -1;
      let count = 0;
      for (let b = list; b !== 0; b = global.next(b)) {
        if (++count > this.mibs) corrupt('the global large list is longer than the space has MiBs (a cycle)');
        if (b % MiB !== 0 || b >= this.maxBytes) corrupt(`the global large list links to ${formatAddress(b)}, not a MiB of the space`, b);
        const e = this.hdr[H_ENTRY + b / MiB]!;
        if ((e & KIND_MASK) !== LARGE_GLOBAL) corrupt('a block on the global large list is not marked as a free global block', b);
        const key = global.key(b);
        if (key <= prevKey) corrupt('the global large list is not sorted by size', b);
        if (!this.firstSighting(b)) corrupt('a large block is on two lists', b);
        prevKey = key;
      }
    } finally {
      global.putBack(list);
    }
  }

  /** A list of free class `c` objects from `head`, `length` long: every object in a class `c` block, handed out before, still marked free, and on no other list. */
  private walkList(c: number, head: number, length: number, where: string): void {
    const space = this.space;
    let p = head;
    let n = 0;
    while (p !== 0) {
      if (n >= length) corrupt(`${where} is longer than its length ${length}: a cycle or a corrupted link`, p);
      if (!(p > 0 && p < this.maxBytes) || p % 1 !== 0) corrupt(`${where} links to ${formatAddress(p)}, outside the heap`);
      const e = this.hdr[H_ENTRY + (p >>> 20)]!;
      if ((e & KIND_MASK) !== c + 1) corrupt(`${where} holds ${formatAddress(p)}, which is not in a class ${c} block`, p);
      const off = p % MiB;
      if (off % (32 << c) !== 0) corrupt(`${where} holds ${formatAddress(p)}, not on an object boundary`, p);
      if (off >= e >>> 8) corrupt(`${where} holds ${formatAddress(p)}, above its block's high-water offset`, p);
      if (!space.covers(p + 8) || space.i32[(p >>> 2) + 1] !== freeMark(p, c)) corrupt(`${where} holds ${formatAddress(p)}, which lost its free mark (written after free?)`, p);
      if (!this.firstSighting(p)) corrupt(`${formatAddress(p)} is on two free lists (${where})`, p);
      n++;
      p = space.u32[p >>> 2]!;
    }
    if (n !== length) corrupt(`${where} has ${n} objects, but its length says ${length}`, head);
  }
}
