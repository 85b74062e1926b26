/**
 * Each program's gap to native split in two: the JavaScript program and the allocator. The floor
 * (`peers/floor-heap.ts` for the multi-agent programs, the in-process floor for the single-agent ones) runs every
 * program with an allocator that costs nearly nothing: its rate is the JavaScript program's own, and what
 * Paddock's arena loses against it is the allocator's (its share of the time per op: 1 - paddock / floor). Where
 * the floor itself stays below native mimalloc, that much of the gap is the JavaScript program.
 *
 * A second reading comes from one profiled run of the arena (`cpu-split.ts`): the share of its agents' busy samples
 * spent in the allocator's module, the garbage collector's share, and waiting's share of all. It measures something
 * else: V8 puts the samples of an inlined function on its caller (the arena's fast paths are made to be inlined, so
 * they count as the program's), and the page faults of memory the arena gave back and takes again count as the
 * allocator's (the floor never gives any back). The same rows serve stdout and docs/PERFORMANCE.md.
 */
import { allocatorShare, type CpuSplit } from './cpu-split.js';

/** What the split reads of a program (a `ProgramResult`, or a program of the JSON). */
export interface SplitProgram {
  readonly name: string;
  readonly metric: string;
  readonly agents: number;
  readonly cells: readonly {
    readonly peer: string;
    readonly error: string | null;
    readonly samples: readonly { readonly value: number | null }[];
    readonly profiled?: { readonly value: number; readonly cpu: CpuSplit } | null;
  }[];
}

/** One program's split: the arena (`paddock`) against the floor and native mimalloc. */
export interface SplitRow {
  readonly program: string;
  readonly agents: number;
  /** Medians, ops/s: the arena, the floor and native mimalloc (null where one did not run). */
  readonly rate: number;
  readonly floor: number | null;
  readonly mimalloc: number | null;
  /** The allocator's share of the arena's time per op against the floor: 1 - rate / floor. */
  readonly allocator: number | null;
  /** From the profiled run: the allocator's share of the busy samples, GC's of busy, waiting's of all. */
  readonly sampled: { readonly allocator: number; readonly gc: number; readonly waiting: number } | null;
}

function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function medianOf(cell: SplitProgram['cells'][number] | undefined): number | null {
  if (cell === undefined || cell.error !== null) return null;
  return median(cell.samples.map((s) => s.value).filter((v): v is number => v !== null));
}

/** The rows of every rate program the arena ran, in the programs' order. */
export function splitRows(programs: readonly SplitProgram[]): SplitRow[] {
  const rows: SplitRow[] = [];
  for (const p of programs) {
    if (p.metric !== 'rate') continue;
    const arena = p.cells.find((c) => c.peer === 'paddock');
    const rate = medianOf(arena);
    if (rate === null || rate === 0) continue;
    const floor = medianOf(p.cells.find((c) => c.peer === 'floor'));
    const cpu = arena!.profiled?.cpu;
    const share = cpu === undefined ? null : allocatorShare(cpu);
    let sampled: SplitRow['sampled'] = null;
    if (cpu !== undefined && share !== null) {
      const busy = cpu.allocatorMs + cpu.programMs + cpu.gcMs;
      sampled = { allocator: share, gc: cpu.gcMs / busy, waiting: cpu.waitingMs / (busy + cpu.waitingMs) };
    }
    rows.push({
      program: p.name,
      agents: p.agents,
      rate,
      floor,
      mimalloc: medianOf(p.cells.find((c) => c.peer === 'mimalloc')),
      // A floor slower than the arena (its shared lists and the cache lines its agents share cost more than the
      // arena's exchange where blocks change hands) says nothing of the arena's share.
      allocator: floor === null || floor < rate ? null : 1 - rate / floor,
      sampled,
    });
  }
  return rows;
}

const pct = (x: number): string => `${(x * 100).toFixed(0)}%`;

