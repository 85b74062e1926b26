// The two agents of the forced ABA interleaving, driven through control words (Int32 over workerData.control):
//   reader:  reads class c's head X and X's link, sets word 0, sleeps until word 1 is set, then tries its
//            CAS; if it fails it pops again the ordinary way (pool.malloc). Posts { casSucceeded, got }.
//   mutator: waits for word 0, pops X, pops Y, pushes X back (malloc, malloc, free), posts { x, y }, sets word 1.
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace } from '@paddock/platform';
import { CLASS_COUNT, FreeLists, GlobalPool, HEAD_BYTES, POOL_ROOT, classSize } from '@paddock/pool-global';

const { handle, control, role, c } = workerData;
const space = openAddressSpace(handle);
const pool = GlobalPool.open(space);
const words = new Int32Array(control);

if (role === 'reader') {
  const lists = new FreeLists(space.buffer, space.root(POOL_ROOT) + HEAD_BYTES, CLASS_COUNT);
  const old = lists.load(c);
  const x = lists.first(old);
  space.covers(x + 8);
  const next = space.u32[x >>> 2];
  Atomics.store(words, 0, 1);
  Atomics.notify(words, 0);
  while (Atomics.load(words, 1) === 0) Atomics.wait(words, 1, 0);
  const casSucceeded = lists.casPop(c, old, next);
  if (casSucceeded) space.i32[(x >>> 2) + 1] = 0; // as malloc does for the block it pops
  parentPort.postMessage({ casSucceeded, first: x, next, got: casSucceeded ? x : pool.malloc(classSize(c)) });
} else {
  while (Atomics.load(words, 0) === 0) Atomics.wait(words, 0, 0);
  const x = pool.malloc(classSize(c));
  const y = pool.malloc(classSize(c));
  pool.free(x);
  parentPort.postMessage({ x, y });
  Atomics.store(words, 1, 1);
  Atomics.notify(words, 1);
}
