// The block exchange, run from the thread that made the heap (a Node test or a browser page): AGENTS agents
// (see block-exchange-agent.mjs) each allocate BLOCKS stamped blocks from one side, and the next agent checks
// and frees them from the other (wasm allocates, JS frees; then JS allocates, wasm frees). The report says
// what a test must see: every block of a round live at once, distinct and inside the heap, every stamp
// intact, nothing left live, check() passing, the module's static data below the heap untouched.
import type { Heap, HeapOptions } from '../src/types.js';

export const AGENTS = 4;
export const BLOCKS = 10_000;
/** The heap's limit: 256 MiB, room for the arena's 64 MiB regions above the header. */
const HEAP_BYTES = 256 << 20;

/**
 * The exchange's heap, made by `create` (any backend's createHeap) in a new shared WebAssembly.Memory whose
 * first page is left to the module's static data: the heap starts after the memory's length.
 */
export function exchangeHeap(create: (options: HeapOptions) => Heap): { heap: Heap; memory: WebAssembly.Memory } {
  const memory = new WebAssembly.Memory({ initial: 1, maximum: HEAP_BYTES / 65536, shared: true });
  return { heap: create({ memory, maxBytes: HEAP_BYTES }), memory };
}

/** An agent as the exchange drives it: a request out, the reply of a kind back. */
export interface ExchangeAgent {
  send(message: object): void;
  next<T extends { kind: string }>(kind: string): Promise<T>;
}

export interface ExchangeReport {
  /** Each agent's backend, as its bundle names it. */
  backends: string[];
  /** Where the module's static data ends, here and in each agent; and the heap's base. */
  staticEnds: number[];
  base: number;
  /** Per round: the blocks each agent got, how many blocks were live at once, ledger problems, stamps found wrong. */
  rounds: { alloc: string; free: string; got: number[]; live: number; problems: string[]; bad: number[] }[];
  /** The module's static data: its table sum here before, in each agent at the end, here at the end; bytes changed. */
  tableSums: number[];
  staticBytesChanged: number;
  /** After everything: check()'s error (null when it passed), live bytes, whether the heap grew the memory. */
  checkError: string | null;
  liveBytes: number;
  grew: boolean;
}

interface ModuleExports {
  staticEnd(): number;
  tableSum(): number;
}

/** The blocks in the lists, checked: how many, and any below the heap or overlapping another. */
function ledger(heap: Heap, lists: number[], count: number): { live: number; problems: string[] } {
  const u32 = heap.u32;
  const lowest = heap.space.base + heap.space.headerBytes;
  const all: [number, number][] = [];
  for (const list of lists) for (let k = 0; k < count; k++) all.push([u32[(list >>> 2) + 2 * k]!, u32[(list >>> 2) + 2 * k + 1]!]);
  all.sort((a, b) => a[0] - b[0]);
  const problems: string[] = [];
  for (let i = 0; i < all.length; i++) {
    const [p, size] = all[i]!;
    if (p < lowest) problems.push(`block ${p} lies below the heap's first usable byte ${lowest}`);
    if (i + 1 < all.length && p + size > all[i + 1]![0]) problems.push(`block ${p} (+${size}) overlaps block ${all[i + 1]![0]}`);
  }
  return { live: all.length, problems: problems.slice(0, 5) };
}

/** Sends each agent its request and waits for every reply of `kind`. */
function roundTrip<T extends { kind: string }>(agents: ExchangeAgent[], kind: string, message: (i: number) => object): Promise<T[]> {
  const replies = agents.map((a) => a.next<T>(kind));
  agents.forEach((a, i) => a.send(message(i)));
  return Promise.all(replies);
}

/**
 * Runs the exchange over `heap` (built in `memory`, whose first page the module's static data holds) with
 * `agents` just started; this thread instantiates the module too, to read its static data before and after.
 */
export async function runExchange(heap: Heap, memory: WebAssembly.Memory, module: WebAssembly.Module, agents: ExchangeAgent[], count = BLOCKS): Promise<ExchangeReport> {
  const ready = await Promise.all(agents.map((a) => a.next<{ kind: string; backend: string; staticEnd: number }>('ready')));
  const own = new WebAssembly.Instance(module, { env: { memory, malloc: () => 0, free: () => undefined } }).exports as unknown as ModuleExports;
  const staticEnd = own.staticEnd();
  const staticBytes = new Uint8Array(memory.buffer, 0, staticEnd).slice();
  const tableSums = [own.tableSum()];
  const rounds: ExchangeReport['rounds'] = [];
  for (const [alloc, free] of [['wasm', 'js'], ['js', 'wasm']]) {
    const listed = await roundTrip<{ kind: string; list: number; got: number }>(agents, 'listed', (i) => ({ kind: 'alloc', side: alloc, count, tag: i }));
    const { live, problems } = ledger(heap, listed.map((r) => r.list), count);
    // Agent i's blocks are checked and freed by agent i + 1.
    const freed = await roundTrip<{ kind: string; bad: number }>(agents, 'freed', (i) => {
      const from = (i + agents.length - 1) % agents.length;
      return { kind: 'free', side: free, list: listed[from]!.list, count, tag: from };
    });
    await roundTrip(agents, 'drained', () => ({ kind: 'drain' }));
    rounds.push({ alloc: alloc!, free: free!, got: listed.map((r) => r.got), live, problems, bad: freed.map((r) => r.bad) });
  }
  const stopped = await roundTrip<{ kind: string; tableSum: number }>(agents, 'stopped', () => ({ kind: 'stop' }));
  tableSums.push(...stopped.map((r) => r.tableSum), own.tableSum());
  heap.drain();
  let checkError: string | null = null;
  try {
    heap.check();
  } catch (err) {
    checkError = String(err);
  }
  const now = new Uint8Array(memory.buffer, 0, staticEnd);
  return {
    backends: ready.map((r) => r.backend),
    staticEnds: [staticEnd, ...ready.map((r) => r.staticEnd)],
    base: heap.space.base,
    rounds,
    tableSums,
    staticBytesChanged: staticBytes.reduce((n, b, i) => n + (b === now[i] ? 0 : 1), 0),
    checkError,
    liveBytes: heap.stats().liveBytes,
    grew: memory.buffer.byteLength > heap.space.base + heap.space.headerBytes,
  };
}
