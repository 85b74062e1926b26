// The inspector in real Chromium (Debian's, through the browser test harness): the page draws the in-page
// scenario and the map it draws agrees, cell by cell, with the snapshot it drew; a producer killed mid-run is
// reaped, which shows on the timeline (a mark) and on the map (its arenas outlined as taken over by the page's
// agent); serveInspector serves the page and streams a Node heap's snapshots, which the page draws.
import { afterAll, describe, expect, it } from 'vitest';
import { createHeap, UNIT_STATE_NAMES } from '@paddock/allocator';
import { browserAvailable, runPage } from '../../../tools/test-utils/browser.js';
import { serveInspector, serveInspectorPage, type PageServer } from '../src/node/index.js';
import type { Report } from '../src/web/steps.js';

const servers: PageServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

/** Cells per state name, counted from a snapshot's unit map. */
function countStates(unitState: number[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(UNIT_STATE_NAMES.map((n) => [n, 0]));
  for (const v of unitState) counts[UNIT_STATE_NAMES[v]!]!++;
  return counts;
}

/** The map drew exactly the snapshot it reports: every cell in its state, every arena with its owner. */
function expectMapAgrees(r: Report): void {
  expect(r.drawn).not.toBeNull();
  const drawn = r.drawn!;
  expect(drawn.takenAt).toBe(r.snapshot.takenAt);
  expect(drawn.cells).toBe(r.snapshot.unitState.length);
  expect(drawn.byState).toEqual(countStates(r.snapshot.unitState));
  expect(drawn.arenas).toEqual(r.snapshot.arenas.map((a) => ({ base: a.base, owner: a.owner, carver: a.carver, takenOver: a.owner !== a.carver })));
}

describe.skipIf(!browserAvailable())('the inspector in Chromium', () => {
  it('draws the in-page scenario as its snapshots say; a killed producer is reaped on the timeline and the map', async () => {
    const server = await serveInspectorPage();
    servers.push(server);
    // Run, hover a slab, pause (the consumer keeps the killed producer's messages: its arenas stay), kill.
    const steps = 'start,wait:1500,hover:slab,pause,frames:2,kill,until:takeover,frames:2,owner,done';
    const r = await runPage<Report & { error?: string }>(`${server.url}?steps=${steps}`, 40_000);
    expect(r.error).toBeUndefined();
    expect(r.source).toBe('page');
    expect(r.snapshot.backend).toBe('pool_arena');
    expect(r.snapshot.liveBytes).toBeGreaterThan(0);
    expectMapAgrees(r);
    expect(r.drawn!.colouring).toBe('owner');
    expect(r.drawn!.byState.slab).toBeGreaterThan(0);
    expect(r.hovered.slab!.found).toBe(true);
    expect(r.hovered.slab!.text).toMatch(/state: slab\nclass \d+: .* objects\nlive \d+ \/ \d+ objects · span \d+ unit/);
    expect(r.hovered.slab!.text).toMatch(/owner: slot \d+ \(live\)/);
    // The timeline: the kill (an action) and then the takeover the snapshots showed.
    const kill = r.marks.find((m) => m.kind === 'action' && m.label.startsWith('kill producer 1'));
    const takeover = r.marks.find((m) => m.kind === 'heap' && /^slot \d+ taken over by \d+$/.test(m.label));
    expect(kill).toBeDefined();
    expect(takeover).toBeDefined();
    expect(takeover!.t).toBeGreaterThanOrEqual(kill!.t - 100);
    // The map: the dead producer's slot is shown taken over, and its arenas are drawn as taken over by the adopter.
    const dead = r.bars!.owners.find((o) => o.state === 'adopted')!;
    expect(takeover!.label).toBe(`slot ${dead.slot} taken over by ${dead.adoptedBy}`);
    const moved = r.drawn!.arenas.filter((a) => a.carver === dead.slot);
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.every((a) => a.takenOver && a.owner === dead.adoptedBy)).toBe(true);
    expect(r.samples).toBeGreaterThan(10);
  }, 60_000);

  it('serveInspector serves the page and streams a Node heap, which the page draws', async () => {
    const heap = createHeap({ maxBytes: 256 << 20 });
    const blocks = [...Array.from({ length: 2000 }, () => heap.malloc(64)), ...Array.from({ length: 300 }, () => heap.malloc(4096)), heap.malloc(2 * (1 << 20) - 65536)]; // a large block in an arena: 120 of its 128 units (a size that packs badly is a mapping)
    const inspector = await serveInspector(heap, { quiet: true });
    servers.push(inspector);
    expect(inspector.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?source=node$/);
    const page = await fetch(inspector.url);
    expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(page.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
    expect(await page.text()).toContain('Paddock heap inspector');
    inspector.mark('allocated');
    const r = await runPage<Report & { error?: string }>(`${inspector.url}&steps=frames:3,hover:large,done`, 30_000);
    expect(r.error).toBeUndefined();
    expect(r.source).toBe('node');
    expectMapAgrees(r);
    // Nothing ran meanwhile: the page drew what the heap holds.
    const now = heap.snapshot();
    expect(r.snapshot.liveBytes).toBe(now.liveBytes);
    expect(countStates(r.snapshot.unitState)).toEqual(countStates(Array.from(now.arena!.unitState)));
    expect(r.drawn!.byState.large).toBe(1);
    expect(r.hovered.large!.found).toBe(true);
    expect(r.hovered.large!.text).toContain('large block at');
    expect(r.hovered.large!.text).toContain(': 1.9 MiB, live');
    expect(r.marks).toEqual([expect.objectContaining({ label: 'allocated', kind: 'program' })]);
    expect(r.samples).toBeGreaterThanOrEqual(3);
    for (const p of blocks) heap.free(p);
    await inspector.close();
    heap.close();
  }, 60_000);
});
