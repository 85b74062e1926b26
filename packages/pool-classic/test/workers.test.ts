// Cross-agent behaviour with real workers (they run the built package: `pnpm build` first).
import { MessageChannel, Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { ClassicPool, listCapacity } from '../src/index.js';
import { checkPattern, fillPattern } from './workers/pattern.mjs';
import { MiB, WorkerAgent, makePool, sizeLadder } from './helpers.js';

const agents: WorkerAgent[] = [];
function spawn(...args: ConstructorParameters<typeof WorkerAgent>): WorkerAgent {
  const a = new WorkerAgent(...args);
  agents.push(a);
  return a;
}
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
});

describe('real workers', () => {
  it('blocks of every class and large size, allocated here, are checked and freed in a worker, which reuses them', async () => {
    const { space, pool } = makePool();
    const worker = spawn(space);
    const blocks = sizeLadder().map((size, i) => {
      const p = pool.malloc(size);
      fillPattern(space.u8, p, size, 1000 + i);
      return [p, size, 1000 + i] as [number, number, number];
    });
    expect(await worker.call('verifyAndFree', blocks)).toBe(blocks.length);
    await worker.call('check');
    pool.check();
    expect(pool.stats().liveBytes).toBe(0);
    // The worker's lists now hold them: it gets them back; this agent does not.
    const small = blocks.filter(([, s]) => s <= MiB);
    const again = await worker.call<number[]>('mallocMany', 100, 1);
    expect(small.map(([p]) => p)).toContain(again[0]);
    expect(small.map(([p]) => p)).not.toContain(pool.malloc(100));
    const large = await worker.call<number>('malloc', 3 * MiB);
    expect(blocks.map(([p]) => p)).toContain(large);
    // A double free across agents is caught in the worker.
    const p = pool.malloc(64);
    pool.free(p);
    await expect(worker.call('free', p)).rejects.toMatchObject({ code: 'DOUBLE_FREE' });
  });

  it('a list pushed to the global stack at 1 MiB in one worker is pulled whole by another', async () => {
    const { space, pool } = makePool();
    const [a, b] = [spawn(space), spawn(space)];
    const c = 7;
    const n = listCapacity(c);
    const ps = await a.call<number[]>('mallocMany', 4096, n + 1);
    await a.call('freeMany', ps);
    // n objects went to the global stack as one list when the (n + 1)-th free arrived; one stays local.
    expect(pool.stats().perClass[c]!.free).toBe(n);
    const got = await b.call<number[]>('mallocMany', 4096, n + 1);
    expect(new Set(got.slice(0, n))).toEqual(new Set(ps.slice(0, n)));
    expect(ps).not.toContain(got[n]);
    expect(pool.stats().perClass[c]!.free).toBe(0);
    await a.call('check');
    await b.call('check');
  });

  it('a large block freed in a worker goes to that worker, which reuses it; it never returns to its allocator', async () => {
    const { space, pool } = makePool();
    const worker = spawn(space);
    const p = pool.malloc(3 * MiB);
    fillPattern(space.u8, p, 3 * MiB, 77);
    await worker.call('verifyAndFree', [[p, 3 * MiB, 77]]);
    expect(pool.malloc(3 * MiB)).not.toBe(p);
    expect(await worker.call('malloc', 3 * MiB)).toBe(p);
    pool.check();
    await worker.call('check');
  });

  it('4 workers x 300 rounds pass blocks around a ring: every block received and freed exactly once, patterns intact', async () => {
    const { space, pool } = makePool();
    const count = 4;
    const rounds = 300;
    const batch = 48;
    const channels = Array.from({ length: count }, () => new MessageChannel());
    const results = await Promise.all(
      Array.from({ length: count }, (_, index) => {
        const send = channels[index]!.port1;
        const receive = channels[(index + count - 1) % count]!.port2;
        const w = new Worker(new URL('./workers/ring.mjs', import.meta.url), {
          workerData: { handle: space.handle, index, rounds, batch, seed: 0xbeef, send, receive },
          transferList: [send, receive],
        });
        return new Promise<{ received: number[]; damaged: number; agentId: number }>((resolve, reject) => {
          w.once('message', resolve);
          w.once('error', reject);
          w.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`ring worker ${index} exited with ${code}`))));
        });
      }),
    );
    const all = results.flatMap((r) => r.received);
    expect(all.length).toBe(count * rounds * batch);
    expect(new Set(all).size).toBe(all.length);
    for (let i = 0; i < count; i++) {
      const from = (i + count - 1) % count;
      expect(results[i]!.received.every((id) => id >>> 24 === from)).toBe(true);
    }
    expect(results.map((r) => r.damaged)).toEqual([0, 0, 0, 0]);
    expect(new Set(results.map((r) => r.agentId)).size).toBe(count);
    pool.check();
    expect(pool.stats().liveBytes).toBe(0);
  });

  it('a detached worker leaves nothing stranded: its lists and bump ranges serve the next agent', async () => {
    const { space, pool } = makePool();
    const worker = spawn(space);
    const ps = await worker.call<number[]>('mallocMany', 256, 10);
    await worker.call('freeMany', ps);
    await worker.call('detach');
    await worker.close();
    // Its free list and the rest of its bump range went to the global stack as two lists: together they
    // are the worker's whole class-3 block, and this agent gets all of it without reserving anything.
    const reserved = space.reservedBytes;
    const got = new Set(Array.from({ length: listCapacity(3) }, () => pool.malloc(256)));
    expect(got.size).toBe(listCapacity(3));
    for (const p of ps) expect(got).toContain(p);
    const base = Math.floor(ps[0]! / MiB) * MiB;
    for (const p of got) expect(p >= base && p < base + MiB).toBe(true);
    expect(space.reservedBytes).toBe(reserved);
    pool.check();
    expect(ClassicPool.open(space).stats().perClass[3]!.live).toBe(listCapacity(3));
  });
});

it('the pattern helpers catch a damaged block', () => {
  const u8 = new Uint8Array(10_000);
  fillPattern(u8, 100, 9000, 3);
  expect(checkPattern(u8, 100, 9000, 3)).toBe(-1);
  u8[100 + 4093 + 256] ^= 1;
  expect(checkPattern(u8, 100, 9000, 3)).toBe(4093 + 256);
  expect(checkPattern(u8, 100, 9000, 4)).toBe(0);
});
