/**
 * What the swarm's killed workers leave behind, and the end check of the heap against it.
 *
 * A worker terminated at any instruction may be inside one heap call. Its pending words in the ledger (the
 * operation, its request size, the usable size it releases; the kind is stored last) say which, so each kill
 * widens what the heap may hold at the end by at most that one block: a malloc may have handed out a block
 * the ledger never recorded (one block, at most the request's usable bound), a free may have released a block
 * the ledger still has it hold (one block, its usable size), a realloc either or both.
 *
 * On pool_global nothing reaps a killed worker: the pool keeps no agent state, so `reap` throws UNSUPPORTED
 * and `watch` returns false. The blocks the ledger wrote off with it (held by it, or in transit to or from
 * it) stay live for good, and every other block comes back. At the end the pool's live blocks must be exactly
 * those, by count and by bytes within the window above, and class by class when no kill fell inside a call.
 */
import type { Heap } from '@paddock/allocator';
import { OP_FREE, OP_MALLOC, OP_REALLOC } from './swarm-protocol.js';

const MiB = 1 << 20;
/** The header in front of each large block of the global pool (its `LARGE_HEADER`). */
const GLOBAL_LARGE_HEADER = 64;

/**
 * An upper bound of the usable size a request of `size` bytes gets from an arena or a pool (0 for oversized).
 * Above 1 MiB an arena rounds a block up to its 16 KiB units and the classic pool to pages; the global pool maps
 * whole pages that also hold the block's 64-byte header, so a request just under a 16 KiB multiple can get up to
 * 4 KiB less 64 bytes past that multiple.
 */
export function usableBound(size: number, largeMax: number): number {
  if (size > largeMax) return 0;
  if (size <= MiB) return Math.max(32, 2 ** Math.ceil(Math.log2(Math.max(1, size))));
  return Math.max(Math.ceil(size / 16384) * 16384, Math.ceil((size + GLOBAL_LARGE_HEADER) / 4096) * 4096 - GLOBAL_LARGE_HEADER);
}

/** How far the heap's live figures may stray from the ledger's because of the calls killed workers were in. */
export class KillWindow {
  /** Bytes and blocks the heap may hold fewer of (frees the ledger did not see finish). */
  bytesLow = 0;
  countLow = 0;
  /** Bytes and blocks the heap may hold more of (mallocs the ledger did not see finish). */
  bytesHigh = 0;
  countHigh = 0;

  /** Widens the window by the call a killed worker was in (`op` from its pending words; OP_NONE: none). */
  add(op: number, size: number, old: number, largeMax: number): void {
    if (op === OP_MALLOC || op === OP_REALLOC) {
      this.bytesHigh += usableBound(size, largeMax);
      this.countHigh++;
    }
    if (op === OP_FREE || op === OP_REALLOC) {
      this.bytesLow += old;
      this.countLow++;
    }
  }

  /** No killed worker was inside a heap call: the figures must match exactly. */
  get closed(): boolean {
    return this.countLow === 0 && this.countHigh === 0;
  }
}

/** What the ledger says is live at the end: blocks died with killed workers, by class size (-1: large). */
export class Stranded {
  bytes = 0;
  count = 0;
  readonly byClass = new Map<number, number>();

  add(usable: number): void {
    this.bytes += usable;
    this.count++;
    const key = usable <= MiB ? usable : -1; // a small block's usable size is its class size
    this.byClass.set(key, (this.byClass.get(key) ?? 0) + 1);
  }
}

/** Where the heap's live blocks differ from the ledger's, class by class, for a failure report. */
export function liveByClass(s: ReturnType<Heap['stats']>, expectedBy: Map<number, number>): string {
  const diffs: string[] = [];
  for (const c of s.perClass) {
    const want = expectedBy.get(c.size) ?? 0;
    if (c.live !== want) diffs.push(`${c.size} B: ${c.live} live, ${want} expected`);
  }
  const large = expectedBy.get(-1) ?? 0;
  if (s.backend === 'pool_arena' || s.backend === 'pool_global') {
    const blocks = s.backend === 'pool_arena' ? s.largeObjects : s.largeBlocks;
    if (blocks !== large) diffs.push(`large: ${blocks} live (${s.largeBytes} bytes), ${large} expected`);
  }
  return diffs.length > 0 ? `\n  by class: ${diffs.join('; ')}` : '';
}

/**
 * After a worker on pool_global was terminated: the pool offers nothing to reap (what it held stays live).
 * @returns a failure message, or null.
 */
export function nothingToReap(heap: Heap, agentId: number): string | null {
  try {
    const report = heap.reap(agentId);
    return `reap of a dead agent on pool_global did something: ${JSON.stringify(report)}`;
  } catch (e) {
    const code = (e as { code?: string }).code;
    return code === 'UNSUPPORTED' ? null : `reap of a dead agent on pool_global threw ${(e as Error).name} ${code ?? ''}, not UNSUPPORTED: ${(e as Error).message}`;
  }
}

/**
 * The end check on pool_global: the pool's live blocks are the ones that died with killed workers.
 * @returns a failure message (it starts "live bytes at the end", a leak), or null.
 */
export function strandedMismatch(s: ReturnType<Heap['stats']>, want: Stranded, w: KillWindow): string | null {
  if (s.backend !== 'pool_global') return `the end check for pool_global got the stats of ${s.backend}`;
  const count = s.perClass.reduce((n, c) => n + c.live, s.largeBlocks);
  const bytesOk = s.liveBytes >= want.bytes - w.bytesLow && s.liveBytes <= want.bytes + w.bytesHigh;
  const countOk = count >= want.count - w.countLow && count <= want.count + w.countHigh;
  const byClass = liveByClass(s, want.byClass);
  if (bytesOk && countOk && (!w.closed || byClass === '')) return null;
  const range = w.closed
    ? ''
    : ` (${want.bytes - w.bytesLow}..${want.bytes + w.bytesHigh} bytes, ${want.count - w.countLow}..${want.count + w.countHigh} blocks allowing for the calls the killed workers were in)`;
  return (
    `live bytes at the end: ${s.liveBytes} in ${count} blocks, expected ${want.bytes} in ${want.count} blocks, what died with the killed workers${range}` +
    ` - ${s.liveBytes > want.bytes || count > want.count ? 'blocks were freed but stayed live (leaked)' : 'blocks live in the ledger are free in the pool'}` +
    byClass
  );
}
