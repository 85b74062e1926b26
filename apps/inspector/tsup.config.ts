import { defineConfig } from 'tsup';
import { preset } from '../../tools/tsup.preset.mjs';

// The Node side: serveInspector (the package's entry), the `pnpm inspect` command, the demo workload and its
// worker. The page itself is built by Vite into dist/web, which the server serves.
export default defineConfig(
  preset({
    entry: ['src/node/index.ts', 'src/node/inspect.ts', 'src/node/demo-workload.ts', 'src/node/workload-agent.ts'],
    outDir: 'dist/node',
    platform: 'node',
    dts: { entry: 'src/node/index.ts' },
  }),
);
