// The page of the browser wait test: on a window's main thread `heap.wait` is refused with CANNOT_BLOCK (and
// sends nothing home first); `heap.waitAsync` flushes the chains before it waits and has drained what arrived
// by the time it resolves; a module Web Worker blocks in `heap.wait` as it may; the idle tick returns memory on
// the main thread and in the worker.
import { createHeap } from '../../dist/index.js';

const step = (s) => {
  window.__step = s;
};

async function main() {
  step('create');
  const heap = createHeap({ maxBytes: 256 << 20 });
  const bell = new Int32Array(new SharedArrayBuffer(16)); // [0] main's doorbell, [1] the worker's
  const worker = new Worker('/wait-agent.js', { type: 'module' });
  const messages = [];
  let notify = null;
  worker.onmessage = (e) => {
    messages.push(e.data);
    if (notify) notify();
  };
  worker.onerror = (e) => {
    window.__done = { error: `worker: ${e.message}` };
  };
  const nextMessage = async () => {
    while (messages.length === 0) await new Promise((r) => (notify = r));
    notify = null;
    return messages.shift();
  };
  worker.postMessage({ handle: heap.handle, bell: bell.buffer });
  // 4,010 blocks of 256 B the worker allocated: more than this agent's cache (512 of the class) and the heap's
  // exchange (2,048) take, and not a whole number of 32-block batches, so that some wait in a chain.
  const { blocks } = await nextMessage();

  step('wait refused');
  for (const p of blocks) heap.free(p); // the cache and the heap's exchange take some, the rest wait in the chain for the worker
  const chainedBefore = heap.stats().pendingChainObjects;
  let refused = null;
  try {
    heap.wait(bell, 0, 0, 10);
  } catch (err) {
    refused = { name: err.name, code: err.code, message: err.message };
  }
  const chainedAfterRefusal = heap.stats().pendingChainObjects;

  step('waitAsync flushes');
  const ownBlocks = Array.from({ length: 300 }, () => heap.malloc(4096));
  const waiting = heap.waitAsync(bell, 0, 0, 5000);
  const chainedWhileWaiting = heap.stats().pendingChainObjects;
  worker.postMessage({ free: ownBlocks }); // the worker frees them, flushes, then rings main's bell
  const woke = await waiting;
  const drainedAfterWake = heap.drain(); // 0: the waitAsync drained them before it resolved
  const liveAfterWake = heap.stats().liveBytes; // what came home is on the cache stack while it has room
  const cachedAfterWake = heap.stats().cacheBlocks[7] * 4096; // its own 4 KiB blocks there

  step('worker idle');
  worker.postMessage({ idle: true });
  const workerIdle = await nextMessage();

  step('main idle');
  for (let i = 0; i < 200; i++) heap.free(heap.malloc(64)); // the cache holds what the main thread freed
  const cachedBeforeIdle = heap.stats().cacheBytes;
  heap.startIdle();
  const deadline = performance.now() + 5000;
  while (heap.stats().cacheBytes !== 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const cachedAfterIdle = heap.stats().cacheBytes;
  heap.stopIdle();
  heap.flushCache();
  heap.flush();
  heap.check();
  window.__done = {
    refused,
    chainedBefore,
    chainedAfterRefusal,
    chainedWhileWaiting,
    woke,
    drainedAfterWake,
    liveAfterWake,
    cachedAfterWake,
    workerIdle,
    cachedBeforeIdle,
    cachedAfterIdle,
  };
}

main().catch((err) => {
  window.__done = { error: String(err && err.stack ? err.stack : err) };
});
