// The page of the browser lifecycle test: two Web Workers hold blocks of one heap; `watch` is called on both;
// one is terminated, the other closes itself. Each must be reaped through its agent lock, after which the
// page frees what they held and every arena goes back.
import { createHeap } from '../../dist/index.js';

const step = (s) => {
  window.__step = s;
};

async function main() {
  step('create');
  const heap = createHeap({ maxBytes: 256 << 20 });
  const start = () => {
    const w = new Worker('/agent.js', { type: 'module' });
    const reply = new Promise((resolve, reject) => {
      w.onmessage = (e) => resolve(e.data);
      w.onerror = (e) => reject(new Error(`worker: ${e.message}`));
    });
    w.postMessage({ handle: heap.handle, count: 2000 });
    return { w, reply };
  };
  const a = start();
  const b = start();
  step('attach');
  const [ra, rb] = await Promise.all([a.reply, b.reply]);
  const watching = [heap.watch(a.w), heap.watch(b.w)];
  let refused = '';
  try {
    heap.watch(a.w, { releaseLive: true });
  } catch (err) {
    refused = err.name;
  }
  step('depart');
  b.w.postMessage('close');
  a.w.terminate();
  const deadline = performance.now() + 10_000;
  const adopted = () => heap.stats().adoptedSlots;
  while (!(adopted().includes(ra.slot) && adopted().includes(rb.slot)) && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const reapedSlots = adopted();
  step('free');
  let intact = true;
  for (const r of [ra, rb]) {
    r.blocks.forEach((p, i) => {
      if (heap.u32[p >>> 2] !== i) intact = false;
      heap.free(p);
    });
  }
  heap.flushCache();
  heap.flush();
  heap.check();
  window.__done = {
    watching,
    refused,
    slots: [ra.slot, rb.slot],
    reapedSlots,
    intact,
    liveBytes: heap.stats().liveBytes,
    arenas: heap.engine.regions.carvedArenas().length,
  };
}

main().catch((err) => {
  window.__done = { error: String(err && err.stack ? err.stack : err) };
});
