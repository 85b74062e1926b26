/**
 * The `capacity` workload: how much of a heap each Paddock backend can hand out, on fresh heaps of 1 GiB and
 * 4 GiB (the largest there is). Three figures, per backend and heap size:
 *
 * - fill: for each of CAPACITY_SIZES, live blocks of that one size until the first refusal; the share is
 *   blocks x size / maxBytes (the requested bytes, so a size class's rounding and every header count as lost).
 * - malloc max: the largest single block a fresh heap serves by malloc, a binary search over sizes in 4 KiB
 *   pages, a fresh heap each try (it assumes a size below one served is served too).
 * - realloc max: one block grown by realloc from 64 KiB, x1.5 a step, nothing else live: the last size served.
 *
 * Each backend runs in a child process of its own (capacity-child.ts) that loads that backend's build
 * (`packages/allocator/dist/pool-*.js`), one after the other, so at most one heap's touched memory is held
 * at a time. Every fill is a plain fill to the first refusal, the small sizes of the 4 GiB heap too: 32 B
 * blocks are 134 million mallocs there, every page of the heap touched (each block gets a word written); the
 * whole run takes between one and two minutes on two cores. Any end other than HeapError OUT_OF_MEMORY
 * (another error, a 0 pointer) fails the backend.
 *
 * The arena's targets, judged here (`--strict` exits 1 on NOT MET): at least 85% of maxBytes for every
 * size, one block of 85% by malloc, one of 60% by realloc. The table goes to stdout and, as markdown, to
 * `results/capacity.md` beside the JSON; `--capacity-doc` also writes it to docs/CAPACITY.md.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { elapsed, type RunContext } from '../context.js';
import { errorText } from '../format.js';
import { paddockDistUrl, type PaddockBackend } from '../peers/paddock-heap.js';
import type { CapacityFigure } from './capacity-child.js';
import type { Failure, WorkloadDescriptor, WorkloadReport } from './workload.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

export const CAPACITY_HEAPS = [1 * GiB, 4 * GiB];
export const CAPACITY_SIZES = [32, 4 * KiB, 64 * KiB, 256 * KiB, 512 * KiB, MiB, 1.5 * MiB, 2 * MiB, 3 * MiB, 4 * MiB, 6 * MiB, 8 * MiB, 12 * MiB, 16 * MiB];
export const REALLOC_START = 64 * KiB;
export const REALLOC_FACTOR = 1.5;
/** The arena's targets: the share of maxBytes every size fills, one block by malloc, one block by realloc. */
export const ARENA_FILL_TARGET = 0.85;
export const ARENA_MALLOC_TARGET = 0.85;
export const ARENA_REALLOC_TARGET = 0.6;

const BACKENDS: readonly { backend: PaddockBackend; peer: string }[] = [
  { backend: 'pool_arena', peer: 'paddock' },
  { backend: 'pool_classic', peer: 'paddock-classic' },
  { backend: 'pool_global', peer: 'paddock-global' },
];

export interface CapacityRow {
  readonly backend: PaddockBackend;
  readonly maxBytes: number;
  /** Per size: the share of maxBytes held as live blocks (null: not measured). */
  readonly fill: Record<string, number | null>;
  readonly blocks: Record<string, number | null>;
  readonly mallocMax: number | null;
  readonly reallocMax: number | null;
}

export interface CapacityJson {
  readonly heaps: readonly number[];
  readonly sizes: readonly number[];
  readonly rows: CapacityRow[];
  /** Every figure as the children reported it (with its time and calls). */
  readonly figures: Record<string, CapacityFigure[]>;
  /** Per backend: what went wrong (a child that failed, a figure that ended with another error than OUT_OF_MEMORY). */
  readonly errors: Record<string, string[]>;
  readonly seconds: number;
  readonly markdown: string;
  readonly markdownFile: string;
}

/** Runs one backend's child; resolves with its figures, and its error when it did not end cleanly. */
function runChild(backend: PaddockBackend, onLine: (line: string) => void): Promise<{ figures: CapacityFigure[]; error: string | null }> {
  const child = fileURLToPath(new URL('./capacity-child.js', import.meta.url));
  const args = [
    '--expose-gc',
    child,
    paddockDistUrl(backend).href,
    CAPACITY_HEAPS.join(','),
    CAPACITY_SIZES.join(','),
    String(REALLOC_START),
    String(REALLOC_FACTOR),
  ];
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const figures: CapacityFigure[] = [];
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (line.startsWith('{')) figures.push(JSON.parse(line) as CapacityFigure);
      }
    });
    proc.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const lines = err.split('\n');
      onLine(lines[lines.length - 2] ?? '');
    });
    proc.on('error', (e) => resolve({ figures, error: errorText(e) }));
    proc.on('close', (code) => resolve({ figures, error: code === 0 ? null : `the child exited with ${code}: ${err.slice(-1500)}` }));
  });
}

