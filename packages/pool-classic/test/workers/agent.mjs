// A pool agent in a worker, driven by messages: { id, op, args } in, { id, ok, value | error } out.
// It opens the address space and the classic pool from workerData.handle, then serves until terminated.
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace } from '@paddock/platform';
import { ClassicPool } from '@paddock/pool-classic';
import { checkPattern, fillPattern } from './pattern.mjs';

const space = openAddressSpace(workerData.handle);
const pool = ClassicPool.open(space);

const ops = {
  agentId: () => space.agentId,
  malloc: (size) => pool.malloc(size),
  mallocMany: (size, n) => Array.from({ length: n }, () => pool.malloc(size)),
  free: (p) => pool.free(p),
  freeMany: (ptrs) => {
    for (const p of ptrs) pool.free(p);
  },
  usableSize: (p) => pool.usableSize(p),
  fill: (p, size, seed) => {
    space.covers(p + size);
    fillPattern(space.u8, p, size, seed);
  },
  /** Checks each [p, size, seed] block's pattern, then frees it; throws at the first damaged block. */
  verifyAndFree: (blocks) => {
    for (const [p, size, seed] of blocks) {
      space.covers(p + size);
      const bad = checkPattern(space.u8, p, size, seed);
      if (bad >= 0) throw new Error(`block ${p} (${size} bytes) damaged at offset ${bad}`);
      pool.free(p);
    }
    return blocks.length;
  },
  stats: () => pool.stats(),
  check: () => pool.check(),
  flush: () => pool.flush(),
  detach: () => pool.detach(),
};

parentPort.on('message', ({ id, op, args }) => {
  try {
    const value = ops[op](...args);
    parentPort.postMessage({ id, ok: true, value: value ?? null });
  } catch (err) {
    parentPort.postMessage({ id, ok: false, error: { name: err?.name, code: err?.code, message: String(err?.message ?? err) } });
  }
});
