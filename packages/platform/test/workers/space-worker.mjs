// A worker that opens an address space from its handle and runs one job for the platform tests.
import { parentPort, workerData } from 'node:worker_threads';
import { openAddressSpace } from '@paddock/platform';

const { handle, job, start } = workerData;
const space = openAddressSpace(handle);
const gate = start ? new Int32Array(start) : null;

function waitForGate() {
  if (!gate) return;
  Atomics.add(gate, 1, 1);
  while (Atomics.load(gate, 0) === 0) Atomics.wait(gate, 0, 0, 5);
}

switch (job.kind) {
  case 'reserve': {
    waitForGate();
    const got = [];
    for (let i = 0; i < job.count; i++) got.push(space.reserve(job.size, job.align));
    parentPort.postMessage({ agentId: space.agentId, got });
    break;
  }
  case 'count-nonzero-pages': {
    // Reads one byte in every 4 KiB page and a full sweep of the first and last page.
    space.covers(job.addr + job.size);
    const u8 = space.u8;
    let nonzero = 0;
    for (let p = job.addr; p < job.addr + job.size; p += 4096) if (u8[p] !== 0 || u8[p + 4095] !== 0) nonzero++;
    parentPort.postMessage({ nonzero, pageReturn: space.pageReturn });
    break;
  }
  case 'grow-and-write': {
    // Commits a range far beyond the creator's views and writes a marker there.
    const before = space.viewBytes;
    space.commit(job.addr, job.size);
    space.i32[(job.addr + job.size - 4) >>> 2] = job.marker;
    parentPort.postMessage({ before, after: space.viewBytes });
    break;
  }
  case 'extend-churn': {
    // Reserves, extends and releases small ranges in a crowded space, racing the other workers for the same
    // granules. Every granule it gets (by reserve or extend) it marks in a shared owner table with a CAS from 0:
    // a CAS that finds another owner means a granule was handed out twice. Everything is released at the end.
    const owners = new Int32Array(job.owners);
    const G = 65536;
    const me = space.agentId;
    const held = []; // [addr, size]
    let seed = 0x9e3779b1 ^ me;
    const rand = (n) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    let collisions = 0;
    let extended = 0;
    let refused = 0;
    let pastEnd = 0;
    const take = (from, to) => {
      for (let g = from / G; g < to / G; g++) if (Atomics.compareExchange(owners, g, 0, me) !== 0) collisions++;
    };
    const give = (addr, size) => {
      for (let g = addr / G; g < (addr + size) / G; g++) if (Atomics.compareExchange(owners, g, me, 0) !== me) collisions++;
      space.release(addr, size);
    };
    waitForGate();
    for (let r = 0; r < job.rounds; r++) {
      const op = rand(10);
      if (op < 4 && held.length < job.maxHeld) {
        const size = (1 + rand(3)) * G;
        try {
          const addr = space.reserve(size);
          take(addr, addr + size);
          held.push([addr, size]);
        } catch (e) {
          if (e.code !== 'OUT_OF_MEMORY') throw e;
        }
      } else if (op < 8 && held.length > 0) {
        const k = rand(held.length);
        const [addr, size] = held[k];
        const newSize = size + (1 + rand(3)) * G;
        if (space.extend(addr, size, newSize)) {
          take(addr + size, addr + newSize);
          held[k][1] = newSize;
          extended++;
        } else if (addr + newSize > space.maxBytes) {
          pastEnd++;
        } else {
          refused++;
        }
      } else if (held.length > 0) {
        const k = rand(held.length);
        const [addr, size] = held[k];
        held[k] = held[held.length - 1];
        held.pop();
        give(addr, size);
      }
    }
    for (const [addr, size] of held) give(addr, size);
    parentPort.postMessage({ collisions, extended, refused, pastEnd });
    break;
  }
  default:
    throw new Error(`unknown job ${job.kind}`);
}
