// Where Paddock's churn step spends its time, by source line of the allocator bundle:
//   node apps/bench/scripts/churn-lines.mjs [--live N] [--ops N] [path to a built allocator bundle]
// Runs the bench's churn shape (free a random live block, malloc a random size in 16..4096) on one heap
// at N live blocks (default 65536, prefilled and touched), prints the median ns per step of 8 rounds, then
// samples the same loop with V8's profiler and prints the bundle lines that took the most samples (the
// allocator is inlined into the loop, so its samples carry the allocator's own line numbers). A line that
// waits on a load that misses the cache collects the samples of that wait. The floor's figure for the same
// shape comes from the bench: `node apps/bench/dist/main.js --only floor,paddock,churn`.
import { Session } from 'node:inspector/promises';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mulberry32Unit } from '../../../tools/test-utils/prng.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = Number(args[i + 1]);
  args.splice(i, 2);
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer`);
  return v;
};
const live = opt('--live', 65536);
const ops = opt('--ops', 1 << 20);
const file = args[0] ?? new URL('../../../packages/allocator/dist/pool-arena.js', import.meta.url).href;
const url = file.startsWith('file:') ? file : new URL(file, `file://${process.cwd()}/`).href;
const { createHeap } = await import(url);

const rand = mulberry32Unit(0x2545f491);
const drawSize = () => 16 + Math.floor(rand() * 4081);

const heap = createHeap({ maxBytes: 1 << 30 });
const slot = new Int32Array(live);
for (let i = 0; i < live; i++) {
  const s = drawSize();
  const p = heap.malloc(s);
  slot[i] = p;
  const u8 = heap.u8;
  for (let q = p; q < p + s; q += 4096) u8[q] = 1; // touched, as a program writes what it allocates
}
const victim = new Int32Array(ops);
const size = new Int32Array(ops);
for (let i = 0; i < ops; i++) {
  victim[i] = Math.floor(rand() * live);
  size[i] = drawSize();
}

function churn(h, n) {
  for (let i = 0; i < n; i++) {
    const v = victim[i];
    h.free(slot[v]);
    slot[v] = h.malloc(size[i]);
  }
}

const times = [];
for (let r = 0; r < 8; r++) {
  const t = process.hrtime.bigint();
  churn(heap, ops);
  times.push(Number(process.hrtime.bigint() - t) / ops);
}
times.sort((a, b) => a - b);
console.log(`churn at ${live} live: median ${times[4].toFixed(1)} ns a step (8 rounds of ${ops})`);

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
for (let r = 0; r < 4; r++) churn(heap, ops);
const { profile } = await session.post('Profiler.stop');
session.disconnect();

// Every sample of the loop, by line. The loop's own lines carry this script's line numbers, the inlined
// allocator's the bundle's: a line inside the loop's range here is counted as the loop's.
const bundle = readFileSync(fileURLToPath(url), 'utf8').split('\n');
const here = fileURLToPath(import.meta.url);
const script = readFileSync(here, 'utf8').split('\n');
const loopFirst = script.findIndex((l) => l.startsWith('function churn(')) + 1;
const loopLast = loopFirst + churn.toString().split('\n').length - 1;
const byLine = new Map();
let total = 0;
for (const node of profile.nodes) {
  if (node.callFrame.functionName !== 'churn' || fileURLToPath(node.callFrame.url || 'file:///') !== here) continue;
  for (const { line, ticks } of node.positionTicks ?? []) {
    byLine.set(line, (byLine.get(line) ?? 0) + ticks);
    total += ticks;
  }
}
console.log(`samples in the loop: ${total}; the lines with the most (line: share, text):`);
for (const [line, ticks] of [...byLine].sort((a, b) => b[1] - a[1]).slice(0, 8)) {
  const inLoop = line >= loopFirst && line <= loopLast;
  const text = inLoop ? `(the loop) ${script[line - 1].trim()}` : (bundle[line - 1] ?? '').trim();
  console.log(`  ${String(line).padStart(5)}: ${((100 * ticks) / total).toFixed(1).padStart(5)}%  ${text.length > 110 ? `${text.slice(0, 107)}...` : text}`);
}
