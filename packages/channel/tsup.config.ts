import { defineConfig } from 'tsup';
import { preset } from '../../tools/tsup.preset.mjs';

export default defineConfig(preset());
