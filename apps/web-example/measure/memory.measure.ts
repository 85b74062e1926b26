// What a browser gives back, measured (`pnpm --filter @paddock/web-example measure`): the example page, built
// with esbuild once per backend (through its export condition), runs in headless Chromium with `?measure`. At each
// of its steps (before the heap, holding the messages, after free + idle, after dropping the heap) the page takes
// `performance.measureUserAgentSpecificMemory()` and the driver takes Chromium's own figures: the resident memory
// of the page's renderer process from /proc (the page and its Web Workers all run in it) and the page's
// `Performance.getMetrics` (JS heap). Before the last step the driver runs a garbage collection, which is what
// frees a SharedArrayBuffer once nothing refers to it. Prints one table per backend.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserAvailable, runPage, serve } from '../../../tools/test-utils/browser.js';
import { BACKENDS } from '../../../tools/use-flags.mjs';
import { buildWithEsbuild, readUse } from '../scripts/bundlers.mjs';

const MIB = Number(process.env.PADDOCK_MEASURE_MIB ?? 32);

interface DriverSample {
  /** Resident bytes of each renderer process this run's Chromium has, by pid. */
  rendererRss: Record<number, number>;
  jsHeapUsedBytes: number | null;
}
interface Report {
  error?: string;
  backend: string;
  bytes: number;
  idleMs: number;
  samples: Array<{ step: string; bufferBytes: number | null; committedBytes: number | null; browserBytes: number | null; browserAgents: number[] | null; browserMs: number | null; driver: DriverSample }>;
}

/** Pids of the renderer processes under this process (the Chromium this run started), with their resident bytes. */
function renderers(): Array<{ pid: number; rss: number }> {
  const parent = new Map<number, number>();
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('--type=renderer')) found.push(Number(name));
    } catch {
      // a process that ended while we looked
    }
  }
  const ours = (pid: number) => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  return found.filter(ours).flatMap((pid) => {
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return kb ? [{ pid, rss: Number(kb[1]) * 1024 }] : [];
    } catch {
      return [];
    }
  });
}

const mib = (n: number | null | undefined) => (n === null || n === undefined ? '-' : (n / 1048576).toFixed(1));

describe.skipIf(!browserAvailable())('memory in Chromium', () => {
  it.each(BACKENDS)('%s: before, holding, after free + idle, after dropping the heap', async (backend) => {
    const use = readUse([`use=${backend}`], {});
    const dir = mkdtempSync(join(tmpdir(), 'paddock-web-measure-'));
    const server = await serve((await buildWithEsbuild(use, dir)).outDir);
    try {
      const r = await runPage<Report>(`${server.url}?measure&mib=${MIB}`, 120_000, {
        // measureUserAgentSpecificMemory waits for the next garbage collection unless told to measure at once.
        args: ['--enable-blink-features=ForceEagerMeasureMemory'],
        before: async (page) => {
          const cdp = await page.context().newCDPSession(page);
          await cdp.send('Performance.enable');
          await page.exposeFunction('__sample', async (step: string): Promise<DriverSample> => {
            if (step === 'dropped') {
              for (let i = 0; i < 3; i++) await cdp.send('HeapProfiler.collectGarbage');
              await new Promise((res) => setTimeout(res, 500));
            }
            const { metrics } = await cdp.send('Performance.getMetrics');
            return {
              rendererRss: Object.fromEntries(renderers().map((x) => [x.pid, x.rss])),
              jsHeapUsedBytes: metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? null,
            };
          });
        },
      });
      expect(r.error).toBeUndefined();
      // Chromium runs several renderers here (the start page's, spares); the page and its workers run in the one
      // whose memory rose while the page held its messages.
      const [before, holding] = r.samples;
      const pids = Object.keys(holding!.driver.rendererRss).map(Number);
      const rise = (pid: number) => holding!.driver.rendererRss[pid]! - (before!.driver.rendererRss[pid] ?? 0);
      const pid = pids.reduce((a, b) => (rise(b) > rise(a) ? b : a));
      const lines = [
        `backend ${r.backend}, ${mib(r.bytes)} MiB of messages (2 producers x ${MIB} MiB), idle step ${r.idleMs} ms, ${pids.length} renderers; MiB:`,
        '| step | buffer | committed | measureUserAgentSpecificMemory: total (per agent; time it took) | page renderer RSS | JS heap used |',
        '|---|---|---|---|---|---|',
        ...r.samples.map(
          (s) =>
            `| ${s.step} | ${mib(s.bufferBytes)} | ${mib(s.committedBytes)} | ${mib(s.browserBytes)} (${(s.browserAgents ?? []).map(mib).join(' + ')}; ${s.browserMs ?? '-'} ms) | ${mib(s.driver.rendererRss[pid])} | ${mib(s.driver.jsHeapUsedBytes)} |`,
        ),
      ];
      console.log(lines.join('\n'));
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
