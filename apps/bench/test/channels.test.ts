// The `channels` group's runs, tiny, on the built files (the allocator's pool_arena, @paddock/channel, this app's
// agents bundle dist/channel-worker.js): every kind of lane hands its blocks over with none lost, duplicated or
// torn, in the channel's shapes; the wake-up runs give one latency per message; the targets are judged from the
// samples (met, not met, or n/a where a lane has none).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateHeap } from '../src/peers/paddock-heap.js';
import { findLane, LANES } from '../src/workloads/channels-lanes.js';
import type { ChannelModule } from '../src/workloads/channels-protocol.js';
import { channelTargets, type ChannelsJson } from '../src/workloads/channels-report.js';
import { AgentPool, loadChannelModule, runLane, type RunEnv, runWake } from '../src/workloads/channels-run.js';

const arenaUrl = new URL('../../../packages/allocator/dist/pool-arena.js', import.meta.url).href;
const { createHeap } = (await import(arenaUrl)) as { createHeap: CreateHeap };
const channelUrl = new URL('../../../packages/channel/dist/index.js', import.meta.url);
const channels = (await loadChannelModule(channelUrl)) as ChannelModule;
let pool: AgentPool;
let env: RunEnv;

beforeAll(async () => {
  expect(typeof channels).toBe('object'); // a string says why @paddock/channel did not load
  pool = await AgentPool.start(arenaUrl, channelUrl.href, new URL('../dist/channel-worker.js', import.meta.url));
  env = { pool, createHeap, channels, bin: null, ms: 40 };
});
afterAll(() => pool?.stop());

describe('the channels group', () => {
  it.each([
    ['channel', 2, 2, 32, 64],
    ['channel', 4, 1, 1, 4096],
    ['channel', 1, 4, 32, 64],
    ['post-offsets', 1, 1, 32, 64],
    ['post-clone', 1, 1, 1, 4096],
    ['post-transfer', 1, 1, 1, 64],
    ['ringbuf', 1, 1, 32, 64],
  ] as const)('%s %i->%i x%i, %i B: every block received once, intact', async (kind, p, c, batch, size) => {
    const out = await runLane(env, findLane(kind, p, c, batch), size);
    expect(out).toMatchObject({ ok: true });
    if (out.ok) {
      expect(out.messages).toBeGreaterThan(0);
      expect(out.rate).toBeGreaterThan(0);
    }
  });

  it('the C limit without its binary is a failure that says so', async () => {
    expect(await runLane(env, findLane('native', 1, 1, 1), 64)).toEqual({ ok: false, error: 'the C limit is not built' });
  });

  it.each(['recvAsync', 'port one-way', 'port round trip'] as const)('wake-up %s: one latency per message', async (kind) => {
    const out = await runWake(env, kind, 5);
    expect(Array.isArray(out)).toBe(true);
    expect((out as number[]).length).toBe(5);
    for (const us of out as number[]) expect(us).toBeGreaterThan(0);
  });

  it('judges the targets from the samples: met, not met, n/a', () => {
    const samples: Record<string, number[]> = {
      'channel 1->1 x32 64 B': [300, 310, 320],
      'postMessage offsets 1->1 64 B': [10, 11, 12],
      'postMessage offsets 1->1 x1024 64 B': [100, 100, 100],
    };
    const r: ChannelsJson = { rounds: 3, warmup: 1, ms: 40, wakeCount: 3, limitCommand: null, notes: [], samples, errors: {}, wake: { recvAsync: [[10, 20, 30]], 'port round trip': [[40, 50, 60]] } };
    const t = channelTargets(r);
    expect(t[0]).toMatchObject({ min: 20, met: true });
    expect(t[0]!.ratio).toBeCloseTo(310 / 11);
    expect(t[1]).toMatchObject({ min: 4, met: false });
    expect(t.find((x) => x.what.startsWith('channel 2->2 64 B / channel 1->1'))).toMatchObject({ met: null, ratio: null });
    expect(t.at(-1)).toMatchObject({ max: 1, ratio: 20 / 50, met: true });
    expect(LANES.filter((l) => l.kind === 'channel')).toHaveLength(8);
  });
});
