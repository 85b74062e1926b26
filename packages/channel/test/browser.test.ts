// The channel in a real browser (headless Chromium, skipped where there is none): a window's main thread may not
// block, so send, recv and their batch and iterator forms are refused with CANNOT_BLOCK there and queue nothing;
// module Web Workers block in sendBatch while the page receives with `for await`.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { browserAvailable, bundle, runPage, serve } from '../../../tools/test-utils/browser.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface Report {
  error?: string;
  refused: string[];
  queuedAfterRefusals: number;
  received: number;
  outOfOrder: number;
  last: number[];
  done: boolean;
}

interface KillReport {
  error?: string;
  received: number;
  outOfOrder: number;
  firstFromVictim: boolean;
  recoveredSends: number;
  recordsCleaned: number;
  done: boolean;
}

describe.skipIf(!browserAvailable())('in Chromium', () => {
  it('the main thread is refused the blocking calls; two Web Workers send 1000 blocks, the page takes each once, in order', async () => {
    const dir = await bundle({ page: here('./browser/page.mjs'), agent: here('./browser/agent.mjs') });
    temps.push(dir);
    const server = await serve(dir);
    try {
      const r = await runPage<Report>(server.url, 60_000);
      expect(r.error).toBeUndefined();
      expect(r.refused).toEqual(['CANNOT_BLOCK', 'CANNOT_BLOCK', 'CANNOT_BLOCK', 'CANNOT_BLOCK', 'CANNOT_BLOCK']);
      expect(r.queuedAfterRefusals).toBe(0);
      expect(r.received).toBe(1000);
      expect(r.outOfOrder).toBe(0);
      expect(r.last).toEqual([499, 499]);
      expect(r.done).toBe(true);
    } finally {
      await server.close();
    }
  }, 90_000);

  it('a Web Worker terminated after the claim of its send: the page finds its Web Lock gone, delivers its block and goes on', async () => {
    const dir = await bundle({ page: here('./browser/kill-page.mjs'), 'kill-agent': here('./browser/kill-agent.mjs') });
    temps.push(dir);
    const server = await serve(dir);
    try {
      const r = await runPage<KillReport>(server.url, 60_000);
      expect(r.error).toBeUndefined();
      expect(r.received).toBe(101);
      expect(r.firstFromVictim).toBe(true);
      expect(r.outOfOrder).toBe(0);
      expect(r.recoveredSends).toBe(1);
      expect(r.recordsCleaned).toBe(1);
      expect(r.done).toBe(true);
    } finally {
      await server.close();
    }
  }, 90_000);
});
