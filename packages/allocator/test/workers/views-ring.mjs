// One agent of the views ring (typed-views.test.ts): makes views and strings, sends each to the next worker (through
// the parent), and reads, checks and frees what the previous one made: its views arrive as new typed arrays over the
// heap's memory (structured-cloned), which viewAs, pointerOf and free must take.
import { parentPort, workerData } from 'node:worker_threads';
import { BACKEND, attachHeap } from '@paddock/allocator';

const { handle, index, rounds } = workerData;
const heap = attachHeap(handle);
const received = [];
const errors = [];
const text = (from, r) => `agent ${from}, round ${r}: é€😀 ${'x'.repeat(r % 50)}`;
const valueOf = (from, r, i) => from * 1e6 + r * 1000 + i;
let last = false;

function check(m) {
  const { from, r, view, str } = m;
  const ptr = heap.pointerOf(view);
  if (ptr !== view.byteOffset) errors.push(`${from}:${r} pointerOf ${ptr}`);
  const again = heap.viewAs(Float64Array, ptr, view.length);
  for (let i = 0; i < view.length; i++) {
    if (view[i] !== valueOf(from, r, i) || again[i] !== view[i]) {
      errors.push(`${from}:${r} element ${i} is ${view[i]}`);
      break;
    }
  }
  if (heap.readString(str) !== text(from, r)) errors.push(`${from}:${r} string ${heap.readString(str)}`);
  heap.free(r % 2 === 0 ? view : view.byteOffset);
  heap.free(str);
  received.push(`${from}:${r}`);
}

function finish() {
  if (!last || received.length < rounds) return;
  parentPort.postMessage({ kind: 'done', received, errors, backend: BACKEND });
  parentPort.close();
}

parentPort.on('message', (m) => {
  if (m.kind === 'go') {
    for (let r = 0; r < rounds; r++) {
      // Every 60th a large block: the buffer grows while views made before are in flight.
      const length = r % 60 === 59 ? (2 << 20) / 8 : 1 + ((r * 37) % 600);
      const view = r % 3 === 0 ? heap.callocAs(Float64Array, length) : heap.mallocAs(Float64Array, length);
      for (let i = 0; i < length; i++) view[i] = valueOf(index, r, i);
      parentPort.postMessage({ kind: 'item', from: index, r, view, str: heap.mallocString(text(index, r)) });
    }
    parentPort.postMessage({ kind: 'sent' });
  } else if (m.kind === 'item') {
    try {
      check(m);
    } catch (err) {
      errors.push(`${m.from}:${m.r} ${err.stack}`);
      received.push(`${m.from}:${m.r}`);
    }
  } else if (m.kind === 'last') {
    last = true;
  }
  finish();
});
