// Real worker_threads racing on one registry. Workers run the built dist/ (test/workers/*.mjs).
import { describe, expect, it } from 'vitest';
import { PAGE_SIZE, createAddressSpace, type AddressSpace } from '@paddock/platform';
import { INBOXES_PER_SEGMENT, Registry, SEGMENT_RESERVE_BYTES } from '@paddock/registry';
import { runWorkers } from '../../../tools/test-utils/workers.js';

const GiB = 2 ** 30;

function scratch(space: AddressSpace, bytes: number): { base: number; end: number } {
  const size = Math.ceil(bytes / PAGE_SIZE) * PAGE_SIZE;
  const base = space.reserve(size);
  space.commit(base, size);
  return { base, end: base + size };
}

describe('registry under contention', () => {
  it('16 workers crossing a segment boundary at once all receive every delivery pushed to them', async () => {
    const space = createAddressSpace({ maxBytes: GiB, pageReturn: 'auto' });
    const registry = Registry.create(space);
    const workers = 16;
    const batches = 256;
    // Take slots up to 248 here, so the workers' 16 slots (249..264) straddle the boundary at 256.
    const pre = INBOXES_PER_SEGMENT - workers / 2;
    for (let i = 0; i < pre; i++) registry.takeOwnerSlot();
    expect(registry.segmentCount()).toBe(1);
    const area = scratch(space, workers * workers * batches * 16);
    const reservedBefore = space.reservedBytes;
    const mailbox = new SharedArrayBuffer(workers * 4);
    const results = await runWorkers<{ slot: number; received: number[] }>(new URL('./workers/deliver.mjs', import.meta.url), workers, () => ({
      handle: space.handle,
      batches,
      scratch: area,
      mailbox,
    }));
    const slots = results.map((r) => r.slot).sort((a, b) => a - b);
    expect(slots).toEqual(Array.from({ length: workers }, (_, i) => pre + 1 + i));
    expect(registry.ownerCount()).toBe(pre + workers);
    // Exactly one segment was appended for slots 256..264; every loser gave its segment back.
    expect(registry.segmentCount()).toBe(2);
    expect(registry.segmentList()).toHaveLength(2);
    expect(space.reservedBytes - reservedBefore).toBe(SEGMENT_RESERVE_BYTES);
    // Every worker got every batch from every other worker: both nodes, exactly once.
    results.forEach((r, index) => {
      const expected: number[] = [];
      for (let from = 0; from < workers; from++) {
        if (from === index) continue;
        for (let round = 0; round < batches; round++) expected.push((from << 20) | (round << 1), (from << 20) | (round << 1) | 1);
      }
      expect(r.received.length).toBe(expected.length);
      expect([...r.received].sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
    });
    for (const s of slots) expect(registry.takeInbox(s)).toBe(0);
    // Inboxes are distinct words, and the ones past 256 live in the second segment.
    const inboxes = slots.map((s) => registry.inboxAddress(s));
    expect(new Set(inboxes).size).toBe(workers);
    const second = registry.segmentList()[1]!;
    for (const s of slots) {
      const inSecond = registry.inboxAddress(s) >= second && registry.inboxAddress(s) < second + SEGMENT_RESERVE_BYTES;
      expect(inSecond).toBe(s >= INBOXES_PER_SEGMENT);
    }
  });

  it('an agent that only frees takes no slot', async () => {
    const space = createAddressSpace({ maxBytes: GiB, pageReturn: 'none' });
    const registry = Registry.create(space);
    const owner = registry.takeOwnerSlot();
    const workers = 4;
    const batches = 50;
    const area = scratch(space, workers * batches * 8);
    const results = await runWorkers<{ ownerCountSeen: number }>(new URL('./workers/free-only.mjs', import.meta.url), workers, () => ({
      handle: space.handle,
      batches,
      scratch: area,
      target: owner,
    }));
    expect(results.map((r) => r.ownerCountSeen)).toEqual(new Array(workers).fill(1));
    expect(registry.ownerCount()).toBe(1);
    expect(registry.segmentCount()).toBe(1);
    const got: number[] = [];
    for (let p = registry.takeInbox(owner); p !== 0; p = space.i32[p >>> 2]! >>> 0) got.push(space.i32[(p >>> 2) + 1]!);
    const expected: number[] = [];
    for (let w = 0; w < workers; w++) for (let r = 0; r < batches; r++) expected.push((w << 20) | r);
    expect(got.sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
    // The next agent to carve takes slot 2: nothing was spent by the freers.
    expect(registry.takeOwnerSlot()).toBe(2);
  });
});
