/**
 * `pnpm bench:report`: turns a run's JSON into `docs/PERFORMANCE.md` and its SVG charts. Every figure in
 * the page comes from the JSON; nothing is typed in by hand. The JSON the page was made from is copied
 * next to the charts (`apps/bench/report/results.json`), so the page can be regenerated and checked.
 *
 *   node apps/bench/dist/report-md.js [--json apps/bench/results/latest.json] [--out docs/PERFORMANCE.md]
 *
 * Intervals are recomputed from the samples here (95% percentile bootstrap of the median, seeded), so
 * the page and the run's stdout agree.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { change, estimate, type Estimate, fmtChange } from './stats.js';
import type { WasmCallsJson } from './wasm-calls.js';
import { scopeRows, type ScopesJson, scopesReading, VARIANTS } from './workloads/scopes-figures.js';
import { snapshotsLines, type SnapshotsJson } from './workloads/snapshots.js';
import { viewsSection, type ViewsJson } from './workloads/views.js';
import { channelsSection } from './workloads/channels-section.js';
import type { ChannelsJson } from './workloads/channels-report.js';
import { type SplitProgram, splitSection } from './workloads/split-report.js';

const APP = fileURLToPath(new URL('..', import.meta.url));
const ROOT = resolve(APP, '..', '..');
const MiB = 1024 * 1024;

interface Args {
  json: string;
  out: string;
  charts: string;
}

function parse(argv: string[]): Args {
  const a: Args = {
    json: join(APP, 'results', 'latest.json'),
    out: join(ROOT, 'docs', 'PERFORMANCE.md'),
    charts: join(APP, 'report'),
  };
  for (let i = 0; i < argv.length; i++) {
    const [k, inline] = argv[i].split('=', 2) as [string, string | undefined];
    const v = () => inline ?? argv[++i];
    if (k === '--json') a.json = resolve(v());
    else if (k === '--out') a.out = resolve(v());
    else if (k === '--charts') a.charts = resolve(v());
    else {
      process.stderr.write(`bench:report: unknown option ${argv[i]}\nusage: node apps/bench/dist/report-md.js [--json FILE] [--out FILE] [--charts DIR]\n`);
      process.exit(2);
    }
  }
  return a;
}

// --- the JSON, as far as this page reads it ----------------------------------------------------------

interface Sample {
  value: number | null;
  seconds: number;
  ops: number;
  peakRssBytes: number;
  extra: Record<string, number | null>;
}
interface Cell {
  peer: string;
  samples: Sample[];
  error: string | null;
  skipped: string | null;
}
interface Program {
  name: string;
  program: string;
  group: string;
  agents: number;
  params: Record<string, number>;
  metric: 'rate' | 'ms' | 'bytes';
  unit: string;
  what: string;
  cells: Cell[];
}
interface PCResult {
  opsPerRound: number;
  samplesNsPerOp: number[];
  peakRssBytes?: number[];
  median: number | null;
  error: string | null;
}
interface Doc {
  date: string;
  elapsedSeconds: number;
  command: string;
  machine: { cpuModel: string; cpus: number; node: string; v8: string; platform: string; arch: string; totalMemoryBytes: number; loadavgAtEnd: number[] };
  config: { mode: string; rounds: number; warmup: number; seed: number; memWorkloads?: Record<string, number> };
  peers: { name: string; status: string; reason: string | null; selfCheck: string | null }[];
  workloads: { name: string; group: string; ops: number; live: number; results: Record<string, PCResult> }[];
  targets: { workload: string; rule: string; status: string; value: number | null; note: string }[];
  targets8?: { rule: string; workload: string; status: string; value: string; note: string }[];
  setup?: { seconds: number; cc: string | null; builds: Record<string, { ok: boolean; command?: string; reason?: string }> };
  peakRssMethod?: string;
  programs?: Program[];
  scopes?: ScopesJson;
  snapshots?: SnapshotsJson | null;
  views?: ViewsJson;
  channels?: ChannelsJson | null;
}

// --- formatting -------------------------------------------------------------------------------------

function fmtNum(x: number): string {
  if (!Number.isFinite(x)) return '-';
  if (x >= 1e9) return `${(x / 1e9).toFixed(2)} G`;
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)} M`;
  if (x >= 1e3) return `${(x / 1e3).toFixed(1)} k`;
  if (x >= 100) return x.toFixed(0);
  if (x >= 10) return x.toFixed(1);
  return x.toFixed(2);
}
function fmtBytes(x: number): string {
  if (!Number.isFinite(x)) return '-';
  const m = x / MiB;
  return `${Math.abs(m) < 10 ? m.toFixed(2) : m.toFixed(1)} MiB`;
}
function fmtMetric(metric: string, x: number): string {
  if (metric === 'rate') return `${fmtNum(x)}/s`;
  if (metric === 'ms') return `${x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : Math.round(x)} ms`;
  if (metric === 'ns') return `${fmtNum(x)} ns`;
  return fmtBytes(x);
}
/** A call's time: µs below a millisecond, else ms. */
function fmtCall(ns: number): string {
  return ns < 1e6 ? `${(ns / 1e3).toFixed(2)} µs` : `${(ns / 1e6).toFixed(2)} ms`;
}
const esc = (s: string) => s.replace(/\|/g, '\\|');
const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.map(esc).join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

