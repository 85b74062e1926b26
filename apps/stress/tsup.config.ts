import { defineConfig } from 'tsup';
import { preset } from '../../tools/tsup.preset.mjs';

// An app, not a library: the dispatcher (main) and the programs' worker scripts, found by their names
// (departures also has its scenario process and a piscina task module), no type declarations.
// Paddock stays external: the main thread and every worker load the built packages by name.
export default defineConfig(
  preset({
    entry: ['src/main.ts', 'src/*-worker.ts', 'src/*-scenario.ts', 'src/*-task.ts'],
    platform: 'node',
    dts: false,
    external: ['@paddock/allocator', '@paddock/channel', '@paddock/platform'],
  }),
);