/** `a` against `b` as a change: +12% (a does more per second), -40%. */
export function vsText(a: number, b: number | null): string {
  if (b === null || b === 0) return '-';
  const d = (a / b - 1) * 100;
  return `${d >= 0 ? '+' : ''}${d.toFixed(0)}%`;
}

/** Which part of the gap to native mimalloc each side holds, in words. */
export function gapText(r: SplitRow): string {
  if (r.mimalloc === null) return 'no native peer';
  if (r.rate >= r.mimalloc) return 'none: at or above native';
  if (r.floor === null) return 'no floor for this program';
  if (r.floor < r.rate) return `no split: the floor is slower here (${vsText(r.floor, r.rate)}), read the samples`;
  if (r.floor >= r.mimalloc) return 'the allocator: on the floor the program passes native';
  return `the JavaScript program to ${vsText(r.floor, r.mimalloc)}, the allocator from there`;
}

/** Cells of one row, in the order of {@link SPLIT_HEAD}. */
export function splitCells(r: SplitRow, fmtRate: (x: number) => string): string[] {
  const sm = r.sampled;
  return [
    r.program,
    r.agents === 0 ? '1 (main)' : String(r.agents),
    fmtRate(r.rate),
    r.floor === null ? '-' : fmtRate(r.floor),
    r.mimalloc === null ? '-' : fmtRate(r.mimalloc),
    vsText(r.rate, r.mimalloc),
    r.floor === null ? '-' : vsText(r.floor, r.mimalloc),
    r.allocator === null ? '-' : pct(r.allocator),
    sm === null ? '-' : pct(sm.allocator),
    sm === null ? '-' : pct(sm.gc),
    sm === null ? '-' : pct(sm.waiting),
    gapText(r),
  ];
}

export const SPLIT_HEAD = [
  'program',
  'agents',
  'paddock',
  'floor',
  'native mimalloc',
  'paddock vs native',
  'floor vs native (the JS program)',
  'allocator (1 - paddock/floor)',
  'allocator (samples)',
  'GC (of busy)',
  'waiting (of all)',
  'the gap to native',
];

/** docs/PERFORMANCE.md's section: every row of {@link splitRows}, with how the split is made. */
export function splitSection(progs: readonly SplitProgram[], command: string, fmtRate: (x: number) => string): string[] {
  const rows = splitRows(progs);
  if (rows.length === 0) return [];
  return [
    '## Where each program\'s time goes',
    '',
    `Each program's gap to native mimalloc, split between the JavaScript program and the allocator. The floor runs every program with an allocator that costs nearly nothing (the multi-agent programs: per-agent power-of-two free lists over 64 KiB chunks, a free goes on the freeing agent's list, batches of 64 go back through a shared list per class; no header, no check, no return of memory): its rate is the JavaScript program's own, so \`1 - paddock / floor\` is the allocator's share of Paddock's time per op, and the floor against native is the JavaScript program's part of the gap. A second reading: after its measured rounds each program runs once more on the arena with V8's sampling profiler on in every agent (\`node:inspector\`, a sample every 250 µs); a sample with a function of the allocator's module on its stack is the allocator's, \`(garbage collector)\` is GC, the thread idling or blocking or watching a word (the heap's \`wait\`, the harness's barrier and doorbell) is waiting. It is not the floor's measure: V8 puts an inlined function's samples on its caller (the arena's \`malloc\` and \`free\` are made to be inlined, so their fast paths count as the program's), and the page faults and \`madvise\` calls of memory the arena gave back and takes again count as the allocator's (the floor never gives memory back); where the floor runs at least as fast as the arena, its figure is the one to read. Where blocks change hands between agents the floor can be slower than the arena (its shared lists, and cache lines that its agents write in turn, cost more there than the arena's exchange): that row has no split from the floor, and the samples are the reading. Single runs on this shared machine vary by up to a third from run to run. Command: \`${command}\`.`,
    '',
    `| ${SPLIT_HEAD.join(' | ')} |`,
    `|${SPLIT_HEAD.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${splitCells(r, fmtRate).join(' | ')} |`),
    '',
  ];
}
