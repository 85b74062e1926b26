/**
 * `pnpm start`: Paddock's demo. Two producer workers allocate about 100 MiB of messages in one shared
 * heap and send them through one channel (`@paddock/channel`: the blocks change hands, no offset is posted) to a
 * consumer worker, which checks every message, holds them all, then frees them
 * (blocks another agent allocated). Then every agent goes idle, and the demo prints the process's resident
 * memory as the OS reports it, over time. Then one producer is retired mid-run: it allocates more
 * messages and, before it sends them, the main thread terminates it; `heap.watch` on the main thread reaps
 * it and, since it shared none of them, releases them. It runs the same work on Paddock's arena allocator
 * and on the classic pool it replaces: the arena hands idle memory back and reaps the retired producer; the
 * classic pool keeps its memory and cannot reap (its `watch` returns false).
 */
import { Worker } from 'node:worker_threads';
import { createChannel } from '@paddock/channel';
import { readFileSync } from 'node:fs';
import { loadNativePageReturn } from '@paddock/platform';
import { createDemoHeap, type BackendName } from './backends.js';

const MiB = 1 << 20;
const PRODUCERS = 2;
const PER_PRODUCER = 50 * MiB;
const IDLE_MS = 2500;
/** Slots of the channel: a producer waits while it is full. */
const CHANNEL_CAPACITY = 256;
/** What the retired producer allocates and holds, unsent, when it is terminated. */
const RETIRED_HOLDS = 32 * MiB;
/** How long after the retired producer's exit the demo reads resident memory again. */
const RETIRED_SETTLE_MS = 500;

/** Resident memory of this process as the OS reports it (/proc/self/statm on Linux), else Node's figure. */
function residentBytes(): number {
  try {
    const pages = Number(readFileSync('/proc/self/statm', 'utf8').split(' ')[1]);
    if (Number.isFinite(pages)) return pages * 4096;
  } catch {
    // not Linux
  }
  return process.memoryUsage.rss();
}

const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

/**
 * A progress line on stderr: rewritten in place on a terminal; elsewhere (a pipe, a log, CI) only the lines
 * marked `keep`, each a plain line of its own, no carriage return.
 */
function progress(line: string, keep: boolean): void {
  if (process.stderr.isTTY) process.stderr.write(`\r${line}    `);
  else if (keep) process.stderr.write(`${line}\n`);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function next<T extends { kind: string }>(w: Worker, kind: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: T) => {
      if (m.kind !== kind) return;
      w.off('message', on);
      resolve(m);
    };
    w.on('message', on);
    w.once('error', reject);
  });
}

interface Run {
  rows: [string, number][];
  samples: [number, number][];
  messages: number;
  bad: number;
  /** Index in `rows` of the last idle row. */
  idleEnd: number;
  /** Paddock's committed bytes with the workers up, nothing allocated, and after the idle time. */
  committedStart: number;
  committedIdle: number;
  retired: Retired;
  /** Blocks the producers sent through the channel, and what the channel counted received. */
  sent: number;
  received: number;
}

/** Producer 2, retired mid-run while it held messages it had not sent. */
interface Retired {
  /** What `heap.watch` returned: whether this backend reaps a worker that did not leave by itself. */
  watched: boolean;
  count: number;
  bytes: number;
  residentBefore: number;
  residentAfter: number;
  committedBefore: number;
  committedAfter: number;
}

