import { preset } from './vitest.preset.mjs';

export default preset();
