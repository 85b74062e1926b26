// What every run of the block exchange (block-exchange-run.ts) must show, in Node or in a browser.
import { expect } from 'vitest';
import { AGENTS, BLOCKS, type ExchangeReport } from './block-exchange-run.js';

export function expectExchangeHeld(r: ExchangeReport, backend: string): void {
  expect(r.backends).toEqual(Array(AGENTS).fill(backend));
  expect(new Set(r.staticEnds).size).toBe(1);
  expect(r.staticEnds[0]).toBeLessThanOrEqual(r.base); // the module's data lies below the heap
  expect(r.rounds.map((x) => `${x.alloc}->${x.free}`)).toEqual(['wasm->js', 'js->wasm']);
  for (const round of r.rounds) {
    expect(round.got).toEqual(Array(AGENTS).fill(BLOCKS));
    expect(round.live).toBe(AGENTS * BLOCKS); // all live at once, none below the heap, none overlapping
    expect(round.problems).toEqual([]);
    expect(round.bad).toEqual(Array(AGENTS).fill(0)); // every byte of every block as its allocator stamped it
  }
  expect(new Set(r.tableSums).size).toBe(1);
  expect(r.staticBytesChanged).toBe(0);
  expect(r.checkError).toBeNull();
  expect(r.liveBytes).toBe(0); // nothing lost
  expect(r.grew).toBe(true); // the heap grew the module's memory while it ran
}
