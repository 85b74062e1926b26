import { defineConfig } from 'tsup';
import { preset } from '../../tools/tsup.preset.mjs';

// An app, not a library: the Node entry and the cross-agent workload's worker script, no type
// declarations. @thi.ng/malloc stays external so the peer runs exactly as published, from node_modules.
export default defineConfig(
  preset({
    entry: ['src/main.ts', 'src/cross-worker.ts', 'src/program-worker.ts', 'src/report-md.ts'],
    platform: 'node',
    dts: false,
    external: ['@thi.ng/malloc'],
  }),
);
