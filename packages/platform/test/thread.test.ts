// The thread an agent runs on: its key matches what the parent's Worker object shows, and onThreadExit tells a
// thread that ends by itself from one an uncaught exception ends, and runs nothing for a terminated one.
import { describe, expect, it } from 'vitest';
import { Worker } from 'node:worker_threads';
import { agentCanBlock, onThreadExit, threadKey } from '../src/index.js';

function run(how: string, terminate = false): Promise<{ end: number; key: number; threadId: number }> {
  const sab = new SharedArrayBuffer(8);
  const seen = new Int32Array(sab);
  const w = new Worker(new URL('./workers/thread-exit.mjs', import.meta.url), { workerData: { sab, how } });
  const threadId = w.threadId;
  w.on('error', () => {});
  if (terminate) w.once('online', () => setTimeout(() => void w.terminate(), 20));
  return new Promise((resolve) => w.once('exit', () => resolve({ end: seen[0]!, key: seen[1]!, threadId })));
}

describe('the thread', () => {
  it('the main thread has key 1 and registers no exit listener', () => {
    expect(threadKey()).toBe(1);
    const before = process.listenerCount('exit');
    onThreadExit(() => {})();
    expect(process.listenerCount('exit')).toBe(before); // the process is ending: nothing to hand over
  });

  for (const [how, end] of [['natural', 1], ['exit', 1], ['throw', 2], ['handled', 1]] as const) {
    it(`a worker that ends (${how}) is seen as ${end === 2 ? 'crashed' : 'ending normally'}, with its parent's key`, async () => {
      const r = await run(how);
      expect(r.end).toBe(end);
      expect(r.key).toBe(r.threadId + 1);
    });
  }

  it("Node's main thread may block (a browser window's may not: the allocator's Chromium test)", () => {
    expect(agentCanBlock()).toBe(true);
  });

  it('a terminated worker runs nothing', async () => {
    expect((await run('wait', true)).end).toBe(0);
  });
});