async function runCapacity(ctx: RunContext, picked: (name: string) => boolean): Promise<CapacityJson | null> {
  if (!picked('capacity')) return null;
  const started = Date.now();
  const figures: Record<string, CapacityFigure[]> = {};
  const errors: Record<string, string[]> = {};
  for (const { backend } of BACKENDS) {
    const run = await runChild(backend, (line) => ctx.progress.show(`capacity ${backend}: ${line} (${elapsed(ctx)})`, `capacity ${backend} ${line}`));
    figures[backend] = run.figures;
    errors[backend] = [...(run.error === null ? [] : [run.error]), ...run.figures.filter((f) => f.error !== null).map((f) => `${describeFigure(f)}: ${f.error}`)];
  }
  const rows: CapacityRow[] = [];
  for (const { backend } of BACKENDS) {
    for (const maxBytes of CAPACITY_HEAPS) {
      const mine = figures[backend]!.filter((f) => f.maxBytes === maxBytes);
      const fill: Record<string, number | null> = {};
      const blocks: Record<string, number | null> = {};
      for (const size of CAPACITY_SIZES) {
        const f = mine.find((x) => x.kind === 'fill' && x.size === size);
        fill[size] = f === undefined || f.error !== null ? null : (f.blocks! * size) / maxBytes;
        blocks[size] = f?.blocks ?? null;
      }
      const largest = (kind: CapacityFigure['kind']) => {
        const f = mine.find((x) => x.kind === kind);
        return f === undefined || f.error !== null ? null : f.largest!;
      };
      rows.push({ backend, maxBytes, fill, blocks, mallocMax: largest('malloc-max'), reallocMax: largest('realloc-max') });
    }
  }
  const seconds = (Date.now() - started) / 1000;
  const markdown = capacityMarkdown(rows, errors, ctx, seconds);
  const markdownFile = fileURLToPath(new URL('../results/capacity.md', import.meta.url));
  mkdirSync(dirname(markdownFile), { recursive: true });
  writeFileSync(markdownFile, markdown);
  if (ctx.opts.capacityDoc) writeFileSync(fileURLToPath(new URL('../../../docs/CAPACITY.md', import.meta.url)), markdown);
  return { heaps: CAPACITY_HEAPS, sizes: CAPACITY_SIZES, rows, figures, errors, seconds, markdown, markdownFile };
}

function describeFigure(f: CapacityFigure): string {
  return f.kind === 'fill' ? `fill of ${sizeName(f.size!)} on ${sizeName(f.maxBytes)}` : `${f.kind} on ${sizeName(f.maxBytes)}`;
}

/** 32 B, 4 KiB, 1.5 MiB, 4 GiB. */
export function sizeName(bytes: number): string {
  if (bytes >= GiB) return `${bytes / GiB} GiB`;
  if (bytes >= MiB) return `${bytes / MiB} MiB`;
  if (bytes >= KiB) return `${bytes / KiB} KiB`;
  return `${bytes} B`;
}

/** A share as a percentage with one decimal, rounded down (84.96% shows as 84.9%, never as a met 85.0%). */
const pct = (x: number | null) => (x === null ? 'failed' : `${(Math.floor(x * 1000) / 10).toFixed(1)}%`);

