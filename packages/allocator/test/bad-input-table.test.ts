// The bad-input table, on every backend, under vitest: the cases are in cases/bad-input-table.ts (the browser
// suite runs the same ones in Chromium).
import { describe, expect, it } from 'vitest';
import { backends, badInputCases } from './cases/bad-input-table.js';

describe.each(backends)('the bad-input table on $name', (b) => {
  badInputCases({ it, expect }, b);
});
