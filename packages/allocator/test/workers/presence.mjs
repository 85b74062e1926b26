// Workers for the tests of reaping a live agent: each attaches, reports its agent id, and does what it is told.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const heap = attachHeap(workerData.handle);
const held = [];
parentPort.postMessage({ kind: 'attached', agentId: heap.agentId });

function work(rounds) {
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < 64; i++) {
      const p = heap.malloc(32 << (i % 10));
      heap.u32[p >>> 2] = i;
      held.push(p);
    }
    while (held.length > 32) heap.free(held.pop());
  }
  heap.check();
}

parentPort.on('message', (m) => {
  try {
    if (m.kind === 'work') {
      work(m.rounds);
      parentPort.postMessage({ kind: 'worked', live: heap.stats().liveBytes });
    } else if (m.kind === 'busy') {
      // Runs without coming back to the event loop for `ms`: its presence wait cannot be answered meanwhile.
      parentPort.postMessage({ kind: 'busy' });
      const end = Date.now() + m.ms;
      while (Date.now() < end) work(1);
      parentPort.postMessage({ kind: 'worked', live: heap.stats().liveBytes });
    } else if (m.kind === 'reap-others') {
      // Tries to reap each of the other agents `times` times: every one of them is alive.
      const codes = {};
      for (let t = 0; t < m.times; t++) {
        for (const id of m.ids) {
          if (id === heap.agentId) continue;
          try {
            heap.reap(id);
            codes.reaped = (codes.reaped ?? 0) + 1;
          } catch (err) {
            const code = err.code ?? err.name;
            codes[code] = (codes[code] ?? 0) + 1;
          }
        }
        work(1);
      }
      parentPort.postMessage({ kind: 'reaped-others', codes });
    } else if (m.kind === 'reap') {
      try {
        const report = heap.reap(m.id);
        parentPort.postMessage({ kind: 'reap', ok: true, adopted: report.arenasAdopted });
      } catch (err) {
        parentPort.postMessage({ kind: 'reap', ok: false, code: err.code ?? err.name });
      }
    }
  } catch (err) {
    parentPort.postMessage({ kind: 'failed', error: `${err?.name}: ${err?.message}` });
  }
});