/** The table: a row per backend and heap size, a column per size, then malloc max and realloc max. */
export function capacityTable(rows: readonly CapacityRow[]): string[] {
  const head = ['backend', 'heap', ...CAPACITY_SIZES.map(sizeName), 'malloc max', 'realloc max'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const r of rows) {
    const cells = [
      r.backend,
      sizeName(r.maxBytes),
      ...CAPACITY_SIZES.map((s) => pct(r.fill[s] ?? null)),
      pct(r.mallocMax === null ? null : r.mallocMax / r.maxBytes),
      pct(r.reallocMax === null ? null : r.reallocMax / r.maxBytes),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines;
}

/** The arena's rows against its targets: one line per heap size, and how many figures miss. */
export function arenaTargetLines(rows: readonly CapacityRow[]): { lines: string[]; notMet: number } {
  const lines: string[] = [];
  let notMet = 0;
  for (const r of rows.filter((x) => x.backend === 'pool_arena')) {
    const below = CAPACITY_SIZES.filter((s) => (r.fill[s] ?? 0) < ARENA_FILL_TARGET);
    const mallocMet = r.mallocMax !== null && r.mallocMax / r.maxBytes >= ARENA_MALLOC_TARGET;
    const reallocMet = r.reallocMax !== null && r.reallocMax / r.maxBytes >= ARENA_REALLOC_TARGET;
    notMet += below.length + (mallocMet ? 0 : 1) + (reallocMet ? 0 : 1);
    lines.push(
      `pool_arena, ${sizeName(r.maxBytes)}: fill >= ${ARENA_FILL_TARGET * 100}% for every size: ` +
        (below.length === 0 ? 'met' : `NOT MET (${below.map(sizeName).join(', ')})`) +
        `; one block by malloc >= ${ARENA_MALLOC_TARGET * 100}%: ${mallocMet ? 'met' : 'NOT MET'}` +
        `; by realloc >= ${ARENA_REALLOC_TARGET * 100}%: ${reallocMet ? 'met' : 'NOT MET'}`,
    );
  }
  return { lines, notMet };
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** The markdown document (results/capacity.md, and docs/CAPACITY.md with --capacity-doc). */
function capacityMarkdown(rows: readonly CapacityRow[], errors: Record<string, string[]>, ctx: RunContext, seconds: number): string {
  const commit = gitCommit();
  const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown cpu';
  const targets = arenaTargetLines(rows);
  const failed = Object.entries(errors).flatMap(([b, list]) => list.map((e) => `- ${b}: ${e}`));
  return `${[
    '# Capacity: how much of a heap each backend hands out',
    '',
    'Generated by the bench, from the repository root after `pnpm build`:',
    '',
    '```',
    'node apps/bench/dist/main.js --only capacity --capacity-doc',
    '```',
    '',
    `This run: ${new Date(ctx.started).toISOString().slice(0, 10)}${commit ? `, commit ${commit}` : ''}, ${cpu}, node ${process.version}, ` +
      `${seconds.toFixed(0)} s. The figures depend on the allocator's geometry, not on the machine: rerun the command after a change to it.`,
    '',
    'Each backend runs in a child process of its own, with its own build (`packages/allocator/dist/pool-*.js`), on',
    `fresh heaps of ${CAPACITY_HEAPS.map(sizeName).join(' and ')} (growable backing):`,
    '',
    '- a size column: live blocks of that one size, malloc after malloc until the first refusal, as a share of',
    '  maxBytes: blocks x requested size / maxBytes (what a class rounds up or a header takes counts as lost).',
    '  Every fill is a plain fill to the first `OUT_OF_MEMORY`, the small sizes of the 4 GiB heap too (134 million',
    '  mallocs of 32 B, every page of the heap touched).',
    '- malloc max: the largest single block a fresh heap serves, found by a binary search over sizes in 4 KiB',
    '  pages, a fresh heap each try.',
    `- realloc max: one block grown by realloc from ${sizeName(REALLOC_START)}, x${REALLOC_FACTOR} a step, nothing else live: the last`,
    '  size that was served.',
    '',
    ...capacityTable(rows),
    '',
    `What the arena is expected to meet: at least ${ARENA_FILL_TARGET * 100}% of maxBytes for every size, one block of`,
    `${ARENA_MALLOC_TARGET * 100}% by malloc, one of ${ARENA_REALLOC_TARGET * 100}% by realloc. In this run:`,
    '',
    ...targets.lines.map((l) => `- ${l}`),
    ...(failed.length === 0 ? [] : ['', 'Failures (a figure that ended with another error than OUT_OF_MEMORY, or a 0 pointer):', '', ...failed]),
  ].join('\n')}\n`;
}

function capacityReport(r: CapacityJson | null): WorkloadReport {
  if (r === null) return { lines: [], json: {} };
  const targets = arenaTargetLines(r.rows);
  const failed = Object.entries(r.errors).flatMap(([b, list]) => list.map((e) => `  FAILED ${b}: ${e}`));
  const { markdown: _markdown, ...json } = r;
  return {
    lines: [
      '',
      `capacity: the share of maxBytes each size holds as live blocks, the largest block by malloc and by realloc (${r.seconds.toFixed(0)} s)`,
      ...capacityTable(r.rows).map((l) => `  ${l}`),
      ...targets.lines.map((l) => `  ${l}`),
      ...failed,
      `  markdown: ${relative(process.cwd(), r.markdownFile) || r.markdownFile}`,
    ],
    json: { capacity: json },
    notMet: targets.notMet,
  };
}

export const capacity: WorkloadDescriptor<CapacityJson | null> = {
  name: 'capacity',
  members: [{ name: 'capacity', groups: [] }],
  run: runCapacity,
  failures(r): readonly Failure[] {
    if (r === null) return [];
    return BACKENDS.filter((b) => (r.errors[b.backend]?.length ?? 0) > 0).map((b) => ({ peer: b.peer, reason: `capacity: ${r.errors[b.backend]![0]}` }));
  },
  report: (r) => capacityReport(r),
};
