// The example page: creates a heap over a growable SharedArrayBuffer, starts module Web Workers that attach to
// it (two producers and a consumer, see worker.ts), shows this agent's `heap.stats()` live, has everything
// freed, lets every agent go idle, and finally drops the heap. At each step it records the heap's figures and,
// opened with `?measure`, the browser's own measure of the page's memory; a driver can also take its own
// figures there by defining `window.__sample`. The page's report is `window.__done`.
import { createHeap, type Heap } from '@paddock/allocator';
import { createChannel } from '@paddock/channel';
import type { Job, Order, Report } from './exchange.js';

const params = new URLSearchParams(location.search);
/** Megabytes of messages each producer allocates (`?mib=`). */
const MIB_PER_PRODUCER = Number(params.get('mib') ?? 24);
const PRODUCERS = 2;
/** How long the idle step waits for committed memory to settle, at most. */
const IDLE_MAX_MS = 5_000;

interface Sample {
  step: string;
  bufferBytes: number | null;
  committedBytes: number | null;
  liveBytes: number | null;
  /** `performance.measureUserAgentSpecificMemory().bytes`, when asked for and the page is isolated. */
  browserBytes: number | null;
  /** Its share per agent (the page, each worker). */
  browserAgents: number[] | null;
  /** How long that measure took to come back. */
  browserMs: number | null;
  /** Whatever the driver's `window.__sample` returned. */
  driver: unknown;
}

interface PageWindow {
  __step?: string;
  __done?: unknown;
  __sample?: (step: string) => Promise<unknown>;
}
const win = window as unknown as PageWindow;
const $ = (id: string) => document.getElementById(id)!;
const mib = (n: number | null) => (n === null ? '-' : `${(n / 1048576).toFixed(1)} MiB`);

function step(s: string): void {
  win.__step = s;
  $('step').textContent = s;
}

/** The reports of one worker, in order; `next(kind)` waits for the first of that kind not taken yet. */
class Mailbox {
  private readonly reports: Report[] = [];
  private readonly waiting: Array<() => void> = [];
  private failure: Error | null = null;
  constructor(readonly worker: Worker) {
    worker.onmessage = (e: MessageEvent<Report>) => this.arrive(e.data, null);
    worker.onerror = (e) => this.arrive(null, new Error(`worker: ${e.message}`));
  }
  private arrive(report: Report | null, failure: Error | null): void {
    if (report) this.reports.push(report);
    this.failure ??= failure;
    for (const w of this.waiting.splice(0)) w();
  }
  next<K extends Report['kind']>(kind: K): Promise<Extract<Report, { kind: K }>> {
    return new Promise((resolve, reject) => {
      const look = () => {
        const i = this.reports.findIndex((r) => r.kind === kind);
        if (i >= 0) resolve(this.reports.splice(i, 1)[0] as Extract<Report, { kind: K }>);
        else if (this.failure) reject(this.failure);
        else this.waiting.push(look);
      };
      look();
    });
  }
  tell(order: Order): void {
    this.worker.postMessage(order);
  }
}

function startWorker(job: Job): Mailbox {
  const box = new Mailbox(new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }));
  box.worker.postMessage(job);
  return box;
}

interface MemoryMeasurement {
  bytes: number;
  breakdown: Array<{ bytes: number; attribution: Array<{ scope?: string }> }>;
}

/** The browser's measure of this page's memory (all of its agents), with each agent's share, when asked for. */
async function measureBrowser(): Promise<{ bytes: number; agents: number[]; ms: number } | null> {
  const measure = (performance as { measureUserAgentSpecificMemory?: () => Promise<MemoryMeasurement> }).measureUserAgentSpecificMemory;
  if (!params.has('measure') || !crossOriginIsolated || typeof measure !== 'function') return null;
  const t0 = performance.now();
  const m = await measure.call(performance);
  const agents = m.breakdown.filter((b) => b.bytes > 0 && b.attribution.length > 0).map((b) => b.bytes);
  return { bytes: m.bytes, agents, ms: Math.round(performance.now() - t0) };
}

