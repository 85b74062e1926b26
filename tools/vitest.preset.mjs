// Shared vitest settings for every Paddock package. Each package's tests run in its own folder;
// results are written to test-results.json so `pnpm test` can total them (turbo caches that file).
import { defineConfig } from 'vitest/config';

export function preset(overrides = {}) {
  return defineConfig({
    test: {
      include: ['test/**/*.test.ts'],
      testTimeout: 60_000,
      hookTimeout: 60_000,
      pool: 'forks',
      reporters: ['default', 'json'],
      outputFile: { json: 'test-results.json' },
      ...overrides,
    },
  });
}
