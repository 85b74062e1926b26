// Cross-agent behaviour with real workers (they run the built package: `pnpm build` first): the forced ABA
// interleaving, four agents churning against a shared ledger (alone, and while the main thread returns empty
// slabs), and an agent terminated in the middle of churn.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { type AddressSpace } from '@paddock/platform';
import { runWorkers, SYNC_WORDS } from '../../../tools/test-utils/workers.js';
import { GlobalPool, classSize } from '../src/index.js';
import { makePool } from './helpers.js';

const ABA = new URL('./workers/aba.mjs', import.meta.url);
const CHURN = new URL('./workers/churn.mjs', import.meta.url);

/** A worker's first message (rejects if it fails first). */
function firstMessage<T>(worker: Worker): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

/** The ledger the churning agents keep: one Int32 per 32 bytes of the space, the holder's id or 0. */
function makeLedger(space: AddressSpace): { ledger: SharedArrayBuffer; control: SharedArrayBuffer } {
  return { ledger: new SharedArrayBuffer((space.maxBytes / 32) * 4), control: new SharedArrayBuffer(64 * 4) };
}

/** Live blocks by the pool's own count: class blocks carved and not on a list, plus large blocks. */
function liveBlocks(pool: GlobalPool): number {
  const counts = pool.check();
  return counts.perClass.reduce((sum, k) => sum + k.live, counts.largeBlocks);
}

describe('real workers', () => {
  it('ABA: an agent paused between reading the head X and its CAS while another pops X, pops Y and pushes X fails its CAS and pops again', async () => {
    const { space, pool } = makePool();
    const c = 3;
    const [x, y, z] = [pool.malloc(classSize(c)), pool.malloc(classSize(c)), pool.malloc(classSize(c))];
    pool.free(z);
    pool.free(y);
    pool.free(x); // the list is X -> Y -> Z
    const control = new SharedArrayBuffer(8);
    const reader = new Worker(ABA, { workerData: { handle: space.handle, control, role: 'reader', c } });
    const mutator = new Worker(ABA, { workerData: { handle: space.handle, control, role: 'mutator', c } });
    const [read, mutated] = await Promise.all([
      firstMessage<{ casSucceeded: boolean; first: number; next: number; got: number }>(reader),
      firstMessage<{ x: number; y: number }>(mutator),
    ]);
    await Promise.all([reader.terminate(), mutator.terminate()]);
    expect([read.first, read.next]).toEqual([x, y]);
    expect(mutated).toEqual({ x, y });
    expect(read.casSucceeded).toBe(false); // the head was X again, but with another tag
    expect(read.got).toBe(x); // its second try popped X, now followed by Z
    expect(pool.check().perClass[c]).toMatchObject({ carved: 3, free: 1, live: 2 });
    expect(pool.malloc(classSize(c))).toBe(z);
  });

  it('4 workers churn concurrently: the ledger sees no block handed out twice, and every block comes back', async () => {
    const { space, pool } = makePool();
    const { ledger, control } = makeLedger(space);
    const results = await runWorkers<{ faults: number }>(CHURN, 4, (index) => ({
      handle: space.handle,
      ledger,
      control,
      ops: 200_000,
      hold: 48,
      seed: 1000 + index,
    }));
    expect(results.map((r) => r.faults)).toEqual([0, 0, 0, 0]);
    expect(new Int32Array(ledger).some((v) => v !== 0)).toBe(false);
    expect(liveBlocks(pool)).toBe(0);
  });

  it('slabs returned and the pool counted while 4 workers churn: no block handed out twice, none lost, every page back at the end', async () => {
    const { space, pool } = makePool();
    const { ledger, control } = makeLedger(space);
    const base = space.committedBytes;
    let finished = false;
    const churn = runWorkers<{ faults: number }>(CHURN, 4, (index) => ({
      handle: space.handle,
      ledger,
      control,
      ops: 150_000,
      hold: 48,
      seed: 3000 + index,
    })).finally(() => {
      finished = true;
    });
    let during = 0;
    let looks = 0;
    while (!finished) {
      during += pool.returnEmptySlabs();
      // The counts stats() reports are taken while the workers pop and push: an estimate, never an error.
      const counts = pool.counts();
      expect(counts.liveBytes).toBeGreaterThanOrEqual(0);
      looks++;
      await new Promise((r) => setImmediate(r));
    }
    expect(looks).toBeGreaterThan(10);
    const results = await churn;
    expect(results.map((r) => r.faults)).toEqual([0, 0, 0, 0]);
    expect(new Int32Array(ledger).some((v) => v !== 0)).toBe(false);
    expect(during).toBeGreaterThan(0); // slabs went back while the workers popped, pushed and carved
    expect(liveBlocks(pool)).toBe(0);
    pool.returnEmptySlabs();
    expect(pool.check().perClass.every((k) => k.slabs === 0)).toBe(true);
    expect(space.committedBytes).toBe(base);
  });

  it('a worker terminated in the middle of churn: check() passes with no reap, and only its own blocks are missing', async () => {
    const { space, pool } = makePool();
    const { ledger, control } = makeLedger(space);
    const sync = new SharedArrayBuffer(SYNC_WORDS * 4);
    const count = 4;
    const victim = 3;
    const workers = Array.from(
      { length: count },
      (_, index) =>
        new Worker(CHURN, {
          workerData: { handle: space.handle, ledger, control, sync, index, count, ops: index === victim ? 0 : 150_000, hold: 48, seed: 2000 + index },
        }),
    );
    const done = workers.filter((_, i) => i !== victim).map((w) => firstMessage<{ faults: number }>(w));
    const flags = new Int32Array(sync);
    while (Atomics.load(flags, 0) < count) await new Promise((r) => setTimeout(r, 2));
    Atomics.store(flags, 1, 1);
    Atomics.notify(flags, 1);
    const words = new Int32Array(control);
    while (Atomics.load(words, 8 + victim) < 50_000) await new Promise((r) => setTimeout(r, 1));
    await workers[victim]!.terminate();
    const results = await Promise.all(done);
    await Promise.all(workers.map((w) => w.terminate()));
    expect(results.map((r) => r.faults)).toEqual([0, 0, 0]);
    expect(Atomics.load(words, 0)).toBe(0);

    // The pool is consistent as the dead agent left it: no reap, no repair.
    const entries = new Int32Array(ledger);
    const held: number[] = [];
    let others = 0;
    for (let i = 0; i < entries.length; i++) {
      if (entries[i] === victim + 1) held.push(i * 32);
      else if (entries[i] !== 0) others++;
    }
    expect(others).toBe(0); // the survivors gave everything back
    expect(held.length).toBeGreaterThan(0);
    for (const p of held) expect(pool.usableSize(p)).toBeGreaterThan(0); // each still live, not on a list
    // Live blocks are the dead agent's, plus at most the one it was between malloc and ledger, or ledger and free.
    const strays = liveBlocks(pool) - held.length;
    expect(strays === 0 || strays === 1).toBe(true);

    // Every free block is handed out once more, none of them a block the dead agent held.
    const counts = pool.check();
    const heldSet = new Set(held);
    const again = new Set<number>();
    counts.perClass.forEach((k) => {
      for (let i = 0; i < k.free; i++) again.add(pool.malloc(k.size));
    });
    expect(again.size).toBe(counts.perClass.reduce((sum, k) => sum + k.free, 0));
    for (const p of again) expect(heldSet.has(p)).toBe(false);
    expect(pool.check().perClass.every((k) => k.free === 0)).toBe(true);
  });
});
