/**
 * The `channels` group's section of `docs/PERFORMANCE.md`, from a run's JSON: every lane's rate, the wake-up
 * latencies, the user's targets with the ratio measured, and a reading derived from those figures. Notes
 * written by hand about the same build (what a profile showed, with the command that took it) are kept in
 * `apps/bench/report/channels-notes.md` and follow the figures verbatim.
 */
import { fmtRate } from '../format.js';
import { estimate } from '../stats.js';
import { cellKey, LANES, SIZES } from './channels-lanes.js';
import { channelTargets, type ChannelsJson } from './channels-report.js';

const esc = (s: string) => s.replace(/\|/g, '\\|');
function table(head: string[], rows: string[][]): string[] {
  return [`| ${head.map(esc).join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)];
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

const fx = (x: number | null) => (x === null ? '-' : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** The section's markdown lines; `rerun` is the command that runs the group alone, `notes` the kept notes (or null). */
export function channelsSection(r: ChannelsJson, rerun: string, notes: string | null): string[] {
  const L: string[] = ['## Channels', ''];
  L.push(
    `Blocks handed between agents through a Paddock channel (\`@paddock/channel\` over pool_arena), side by side with ` +
      `postMessage of offsets (the same blocks of the same heap; one offset a message, batches of 32 and 1,024), postMessage ` +
      `of the payload (a structured clone of the message, an ArrayBuffer transferred), ringbuf.js 0.4.0 (SPSC: the bytes ` +
      `copied through its ring) and a C queue (pthreads, mimalloc, a bounded MPMC ring of stamped slots: \`apps/bench/native/channels.c\`). ` +
      `Each producer mallocs a block, writes its tag into every word and sends it; each consumer receives it, reads every word and frees it. ` +
      `Messages per second from the start to the last consumer's end, ${r.ms} ms of production a run, median over ${r.rounds} rounds ` +
      `after ${r.warmup} warm-up with its 95% interval; channel and C queue: 256 slots (ringbuf.js: room for 256 messages; ` +
      `postMessage: at most 4,096 messages in flight). Alone: \`${rerun}\`.`,
  );
  L.push('');
  for (const n of r.notes) L.push(`Note: ${n}`, '');
  const rows = LANES.map((lane) => [
    lane.name,
    ...SIZES.map((s) => {
      const key = cellKey(lane, s);
      if (r.errors[key] !== undefined) return `FAILED: ${r.errors[key]}`;
      const e = estimate(r.samples[key] ?? []);
      return e === null ? 'not run' : `${fmtRate(e.median)}/s [${fmtRate(e.lo)} .. ${fmtRate(e.hi)}]`;
    }),
  ]);
  L.push(...table(['lane (producers->consumers, xN: N a send)', '64 B', '4 KiB'], rows), '');
  const wakeRows: string[][] = [];
  for (const kind of ['recvAsync', 'port one-way', 'port round trip']) {
    const rounds = r.wake[kind] ?? [];
    const all = rounds.flat();
    if (all.length === 0) continue;
    const e = estimate(rounds.map((xs) => quantile(xs, 0.5)));
    wakeRows.push([kind, quantile(all, 0.5).toFixed(1), quantile(all, 0.99).toFixed(1), e === null ? '-' : `${e.median.toFixed(1)} [${e.lo.toFixed(1)} .. ${e.hi.toFixed(1)}]`, String(all.length)]);
  }
  if (wakeRows.length > 0) {
    L.push(
      `Wake-up of the main thread (µs): \`recvAsync\` from the moment a worker sends one block until the awaiting main thread runs again, ` +
        `a MessagePort message one way (the same two moments), a MessagePort round trip (main -> worker -> main); ${r.wakeCount} a round, the sender waiting 1 ms first.`,
      '',
    );
    L.push(...table(['wake-up', 'p50', 'p99', "median of the rounds' p50 [95%]", 'samples'], wakeRows), '');
  }
  const targets = channelTargets(r);
  L.push("The user's targets for the channel (ratio of medians of this run, its 95% interval):", '');
  L.push(
    ...table(
      ['target', 'measured', 'asked', 'status'],
      targets.map((t) => [
        t.what,
        t.ratio === null ? '-' : `${fx(t.ratio)}x${t.lo !== null && t.hi !== null ? ` [${fx(t.lo)} .. ${fx(t.hi)}]` : ''}`,
        t.min !== undefined ? `>= ${t.min}x` : `<= ${t.max}x`,
        t.met === null ? 'n/a' : t.met ? 'MET' : '**NOT MET**',
      ]),
    ),
    '',
  );
  const missed = targets.filter((t) => t.met === false);
  const judged = targets.filter((t) => t.met !== null).length;
  /** How far below (or above, for a maximum) its goal a target's ratio is: the smaller, the further. */
  const share = (t: (typeof targets)[number]) => (t.min !== undefined ? t.ratio! / t.min : t.max! / t.ratio!);
  const worst = [...missed].sort((a, b) => share(a) - share(b))[0];
  const undecided = targets.filter((t) => t.lo !== null && t.hi !== null && t.min !== undefined && t.lo < t.min && t.hi >= t.min);
  L.push(
    `Reading: ${judged - missed.length} of ${judged} targets met` +
      (worst !== undefined ? `; the furthest from its goal: ${worst.what}, ${fx(worst.ratio)}x (${fx(share(worst))} of the goal)` : '') +
      `; ${undecided.length} of the ${judged} have an interval that reaches both sides of the goal: this run cannot tell those from noise.`,
    '',
  );
  if (notes !== null) L.push(notes.trim(), '');
  return L;
}
