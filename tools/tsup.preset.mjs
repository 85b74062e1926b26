// Shared tsup settings for every Paddock package: ESM + .d.ts, Node 20 target.
// `minifySyntax` folds `define` constants so a build flag drops the unselected code.
export function preset(overrides = {}) {
  return {
    entry: ['src/index.ts'],
    format: ['esm'],
    target: 'node20',
    platform: 'neutral',
    dts: true,
    sourcemap: true,
    clean: true,
    treeshake: true,
    minifySyntax: true,
    splitting: false,
    ...overrides,
  };
}
