// Agents that leave in a real browser (headless Chromium): a Web Worker has no exit event, so `watch` learns
// through each agent's Web Lock that a worker was terminated or closed itself, and reaps its agent.
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { browserAvailable, bundle, runPage, serve } from '../../../tools/test-utils/browser.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe.skipIf(!browserAvailable())('in Chromium', () => {
  it('watch reaps a terminated Web Worker and one that closed itself; their blocks stay live until freed', async () => {
    const dir = await bundle({ page: here('./browser/page.mjs'), agent: here('./browser/agent.mjs') });
    temps.push(dir);
    const server = await serve(dir);
    try {
      const r = await runPage<{
        error?: string;
        watching: boolean[];
        refused: string;
        slots: number[];
        reapedSlots: number[];
        intact: boolean;
        liveBytes: number;
        arenas: number;
      }>(server.url, 30_000);
      expect(r.error).toBeUndefined();
      expect(r.watching).toEqual([true, true]);
      expect(r.refused).toBe('RangeError'); // releaseLive needs a worker_threads Worker
      expect(r.reapedSlots).toEqual(expect.arrayContaining(r.slots));
      expect(r.intact).toBe(true);
      expect(r.liveBytes).toBe(0);
      expect(r.arenas).toBe(0);
    } finally {
      await server.close();
    }
  }, 60_000);
});