const samples: Sample[] = [];
async function sample(s: string, heap: Heap | null): Promise<void> {
  const stats = heap?.stats();
  const driver = (await win.__sample?.(s)) ?? null; // first: a driver may collect garbage before its figures
  const browser = await measureBrowser();
  const row: Sample = {
    step: s,
    bufferBytes: heap ? heap.space.buffer.byteLength : null,
    committedBytes: stats?.committedBytes ?? null,
    liveBytes: stats?.liveBytes ?? null,
    browserBytes: browser?.bytes ?? null,
    browserAgents: browser?.agents ?? null,
    browserMs: browser?.ms ?? null,
    driver,
  };
  samples.push(row);
  const tr = document.createElement('tr');
  for (const cell of [s, mib(row.bufferBytes), mib(row.committedBytes), mib(row.liveBytes), mib(row.browserBytes)]) {
    tr.appendChild(document.createElement('td')).textContent = cell;
  }
  $('steps').appendChild(tr);
}

/** The heap the live table shows, or null. Held here rather than in a closure, so that dropping it drops it. */
let shown: Heap | null = null;

function showLive(): void {
  if (shown === null) return;
  const s = shown.stats();
  const rows: Array<[string, string]> = [
    ['buffer (never shrinks)', mib(shown.space.buffer.byteLength)],
    ['committed (every agent)', mib(s.committedBytes)],
    ['live (this agent)', mib(s.liveBytes)],
    ['page return', s.pageReturn],
    ['next idle tick', `${s.nextTickMs} ms`],
  ];
  $('live').innerHTML = rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join('');
}
setInterval(showLive, 100);

/** Waits until this agent's committed bytes have not moved for a second (at most IDLE_MAX_MS). */
async function settle(heap: Heap): Promise<number> {
  const start = performance.now();
  let last = heap.stats().committedBytes;
  let since = start;
  while (performance.now() - start < IDLE_MAX_MS) {
    await new Promise((r) => setTimeout(r, 100));
    const now = heap.stats().committedBytes;
    if (now !== last) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= 1_000) break;
  }
  return performance.now() - start;
}

async function main(): Promise<void> {
  step('before');
  if (params.has('measure')) await new Promise((r) => setTimeout(r, 1_000)); // let the fresh page settle first
  await sample('before', null);

  step('create');
  let heap: Heap | null = createHeap({ maxBytes: 512 << 20 });
  $('backend').textContent = heap.backend;
  shown = heap;
  // The messages go from the producers to the consumer through one channel in the heap: its handle is posted
  // once, with the heap's, and no offset is ever posted.
  const channel = createChannel(heap, { capacity: 256 });
  const consumer = startWorker({ role: 'consumer', handle: heap.handle, channel: channel.handle });
  const producers = Array.from({ length: PRODUCERS }, (_, id) =>
    startWorker({ role: 'producer', handle: heap!.handle, channel: channel.handle, id: id + 1, bytes: MIB_PER_PRODUCER << 20 }),
  );
  const workers = [consumer, ...producers];
  const attached = await Promise.all(workers.map((w) => w.next('attached')));

  step('exchange');
  const produced = await Promise.all(producers.map((w) => w.next('produced')));
  channel.close(); // every producer is done: the consumer drains the channel, then sees its end
  const holding = await consumer.next('holding');
  $('channel').textContent = `${holding.viaChannel} blocks handed through the channel`;
  channel.drop(); // closed and drained, and nobody uses it again: its own block goes back
  await sample('holding', heap);

  step('free');
  consumer.tell('free');
  const freed = await consumer.next('freed');
  step('idle');
  for (const w of workers) w.tell('idle');
  heap.startIdle();
  const idleMs = await settle(heap);
  await sample('idle', heap);

  step('close');
  for (const w of workers) w.tell('close');
  await Promise.all(workers.map((w) => w.next('closed')));
  for (const w of workers) w.worker.terminate();
  shown = null;
  heap.stopIdle();
  heap.check();
  const final = heap.stats();
  heap.close();
  heap = null; // the last reference to the buffer: it is freed when the page's garbage collector runs
  step('dropped');
  await sample('dropped', null);

  step('done');
  win.__done = {
    crossOriginIsolated,
    backend: final.backend,
    pageReturn: final.pageReturn,
    workerBackends: attached.map((a) => a.backend),
    messages: produced.reduce((n, p) => n + p.messages, 0),
    bytes: produced.reduce((n, p) => n + p.bytes, 0),
    held: holding.messages,
    viaChannel: holding.viaChannel,
    intact: holding.intact,
    freed: freed.messages,
    idleMs: Math.round(idleMs),
    liveBytesAtEnd: final.liveBytes,
    samples,
  };
}

main().catch((err: unknown) => {
  win.__done = { error: String(err instanceof Error && err.stack ? err.stack : err) };
  step(`failed: ${String(err)}`);
});
