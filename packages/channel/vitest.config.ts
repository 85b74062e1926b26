import { preset } from '../../tools/vitest.preset.mjs';

export default preset();
