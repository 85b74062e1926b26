// One side of a ping-pong through heap.wait: word 0 of `turns` counts the turns taken; this side takes the even
// turns (side 0) or the odd ones (side 1), each time sending a fresh block across in word 1 and freeing the one it
// was sent. It waits for its turn with heap.wait alone (no spin of its own), so every wait either watches the word
// change or sleeps until notified. Reports the turns it took, the results of its waits, and any turn out of order.
import { parentPort, workerData } from 'node:worker_threads';
import { attachHeap } from '@paddock/allocator';

const { handle, turns: turnsBuffer, side, rounds } = workerData;
const heap = attachHeap(handle);
const t = new Int32Array(turnsBuffer);
const results = { ok: 0, 'not-equal': 0, 'timed-out': 0 };
let bad = 0;
let taken = 0;
for (let turn = side; turn < 2 * rounds; turn += 2) {
  for (;;) {
    const seen = Atomics.load(t, 0);
    if (seen === turn) break;
    if (seen > turn) {
      bad++;
      break;
    }
    results[heap.wait(t, 0, seen, 500)]++;
  }
  const sent = Atomics.load(t, 1);
  if (sent !== 0) {
    if (heap.i32[sent >>> 2] !== turn - 1) bad++;
    heap.free(sent);
  }
  const p = heap.malloc(64);
  heap.i32[p >>> 2] = turn;
  Atomics.store(t, 1, p);
  Atomics.store(t, 0, turn + 1);
  Atomics.notify(t, 0);
  taken++;
}
parentPort.postMessage({ taken, bad, results });
