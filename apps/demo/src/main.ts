/**
 * `pnpm start`: Paddock's demo. The main thread and two workers share one address space and touch
 * 256 MiB of it; then one worker decommits the range and the demo shows what the operating system says
 * about resident memory before and after, and whether native page return is active. (When the allocator
 * layers land, this grows into the allocator demo.)
 */
import { Worker } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import { createAddressSpace, formatBytes, type AddressSpaceHandle } from '@paddock/platform';

const MiB = 1 << 20;
const SIZE = 256 * MiB;

/** Resident memory as the OS reports it (/proc/self/statm on Linux), else Node's figure. */
function residentBytes(): number {
  try {
    const pages = Number(readFileSync('/proc/self/statm', 'utf8').split(' ')[1]);
    if (Number.isFinite(pages)) return pages * 4096;
  } catch {
    // not Linux
  }
  return process.memoryUsage.rss();
}

const mib = (n: number) => `${(n / MiB).toFixed(1).padStart(7)} MiB`;

function runWorker(data: { handle: AddressSpaceHandle; kind: string; addr: number; size: number; value: number }) {
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    const w = new Worker(new URL('./worker.js', import.meta.url), { workerData: data });
    w.once('message', resolve);
    w.once('error', reject);
  });
}

async function main(): Promise<void> {
  const space = createAddressSpace({ maxBytes: 1 << 30 });
  console.log(`Paddock demo: one address space of ${formatBytes(space.maxBytes)} bytes, shared by the main thread and 2 workers`);
  console.log(`native page return: ${space.pageReturn === 'native' ? 'active (madvise MADV_DONTNEED)' : 'not available: decommit is bookkeeping only'}`);
  const addr = space.reserve(SIZE, SIZE);
  space.commit(addr, SIZE);
  const rows: [string, number][] = [['start', residentBytes()]];

  const quarter = SIZE / 4;
  process.stderr.write('touching 256 MiB: main thread...');
  space.u8.fill(0x11, addr, addr + quarter);
  process.stderr.write(' worker A, worker B...');
  await Promise.all([
    runWorker({ handle: space.handle, kind: 'touch', addr: addr + quarter, size: 2 * quarter, value: 0x22 }),
    runWorker({ handle: space.handle, kind: 'touch', addr: addr + 3 * quarter, size: quarter, value: 0x33 }),
  ]);
  process.stderr.write(' done\n');
  rows.push(['after touching 256 MiB', residentBytes()]);

  const r = await runWorker({ handle: space.handle, kind: 'decommit', addr, size: SIZE, value: 0 });
  rows.push([`after worker ${String(r.agentId)} decommits it`, residentBytes()]);

  console.log('\nresident memory (from the OS)');
  for (const [label, bytes] of rows) console.log(`  ${label.padEnd(32)} ${mib(bytes)}`);
  const fell = rows[1]![1] - rows[2]![1];
  console.log(`\nreturned to the OS: ${mib(Number(r.returned))} by the decommitting worker; resident fell by ${mib(fell)}`);
  let nonzero = 0;
  for (let p = addr; p < addr + SIZE; p += 4096) if (space.u8[p] !== 0) nonzero++;
  console.log(`pages that still hold data, read by the main thread: ${nonzero} of ${SIZE / 4096}`);
  console.log(`committed bytes in the space: ${mib(space.committedBytes)} (the header only)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