async function run(backend: BackendName): Promise<Run> {
  const { heap, handle } = await createDemoHeap(backend, 1 << 30);
  // One channel for every message: its handle is posted once, in each worker's data; the blocks go through it.
  const channel = createChannel(heap.heap, { capacity: CHANNEL_CAPACITY });
  const url = new URL('./worker.js', import.meta.url);
  const producers = Array.from(
    { length: PRODUCERS },
    (_, i) => new Worker(url, { workerData: { handle, channel: channel.handle, role: 'producer', id: i + 1, bytes: PER_PRODUCER, hold: RETIRED_HOLDS } }),
  );
  const consumer = new Worker(url, { workerData: { handle, channel: channel.handle, role: 'consumer', id: 0, bytes: 0 } });
  const all = [...producers, consumer];
  await Promise.all(all.map((w) => next(w, 'ready'))); // attached to the heap, the channel open
  await sleep(300); // and settled
  const rows: [string, number][] = [['workers up, nothing allocated', residentBytes()]];
  const committedStart = heap.committedBytes();

  const holding = next<{ kind: string; count: number; bad: number }>(consumer, 'holding');
  const produced = producers.map((p) => next<{ kind: string; count: number }>(p, 'produced'));
  consumer.postMessage('receive');
  for (const p of producers) p.postMessage('start');
  const sent = (await Promise.all(produced)).reduce((n, m) => n + m.count, 0);
  channel.close(); // every producer is done: the consumer drains the channel, then sees its end
  const held = await holding;
  const { received } = channel.stats();
  rows.push([`consumer holds ${held.count} messages`, residentBytes()]);

  const freed = next(consumer, 'freed');
  consumer.postMessage('free');
  await freed;
  rows.push(['consumer freed them all', residentBytes()]);

  for (const w of all) w.postMessage('idle');
  const samples: [number, number][] = [];
  const t0 = Date.now();
  while (Date.now() - t0 < IDLE_MS) {
    await sleep(100);
    const r = residentBytes();
    samples.push([Date.now() - t0, r]);
    progress(`${backend}: idle ${((Date.now() - t0) / 1000).toFixed(1)} s, resident ${mib(r)}`, samples.length % 5 === 0);
  }
  if (process.stderr.isTTY) process.stderr.write('\n');
  for (const at of [500, 1000, 1500, 2000]) {
    const sample = samples.find(([t]) => t >= at);
    if (sample) rows.push([`idle for ${at / 1000} s`, sample[1]]);
  }
  rows.push([`idle for ${IDLE_MS / 1000} s`, residentBytes()]);
  const idleEnd = rows.length - 1;
  const committedIdle = heap.committedBytes();

  // Producer 2 is retired mid-run: it allocates more messages and is terminated before it sends any. The
  // main thread watches it first; it shares none of what it holds, so the reap may release its live blocks.
  const retiree = producers[PRODUCERS - 1]!;
  const watched = heap.watch(retiree, { releaseLive: true });
  const holdingUnsent = next<{ kind: string; count: number; bytes: number }>(retiree, 'holding-unsent');
  retiree.postMessage('hold');
  const unsent = await holdingUnsent;
  const residentBefore = residentBytes();
  const committedBefore = heap.committedBytes();
  rows.push([`producer ${PRODUCERS} holds ${mib(unsent.bytes)} unsent`, residentBefore]);
  const gone = new Promise((resolve) => retiree.once('exit', resolve)); // after the watch's own listener
  await retiree.terminate();
  await gone;
  await sleep(RETIRED_SETTLE_MS);
  const residentAfter = residentBytes();
  rows.push([`it was terminated, ${RETIRED_SETTLE_MS / 1000} s later`, residentAfter]);
  const retired: Retired = { watched, count: unsent.count, bytes: unsent.bytes, residentBefore, residentAfter, committedBefore, committedAfter: heap.committedBytes() };

  const alive = all.filter((w) => w !== retiree);
  const stopped = alive.map((w) => next(w, 'stopped'));
  for (const w of alive) w.postMessage('stop');
  await Promise.all(stopped);
  await Promise.all(alive.map((w) => w.terminate()));
  channel.drop();
  return { rows, samples, messages: held.count, bad: held.bad, idleEnd, committedStart, committedIdle, retired, sent, received };
}

async function main(): Promise<void> {
  console.log('Paddock demo: 2 producer workers allocate ~100 MiB of messages in one shared heap and hand them');
  console.log('to a consumer worker through one channel; it checks and frees them; then every agent goes idle.');
  console.log(`Then producer ${PRODUCERS} is retired mid-run: it allocates ${mib(RETIRED_HOLDS)} more and is terminated before it sends them.`);
  console.log(`native page return: ${loadNativePageReturn() ? 'active (madvise MADV_DONTNEED)' : 'not available: decommit is bookkeeping only'}\n`);
  const arena = await run('pool_arena');
  await sleep(200);
  const classic = await run('pool_classic');

  const width = 34;
  console.log(`\nresident memory of this process (from the OS)`);
  console.log(`${''.padEnd(width)}${'pool_arena'.padStart(12)}${'pool_classic'.padStart(14)}`);
  for (let i = 0; i < Math.min(arena.rows.length, classic.rows.length); i++) {
    const label = arena.rows[i]![0].replace(/\d+ messages/, 'the messages');
    console.log(`${label.padEnd(width)}${mib(arena.rows[i]![1]).padStart(12)}${mib(classic.rows[i]![1]).padStart(14)}`);
  }
  for (const [name, r] of [['pool_arena', arena], ['pool_classic', classic]] as const) {
    const peak = r.rows[1]![1];
    const end = r.rows[r.idleEnd]![1];
    const base = r.rows[0]![1];
    const settle = r.samples.find(([, bytes]) => bytes - base <= 10 * MiB);
    console.log(
      `${name}: ${r.messages} messages, ${r.bad} damaged; held ${mib(peak - base)} above the start, ` +
        `${mib(end - base)} after ${IDLE_MS / 1000} s idle` +
        (settle ? ` (within 10 MiB of the start after ${(settle[0] / 1000).toFixed(1)} s)` : '') +
        `; Paddock committed ${mib(r.committedStart)} at the start, ${mib(r.committedIdle)} after`,
    );
  }
  for (const [name, r] of [['pool_arena', arena], ['pool_classic', classic]] as const) {
    console.log(
      `${name}: ${r.sent} blocks handed from ${PRODUCERS} producers to the consumer through one channel ` +
        `(capacity ${CHANNEL_CAPACITY}; the channel counted ${r.received} received; no offset in postMessage)`,
    );
  }
  for (const [name, r] of [['pool_arena', arena], ['pool_classic', classic]] as const) {
    const t = r.retired;
    const fell = t.residentBefore - t.residentAfter;
    const how = t.watched
      ? `heap.watch reaped it and released them: resident ${mib(t.residentBefore)} -> ${mib(t.residentAfter)} (${mib(fell)} back, its thread's own memory included)`
      : `heap.watch returned false (the classic pool keeps each agent's state in that agent's memory: it cannot reap a worker that ` +
        `died): resident ${mib(t.residentBefore)} -> ${mib(t.residentAfter)} (its thread's own memory); its messages stay allocated`;
    console.log(
      `${name}: producer ${PRODUCERS} terminated holding ${t.count} unsent messages (${mib(t.bytes)}); ${how}; ` +
        `heap committed ${mib(t.committedBefore)} -> ${mib(t.committedAfter)}`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
