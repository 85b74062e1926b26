// One of N workers in a ring. Each round it allocates a batch of blocks (mostly small, some large),
// writes each block's pattern, sends the batch to the next worker, then receives the previous worker's
// batch, checks every pattern and frees every block. Reports the ids it received and freed.
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace } from '@paddock/platform';
import { ClassicPool } from '@paddock/pool-classic';
import { checkPattern, fillPattern, rng } from './pattern.mjs';

const { handle, index, rounds, batch, seed, send, receive } = workerData;
const space = openAddressSpace(handle);
const pool = ClassicPool.open(space);
const random = rng(seed + index * 7919);

const inbox = [];
let wake = null;
receive.on('message', (m) => {
  inbox.push(m);
  if (wake) wake();
});
const next = async () => {
  while (inbox.length === 0) await new Promise((r) => (wake = r));
  wake = null;
  return inbox.shift();
};

function pickSize() {
  const r = random() % 1000;
  if (r < 700) return random() % 257;
  if (r < 950) return 257 + (random() % 16_000);
  if (r < 990) return 16_384 + (random() % (1 << 20));
  return (1 << 20) + 1 + (random() % (2 << 20));
}

const received = [];
let damaged = 0;
for (let r = 0; r < rounds; r++) {
  const out = [];
  for (let k = 0; k < batch; k++) {
    const size = pickSize();
    const p = pool.malloc(size);
    const id = (index << 24) | (r << 8) | k; // unique per (worker, round, k): rounds < 65536, batch < 256
    space.covers(p + size);
    fillPattern(space.u8, p, size, id);
    out.push([p, size, id]);
  }
  send.postMessage(out);
  const got = await next();
  for (const [p, size, id] of got) {
    space.covers(p + size);
    if (checkPattern(space.u8, p, size, id) >= 0) damaged++;
    pool.free(p);
    received.push(id);
  }
}
pool.check();
const stats = pool.stats();
receive.close();
parentPort.postMessage({ received, damaged, agentId: space.agentId, live: stats.liveBytes });
