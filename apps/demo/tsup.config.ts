import { defineConfig } from 'tsup';
import { preset } from '../../tools/tsup.preset.mjs';

export default defineConfig(preset({ entry: ['src/main.ts', 'src/worker.ts'], dts: false, platform: 'node' }));
