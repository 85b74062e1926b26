/**
 * The `channels` group (`--only channels`): blocks handed between agents through a Paddock channel
 * (`@paddock/channel`, over the arena backend), side by side in one run with what a user would otherwise
 * pick: postMessage of offsets (one a message, batches of 32 and 1,024), postMessage of the payload itself
 * (structured clone, an ArrayBuffer transferred), ringbuf.js (SPSC, the bytes copied through its ring), and
 * the native limit (C, pthreads, mimalloc, a bounded MPMC queue of stamped slots, `native/channels.c`) in
 * the channel's shapes: 1->1, 4->1, 1->4, 2->2; 64 B and 4 KiB messages, one a send and batches of 32.
 *
 * - `channel-throughput`: messages per second from the producers' start to the last consumer's end; each
 *   producer mallocs a block, writes its tag into every word and sends it, each consumer receives it, reads
 *   every word and frees it. Every lane and size runs once a round, the order rotating round by round.
 * - `channel-wakeup`: the main thread awaits `recvAsync` while a worker sends one block (µs from the send to
 *   the main thread running again), against a MessagePort message one way and a MessagePort round trip.
 *
 * The lanes are in `channels-lanes.ts`, the runs in `channels-run.ts`, the agents in `channel-worker.ts`,
 * the figures and the user's targets in `channels-report.ts`.
 */
import { join } from 'node:path';
import { elapsed, running, type RunContext } from '../context.js';
import { roundsOr } from '../options.js';
import { APP, build, have } from '../toolchain.js';
import { cellKey, LANES, SIZES } from './channels-lanes.js';
import { channelsReport, type ChannelsJson } from './channels-report.js';
import { AgentPool, channelDistUrl, loadChannelModule, runLane, type RunEnv, runWake, WAKE_KINDS } from './channels-run.js';
import type { Failure, WorkloadDescriptor } from './workload.js';

/** Latencies per wake-up kind and round. */
const WAKE_COUNT = 200;

/** Builds `native/channels.c` with `cc` against mimalloc (Debian's libmimalloc-dev), as the native peers are built. */
function buildLimit(): { bin: string | null; command: string | null; reason: string | null } {
  if (!have('cc')) return { bin: null, command: null, reason: 'no C compiler: `cc` not found (apt-get install -y gcc)' };
  const source = join(APP, 'native', 'channels.c');
  const b = build('native', source, '-channels-mimalloc', 'cc', (o) => ['-O2', '-pthread', '-o', o, '-DUSE_MIMALLOC', source, '-lmimalloc']);
  if (!b.ok) return { bin: null, command: null, reason: /mimalloc/.test(b.reason) ? `mimalloc not found (apt-get install -y libmimalloc-dev): ${b.reason}` : b.reason };
  return { bin: b.path, command: b.command, reason: null };
}

async function runChannels(ctx: RunContext, picked: (name: string) => boolean): Promise<ChannelsJson | null> {
  const wantRate = picked('channel-throughput');
  const wantWake = picked('channel-wakeup');
  if (!wantRate && !wantWake) return null;
  const full = ctx.opts.mode.name === 'full';
  const rounds = roundsOr(ctx.opts.roundsGiven, full ? 21 : 5);
  const warmup = ctx.opts.warmupGiven >= 0 ? ctx.opts.warmupGiven : 1;
  const ms = full ? 1000 : 200;
  const paddock = running(ctx, 'agents').find((e) => e.name === 'paddock');
  const heap = paddock?.ready?.heap ?? null;
  const mod = await loadChannelModule();
  const limit = buildLimit();
  const notes: string[] = [];
  if (heap === null) notes.push('the paddock peer does not run: no channel or offset lanes');
  if (typeof mod === 'string') notes.push(mod);
  if (limit.reason !== null) notes.push(`C queue: ${limit.reason}`);
  const startPool = () => (heap !== null ? AgentPool.start(heap.url, typeof mod === 'string' ? null : channelDistUrl().href) : Promise.resolve(null));
  let pool = await startPool();
  let env: RunEnv = { pool, createHeap: heap?.createHeap ?? null, channels: typeof mod === 'string' ? null : mod, bin: limit.bin, ms };
  const samples: Record<string, number[]> = {};
  const errors: Record<string, string> = {};
  const wake: Record<string, number[][]> = {};
  const cells = LANES.flatMap((lane) => SIZES.map((size) => ({ lane, size, key: cellKey(lane, size) })));
  try {
    for (let r = 0; r < warmup + rounds; r++) {
      const measured = r >= warmup;
      if (wantRate) {
        for (let k = 0; k < cells.length; k++) {
          const { lane, size, key } = cells[(k + r * 7) % cells.length];
          if (errors[key] !== undefined || (lane.kind === 'channel' && env.channels === null)) continue; // a note says why
          ctx.progress.show(`channels round ${r + 1}/${warmup + rounds} ${key} (${elapsed(ctx)})`, `channels ${r} ${key}`);
          const out = await runLane(env, lane, size);
          if (!out.ok) {
            errors[key] = out.error;
            // An agent may still be stuck in that run: the next runs get fresh ones.
            if (lane.kind !== 'native') {
              await pool?.stop();
              pool = await startPool();
              env = { ...env, pool };
            }
          }
          else if (measured) (samples[key] ??= []).push(out.rate);
        }
      }
      if (wantWake) {
        for (let k = 0; k < WAKE_KINDS.length; k++) {
          const kind = WAKE_KINDS[(k + r) % WAKE_KINDS.length];
          if (errors[kind] !== undefined || (kind === 'recvAsync' && env.channels === null)) continue;
          ctx.progress.show(`channels round ${r + 1}/${warmup + rounds} wake-up ${kind} (${elapsed(ctx)})`, `channels ${r} ${kind}`);
          const out = await runWake(env, kind, WAKE_COUNT);
          if (typeof out === 'string') {
            errors[kind] = out;
            await pool?.stop();
            pool = await startPool();
            env = { ...env, pool };
          }
          else if (measured) (wake[kind] ??= []).push(out);
        }
      }
    }
  } finally {
    await pool?.stop();
  }
  return { rounds, warmup, ms, wakeCount: WAKE_COUNT, limitCommand: limit.command, notes, samples, errors, wake };
}

export const channels: WorkloadDescriptor<ChannelsJson | null> = {
  name: 'channels',
  members: [
    { name: 'channel-throughput', groups: ['channels'] },
    { name: 'channel-wakeup', groups: ['channels'] },
  ],
  run: runChannels,
  failures(r): readonly Failure[] {
    if (r === null) return [];
    const own = Object.entries(r.errors).filter(([k]) => k.startsWith('channel ') || k === 'recvAsync');
    return own.length > 0 ? [{ peer: 'paddock', reason: `channels: ${own.map(([k, e]) => `${k}: ${e}`).join('; ')}` }] : [];
  },
  report: (r, ctx) => channelsReport(r, ctx.command),
};
