// `pnpm measure`: the memory measurement (measure/*.measure.ts), kept out of `pnpm test`.
import { preset } from '../../tools/vitest.preset.mjs';

export default preset({ include: ['measure/**/*.measure.ts'], reporters: ['default'], outputFile: {} });
