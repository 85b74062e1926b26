import { defineConfig } from 'tsup';
import { preset } from '../../tools/tsup.preset.mjs';

// An app, not a library: the dispatcher (main), one worker script per program (departures also has its
// scenario process and a piscina task module), no type declarations.
// Paddock stays external: the main thread and every worker load the built packages by name.
export default defineConfig(
  preset({
    entry: ['src/main.ts', 'src/suspend-drain-worker.ts', 'src/swarm-worker.ts', 'src/departures-scenario.ts', 'src/departures-worker.ts', 'src/departures-task.ts'],
    platform: 'node',
    dts: false,
    external: ['@paddock/allocator', '@paddock/platform'],
  }),
);