// --- SVG: horizontal bars, one per peer, with the 95% interval as a whisker ------------------------

interface Bar {
  label: string;
  est: Estimate;
  highlight: boolean;
}

function chart(title: string, metric: string, unit: string, bars: Bar[], lowerIsBetter: boolean): string {
  const W = 720;
  const left = 150;
  const right = 130;
  const rowH = 22;
  const top = 34;
  const H = top + bars.length * rowH + 30;
  const vals = bars.flatMap((b) => [b.est.lo, b.est.hi, b.est.median]).filter((v) => v > 0 && Number.isFinite(v));
  const max = Math.max(...vals);
  const min = Math.min(...vals);
  const log = max / min > 50;
  const span = W - left - right;
  const x = (v: number): number => {
    if (!(v > 0) || !Number.isFinite(v)) return 0;
    if (!log) return (v / max) * span;
    const lo = Math.log10(min) - 0.3;
    return ((Math.log10(v) - lo) / (Math.log10(max) - lo)) * span;
  };
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  parts.push(`<text x="8" y="18" font-size="14" font-weight="bold">${xml(title)}</text>`);
  parts.push(
    `<text x="${W - 8}" y="18" text-anchor="end" fill="#555">${xml(`${unit}${log ? ', log scale' : ''}; ${lowerIsBetter ? 'shorter is better' : 'longer is better'}; whisker: 95% CI`)}</text>`,
  );
  bars.forEach((b, i) => {
    const y = top + i * rowH;
    const w = Math.max(1, x(b.est.median));
    parts.push(`<text x="${left - 6}" y="${y + 14}" text-anchor="end">${xml(b.label)}</text>`);
    parts.push(`<rect x="${left}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 7}" fill="${b.highlight ? '#d9822b' : '#5b8bd0'}"/>`);
    const x0 = left + x(b.est.lo);
    const x1 = left + x(b.est.hi);
    parts.push(`<line x1="${x0.toFixed(1)}" x2="${x1.toFixed(1)}" y1="${y + 10.5}" y2="${y + 10.5}" stroke="#222"/>`);
    parts.push(`<line x1="${x0.toFixed(1)}" x2="${x0.toFixed(1)}" y1="${y + 6}" y2="${y + 15}" stroke="#222"/>`);
    parts.push(`<line x1="${x1.toFixed(1)}" x2="${x1.toFixed(1)}" y1="${y + 6}" y2="${y + 15}" stroke="#222"/>`);
    parts.push(`<text x="${(Math.max(left + w, x1) + 6).toFixed(1)}" y="${y + 14}">${xml(fmtMetric(metric, b.est.median))}</text>`);
  });
  parts.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${top + bars.length * rowH}" stroke="#888"/>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

// --- the page -----------------------------------------------------------------------------------------

function main(): void {
  const args = parse(process.argv.slice(2));
  if (!existsSync(args.json)) {
    process.stderr.write(`bench:report: ${args.json} not found: run \`pnpm bench\` first\n`);
    process.exit(1);
  }
  const doc = JSON.parse(readFileSync(args.json, 'utf8')) as Doc;
  mkdirSync(args.charts, { recursive: true });
  for (const f of readdirSync(args.charts)) if (f.endsWith('.svg')) rmSync(join(args.charts, f));
  const keptJson = join(args.charts, 'results.json');
  if (resolve(args.json) !== resolve(keptJson)) copyFileSync(args.json, keptJson);
  const rel = (p: string) => relative(dirname(args.out), p).split('\\').join('/');
  const chartFile = (name: string, svg: string): string => {
    const file = join(args.charts, `${name.replace(/[^a-z0-9-]+/gi, '_')}.svg`);
    writeFileSync(file, svg);
    return rel(file);
  };
  const rerun = (only: string) => `node apps/bench/dist/main.js${doc.config.mode === 'full' ? ' --full' : ''} --only ${only}`;
  const m = doc.machine;
  const L: string[] = [];
  L.push('# Performance');
  L.push('');
  L.push(
    `Generated by \`pnpm bench:report\` from [\`apps/bench/report/results.json\`](${rel(keptJson)}), the JSON of one real run; ` +
      'do not edit the figures by hand: run the bench and regenerate this page. Intervals are 95% percentile-bootstrap intervals ' +
      'of the median (2,000 resamples); a comparison is the change of one median against another with its interval, ' +
      'e.g. `+4.2% [+2.9% .. +5.5%]`: an interval that spans 0 is within this run\'s noise.',
  );
  L.push('');
  L.push('## The run');
  L.push('');
  L.push(
    table(
      ['', ''],
      [
        ['machine', `${m.cpuModel}, ${m.cpus} CPUs, ${(m.totalMemoryBytes / 2 ** 30).toFixed(1)} GiB, ${m.platform} ${m.arch} (a shared, noisy machine: load average ${m.loadavgAtEnd.map((x) => x.toFixed(2)).join(' / ')} at the end)`],
        ['Node', `${m.node} (V8 ${m.v8})`],
        ['command', `\`${doc.command}\``],
        ['date', doc.date],
        ['mode', `${doc.config.mode}: pair/churn ${doc.config.warmup} warm-up + ${doc.config.rounds} measured rounds; seed ${doc.config.seed}; ${Math.round(doc.elapsedSeconds)} s in all`],
        ['peak RSS', doc.peakRssMethod ?? '-'],
        ...(doc.setup
          ? [
              ['set-up', `${doc.setup.seconds.toFixed(1)} s; cc: ${doc.setup.cc ?? 'none'}`],
              ...Object.entries(doc.setup.builds).map(([n, b]) => [n, b.ok ? `built: \`${b.command}\`` : `SKIPPED: ${b.reason}`]),
            ]
          : []),
      ],
    ),
  );
  L.push('');
  L.push('Peers: ' + doc.peers.map((p) => `\`${p.name}\` ${p.status}${p.reason ? ` (${p.reason})` : ''}`).join('; ') + '.');
  L.push('`paddock` is Paddock\'s arena backend (pool_arena), `paddock-classic` its classic pool (pool_classic), `paddock-global` its global pool (pool_global: lock-free, no agent-local state), `js` plain JavaScript, `glibc` and `mimalloc` the same workload in C (native references), `as-tlsf` AssemblyScript\'s TLSF and `wasi-dlmalloc` wasi-libc\'s dlmalloc, both compiled to wasm at set-up and called from JS, `floor` bare free lists over a typed array, `thi.ng` @thi.ng/malloc.');
  L.push('');

  L.push('## How to read this page');
  L.push('');
  L.push(
    [
      '- Every workload ran in interleaved rounds: in each round every peer runs once, the order rotating round by round (A B, B A, ...), each run on a fresh allocator instance; the first round(s) are warm-up and not counted.',
      '- The multi-agent programs run in real `worker_threads` that load the built `packages/allocator/dist`; the C references run the same steps with pthreads. Sizes are scaled to this 2-core machine (2 agents, 3 for producer-consumer); each table names its parameters. Where a JS agent waits it blocks on a doorbell word (`heap.wait` for Paddock); the C agents spin and yield.',
      '- Peak RSS is the run\'s resident high-water mark above the level at its start (the kernel\'s VmHWM, reset before each run). For the JS peers it includes the JS engine\'s own growth during the run. Before each run the bench collects garbage and waits (at most 100 ms) for resident memory to settle, so the previous instance\'s buffers are gone before the base is read.',
      '- A peer that cannot run a workload says why in its row (no plain-JS form, a quadratic free, a missing toolchain). `time-capped`: a peer too slow for the round\'s time budget ran a prefix of the same sequence; its comparisons are left out.',
      '- The quick run\'s idle programs wait 2 s per round; `--full` waits the 5 s of the suspend-and-drain figure.',
    ].join('\n'),
  );
  L.push('');

  // targets
  L.push('## Targets');
  L.push('');
  L.push(`Judged by the bench from this run's samples (command: \`${doc.command}\`).`);
  L.push('');
  const t8 = doc.targets8 ?? [];
  if (t8.length > 0) {
    L.push(table(['workload', 'target', 'status', 'measured', 'note'], t8.map((t) => [t.workload, t.rule, `**${t.status}**`, t.value, t.note])));
    L.push('');
  }
  if (doc.targets.length > 0) {
    L.push('The bench\'s standing targets for Paddock:');
    L.push('');
    L.push(
      table(
        ['workload', 'target', 'status', 'measured'],
        doc.targets.map((t) => [t.workload, t.rule, `**${t.status}**`, t.value === null ? t.note : t.rule.startsWith('pair') ? `${t.value.toFixed(1)} ns` : `${t.value.toPrecision(3)}x`]),
      ),
    );
    L.push('');
  }

  const st = doc.scopes?.targets ?? [];
  if (st.length > 0) {
    L.push('The `scopes` group\'s targets (the control lane reads ~0% for every variant; a scope allocation within 2x a bare bump):');
    L.push('');
    L.push(table(['workload', 'target', 'status', 'measured'], st.map((t) => [t.workload, t.rule, `**${t.status}**`, t.note])));
    L.push('');
  }

  // pair and churn
  const pc = doc.workloads.filter((w) => w.group !== 'sweep');
  if (pc.length > 0) {
    L.push('## Pair and churn (ns per op, every peer)');
    L.push('');
    L.push(`\`pair\`: malloc(32) + free, LIFO. \`churn-N\`: N live blocks of 16..4096 B, each step frees a random one and allocates a random size in its place. Command: \`${doc.command}\`; this table alone: \`${rerun('pair,churn')}\`.`);
    L.push('');
    const peers = doc.peers.map((p) => p.name).filter((p) => pc.some((w) => w.results[p]));
    const rows: string[][] = [];
    for (const w of pc) {
      const mine = w.results.paddock;
      for (const p of peers) {
        const r = w.results[p];
        if (!r) continue;
        if (r.error) {
          rows.push([w.name, p, 'FAILED', '', '', r.error, '']);
          continue;
        }
        const e = estimate(r.samplesNsPerOp);
        const capped = r.opsPerRound < w.ops;
        const vs = p === 'paddock' || !mine || mine.error || capped ? '-' : fmtChange(change(mine.samplesNsPerOp, r.samplesNsPerOp));
        const vsMi = w.results.mimalloc && !w.results.mimalloc.error && !capped ? `${(e!.median / (estimate(w.results.mimalloc.samplesNsPerOp)?.median ?? NaN)).toFixed(2)}x` : '-';
        rows.push([
          w.name,
          p,
          e ? fmtNum(e.median) : '-',
          e ? `[${fmtNum(e.lo)} .. ${fmtNum(e.hi)}]` : '-',
          vs,
          `${vsMi}${capped ? ` (time-capped: first ${r.opsPerRound} of ${w.ops} ops)` : ''}`,
          r.peakRssBytes && r.peakRssBytes.length > 0 ? fmtBytes(estimate(r.peakRssBytes)!.median) : '-',
        ]);
      }
      const bars: Bar[] = peers
        .filter((p) => w.results[p] && !w.results[p].error && w.results[p].samplesNsPerOp.length > 0)
        .map((p) => ({ label: p, est: estimate(w.results[p].samplesNsPerOp)!, highlight: p === 'paddock' }));
      if (bars.length > 0) L.push(`![${w.name}](${chartFile(`pc-${w.name}`, chart(`${w.name}: ns per op`, 'ns', 'ns/op', bars, true))})`);
    }
    L.push('');
    L.push(table(['workload', 'peer', 'median ns/op', '95% CI', 'paddock vs peer (- = the arena is faster)', 'peer / mimalloc', 'peak RSS (prefill + run)'], rows));
    L.push('');
  }

  // the three designs on the same calls
  if (doc.scopes) L.push(...scopesSection(doc.scopes, rerun('scopes')));

  if (doc.views) L.push(...viewsSection(doc.views, rerun('pair-view,view-strings')));
  // snapshots
  if (doc.snapshots) {
    L.push('## What a heap snapshot costs (`snapshots`)', '');
    L.push(`\`heap.snapshot()\` on pool_arena (see docs/design/allocator.md, "Snapshots"). Alone: \`${rerun('paddock,snapshots')}\`.`, '');
    for (const line of snapshotsLines(doc.snapshots).lines) L.push(`- ${line}`);
    L.push('');
  }

  // channels (and the notes kept beside the charts)
  const channelNotes = join(args.charts, 'channels-notes.md');
  if (doc.channels) L.push(...channelsSection(doc.channels, rerun('channels'), existsSync(channelNotes) ? readFileSync(channelNotes, 'utf8') : null));

  // calls from WebAssembly: their own run's JSON, kept beside the charts (the bench's run does not make it)
  const wasmCalls = join(args.charts, 'wasm-calls.json');
  if (existsSync(wasmCalls)) L.push(...wasmCallsSection(JSON.parse(readFileSync(wasmCalls, 'utf8')) as WasmCallsJson, rel(wasmCalls)));

  // programs
  const progs = doc.programs ?? [];
  L.push(...splitSection(progs as unknown as SplitProgram[], doc.command, (x) => `${fmtNum(x)}/s`));
  const groups: [string, string][] = [
    ['pony', "The Pony arena's own programs, re-created"],
    ['pathology', "The classic pool's pathologies"],
    ['standard', 'Standard allocator workloads (mimalloc-bench shapes, re-implemented for workers)'],
  ];
  for (const [g, title] of groups) {
    const list = progs.filter((p) => p.group === g);
    if (list.length === 0) continue;
    L.push(`## ${title}`);
    L.push('');
    for (const p of list) {
      L.push(`### ${p.name}`);
      L.push('');
      const agents = p.agents === 0 ? '1 agent (main thread)' : `${p.agents} agents (worker_threads; C: pthreads)`;
      L.push(`${p.what}. ${agents}; parameters: ${Object.entries(p.params).map(([k, v]) => `${k}=${v}`).join(', ')}.`);
      L.push('');
      L.push(`Command: \`${doc.command}\`; this table alone: \`${rerun(p.name)}\`.`);
      L.push('');
      const val = (c: Cell) => c.samples.map((s) => (s.value === null ? (p.params.window ?? Infinity) : s.value));
      const arena = p.cells.find((c) => c.peer === 'paddock' && !c.error && c.samples.length > 0);
      const lower = p.metric !== 'rate';
      const head = ['peer', `median (${p.unit})`, '95% CI', `paddock vs peer (${lower ? '- = the arena needs less' : '+ = the arena does more per second'})`, 'peak RSS'];
      if (p.program === 'idle') head.push('returned by the end', 'rounds not within the window');
      if (p.program === 'large-cross-free') head.push('distinct addresses', 'committed at the end');
      if (p.program === 'class-no-reuse') head.push('peak / bytes', 'ops/s');
      if (p.program === 'build-then-free') head.push('ns per malloc', 'ns per free');
      const rows: string[][] = [];
      const bars: Bar[] = [];
      for (const c of p.cells) {
        if (c.error) {
          rows.push([c.peer, 'FAILED', '', c.error, '']);
          continue;
        }
        if (c.samples.length === 0) {
          rows.push([c.peer, 'skipped', '', c.skipped ?? '', '']);
          continue;
        }
        const e = estimate(val(c))!;
        const nw = c.samples.filter((s) => s.value === null).length;
        const medText = p.program === 'idle' && nw > e.n / 2 ? `> ${p.params.window} ms` : fmtMetric(p.metric, e.median);
        const vs = c.peer === 'paddock' || !arena || p.program === 'idle' ? '-' : fmtChange(change(val(arena), val(c)));
        const peak = estimate(c.samples.map((s) => s.peakRssBytes))!;
        const row = [c.peer + (c.skipped ? ' (dropped after one run)' : ''), medText, `[${fmtMetric(p.metric, e.lo)} .. ${fmtMetric(p.metric, e.hi)}]`, vs, fmtBytes(peak.median)];
        const xm = (k: string): number | null => {
          const xs = c.samples.map((s) => s.extra[k]).filter((v): v is number => typeof v === 'number');
          return xs.length ? estimate(xs)!.median : null;
        };
        if (p.program === 'idle') {
          const f = xm('returnedFraction');
          row.push(f === null ? '-' : `${Math.round(f * 100)}%`, `${nw}/${e.n}`);
        }
        if (p.program === 'large-cross-free') {
          const d = xm('distinctAddresses');
          const cb = xm('committedBytes');
          row.push(d === null ? '-' : String(d), cb === null ? '-' : fmtBytes(cb));
        }
        if (p.program === 'build-then-free') row.push(...['mallocNs', 'freeNs'].map((k) => fmtNum(xm(k) ?? NaN)));
        if (p.program === 'class-no-reuse') {
          const o = xm('opsPerSecond');
          row.push(`${(e.median / p.params.bytes).toFixed(2)}x`, o === null ? '-' : fmtNum(o));
        }
        rows.push(row);
        bars.push({ label: c.peer, est: e, highlight: c.peer === 'paddock' });
      }
      if (bars.length > 0) L.push(`![${p.name}](${chartFile(`prog-${p.name}`, chart(p.name, p.metric, p.unit, bars, lower))})`);
      L.push('');
      L.push(table(head, rows));
      L.push('');
    }
  }

  // the size sweep, medians only
  const sweep = doc.workloads.filter((w) => w.group === 'sweep');
  if (sweep.length > 0) {
    L.push('## Size sweep');
    L.push('');
    L.push(`Fixed-size churn from 32 B to 16 MiB, ns per op. Command: \`${doc.command}\`; alone: \`${rerun('sweep')}\`. Hold-then-free, cross-32 and the realloc chains are in the JSON and on the run's stdout.`);
    L.push('');
    const peers = [...new Set(sweep.flatMap((w) => Object.keys(w.results)))];
    L.push(
      table(
        ['workload', ...peers.map((p) => `${p} median [95% CI]`)],
        sweep.map((w) => [
          w.name,
          ...peers.map((p) => {
            const r = w.results[p];
            if (!r) return '-';
            if (r.error) return 'FAILED';
            const e = estimate(r.samplesNsPerOp);
            return e ? `${fmtNum(e.median)} [${fmtNum(e.lo)} .. ${fmtNum(e.hi)}]${r.opsPerRound < w.ops ? ' (capped)' : ''}` : '-';
          }),
        ]),
      ),
    );
    L.push('');
  }

  mkdirSync(dirname(args.out), { recursive: true });
  writeFileSync(args.out, keepRuntimesSection(args.out, `${L.join('\n')}\n`));
  process.stdout.write(`bench:report: wrote ${relative(process.cwd(), args.out)} and ${readdirSync(args.charts).filter((f) => f.endsWith('.svg')).length} charts in ${relative(process.cwd(), args.charts)} from ${relative(process.cwd(), args.json)}\n`);
}

/** The `scopes` group: what it runs, its table, the bump target's figures and the reading derived from them. */
function scopesSection(s: ScopesJson, alone: string): string[] {
  const L: string[] = [];
  L.push('## The three designs on the same calls (`scopes`)');
  L.push('');
  L.push(
    `Each lane's call priced three ways, as change against the arena with its 95% interval (${s.rounds.warmup} warm-up + ${s.rounds.rounds} measured rounds, ` +
      `the variants interleaved, the order rotating; each variant on a fresh heap of its own every round). Command: \`${s.command}\`; this group alone: \`${alone}\`.`,
  );
  L.push('');
  for (const v of VARIANTS) L.push(`- \`${v.name}\`: ${v.what}.`);
  for (const m of s.missing) L.push(`- \`${m.variant}\` did not run: ${m.reason}.`);
  L.push('');
  for (const lane of s.lanes) L.push(`- \`${lane.name}\`: ${lane.what}.`);
  L.push('');
  L.push(table(['lane', 'variant', 'median per call', '95% CI', 'change against the arena'], scopeRows(s.lanes, fmtCall)));
  L.push('');
  if (s.bump && s.bump.error === null) {
    const sc = estimate(s.bump.samplesScopeNs);
    const b = estimate(s.bump.samplesBumpNs);
    if (sc && b) {
      L.push(
        `\`scopes-bump\`: \`scope.malloc(n)\` (n drawn from 8..128 B) ${fmtMetric('ns', sc.median)} [${fmtMetric('ns', sc.lo)} .. ${fmtMetric('ns', sc.hi)}] per allocation, ` +
          `a bare bump over a typed array (the same 16-byte rounding) ${fmtMetric('ns', b.median)} [${fmtMetric('ns', b.lo)} .. ${fmtMetric('ns', b.hi)}]: ${(sc.median / b.median).toFixed(2)}x.`,
      );
      L.push('');
    }
  } else if (s.bump) {
    L.push(`\`scopes-bump\`: FAILED: ${s.bump.error}`);
    L.push('');
  }
  L.push('The reading, derived from the figures above (a design wins a lane only where its interval against every other variant lies below 0):');
  L.push('');
  for (const line of scopesReading(s)) L.push(`- ${line}`);
  L.push('');
  return L;
}

/** The wasm-calls measurement: the lanes' table, and what the figures say about a wasm build of the fast path. */
function wasmCallsSection(w: WasmCallsJson, file: string): string[] {
  const L: string[] = [];
  const m = w.machine;
  L.push('## Calls from WebAssembly');
  L.push('');
  L.push(
    `A wasm module allocating in a Paddock heap imports \`malloc\`/\`free\` from JavaScript, so each call crosses the boundary. ` +
      `malloc(${w.config.size}) + free on one agent, one word of each block written and read, ns per pair: median and 95% interval of ` +
      `${w.config.rounds} rounds of ${w.config.pairs.toLocaleString('en-US')} pairs after ${w.config.warmup} warm-up, the lanes interleaved. ` +
      `From [\`${file.split('/').pop()}\`](${file}), its own run: \`${w.command}\` (${w.date}; ${m.cpuModel}, ${m.cpus} CPUs, Node ${m.node}, ` +
      `load average ${m.loadavgAtEnd.map((x) => x.toFixed(2)).join(' / ')} at the end). The module: \`${w.build}\`.`,
  );
  L.push('');
  const med = new Map<string, Estimate>();
  const rows: string[][] = [];
  for (const lane of w.lanes) {
    const e = estimate(lane.samplesNs);
    if (e) med.set(lane.name, e);
    rows.push([`\`${lane.name}\``, e ? `${e.median.toFixed(1)} ns` : '-', e ? `[${e.lo.toFixed(1)} .. ${e.hi.toFixed(1)}]` : '-', lane.what]);
  }
  L.push(table(['lane', 'median per pair', '95% CI', 'what it runs'], rows));
  L.push('');
  const fromWasm = med.get('wasm: Paddock pool_arena')?.median;
  const fromJs = med.get('JS: Paddock pool_arena')?.median;
  const crossing = med.get('wasm: empty import x2')?.median;
  const own = med.get('wasm: own TLSF')?.median;
  const jsToWasm = med.get('JS: wasm TLSF')?.median;
  if (fromWasm !== undefined && fromJs !== undefined && crossing !== undefined && own !== undefined && jsToWasm !== undefined) {
    const ns = (x: number) => `${x.toFixed(1)} ns`;
    L.push(
      `Reading: from wasm a pair through the arena costs ${ns(fromWasm)}, from JS ${ns(fromJs)}; the difference, ${ns(fromWasm - fromJs)}, is about the two ` +
        `crossings an empty import costs (${ns(crossing)}). The module's own TLSF, with no crossing, costs ${ns(own)}, ` +
        `${ns(Math.abs(fromWasm - own))} ${own <= fromWasm ? 'less' : 'more'} than Paddock from wasm. A wasm build of Paddock's fast path would save a wasm caller at most the crossings ` +
        `(${Math.round((crossing / fromWasm) * 100)}% of its pair), and only if the same work ran no slower in wasm than in JS: ` +
        (own >= fromJs
          ? `here a mature wasm allocator's pair inside the module (${ns(own)}) is no faster than the arena's pair in JS (${ns(fromJs)}). `
          : `here a mature wasm allocator's pair inside the module (${ns(own)}) is ${ns(fromJs - own)} faster than the arena's pair in JS (${ns(fromJs)}). `) +
        `JS callers would pay the crossing the other way (the module's TLSF called from JS: ${ns(jsToWasm)}, ${ns(jsToWasm - own)} above the same calls from inside wasm). ` +
        (own >= 0.8 * fromJs && crossing < fromJs
          ? 'So it would not pay: the work in wasm is no cheaper than in JS, the crossings cost less than the work, and a second build of the fast path would only move the crossings from wasm callers to JS callers.'
          : `So it could pay for callers that live in wasm (up to ${ns(fromWasm - own)} a pair), at ${ns(jsToWasm - own)} a pair more for callers in JS.`),
    );
    L.push('');
  }
  return L;
}

main();

/**
 * The page's "Under each runtime" section is written from a run of `apps/bench/scripts/runtimes.mjs` (one process
 * per runtime, outside this JSON): carried over from the page being replaced, before "Calls from WebAssembly".
 */
function keepRuntimesSection(out: string, page: string): string {
  const old = existsSync(out) ? readFileSync(out, 'utf8') : '';
  const start = old.indexOf('\n## Under each runtime\n');
  if (start < 0 || page.includes('\n## Under each runtime\n')) return page;
  const end = old.indexOf('\n## ', start + 1);
  const section = old.slice(start + 1, end >= 0 ? end + 1 : old.length);
  const at = page.indexOf('\n## Calls from WebAssembly');
  return at >= 0 ? `${page.slice(0, at + 1)}${section}${page.slice(at + 1)}` : `${page.trimEnd()}\n\n${section}`;
}
