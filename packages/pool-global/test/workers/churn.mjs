// A churning agent: mallocs and frees random sizes (mostly small classes, now and then a large block) for
// workerData.ops operations (forever when 0), keeping the ledger: ledger[p >> 5] is the agent's id (index + 1)
// while it holds the block at p. Taking a block whose ledger entry is not 0 (handed out twice), or finding a
// held block's stamp or ledger entry changed, is counted in control word FAULTS. Control word 8 + index
// counts operations done (the main thread waits on it before terminating an agent). At the end it frees
// every block it holds and posts its fault count.
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace } from '@paddock/platform';
import { GlobalPool } from '@paddock/pool-global';
import { mulberry32 } from '../../../../tools/test-utils/prng.mjs';
import { startTogether } from '../../../../tools/test-utils/start.mjs';

const FAULTS = 0;
const { handle, ledger: ledgerBuffer, control, index, count, sync, ops, seed, hold } = workerData;
const space = openAddressSpace(handle);
const pool = GlobalPool.open(space);
const ledger = new Int32Array(ledgerBuffer);
const words = new Int32Array(control);
const id = index + 1;
const next = mulberry32(seed);
const held = [];

function size() {
  const r = next();
  if (r % 1000 === 0) return (1 << 20) + (r % (3 << 20)); // large
  return (r >>> 10) % (32 << ((r >>> 4) % 12)); // 0 .. 64 KiB, every class up to it
}

function take() {
  const p = pool.malloc(size());
  if (Atomics.compareExchange(ledger, p >>> 5, 0, id) !== 0) Atomics.add(words, FAULTS, 1);
  space.covers(p + 8);
  space.i32[(p >>> 2) + 1] = p ^ id; // a stamp in the word a free block keeps its mark in
  held.push(p);
}

function give(k) {
  const p = held[k];
  held[k] = held[held.length - 1];
  held.pop();
  if (space.i32[(p >>> 2) + 1] !== (p ^ id)) Atomics.add(words, FAULTS, 1);
  if (Atomics.compareExchange(ledger, p >>> 5, id, 0) !== id) Atomics.add(words, FAULTS, 1);
  pool.free(p);
}

startTogether(sync, count);
for (let i = 0; ops === 0 || i < ops; i++) {
  if (held.length < hold && (held.length === 0 || next() % 2 === 0)) take();
  else give(next() % held.length);
  Atomics.add(words, 8 + index, 1);
}
while (held.length > 0) give(held.length - 1);
parentPort.postMessage({ faults: Atomics.load(words, FAULTS) });
