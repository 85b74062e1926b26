// Makes the prebuilt page-return addon that the package ships for this platform: builds it from source in a
// scratch copy of binding.gyp and native/ (so the package's own build/ is never touched while something may be
// loading it) and copies the result to prebuilds/<platform>-<arch>/node.napi.node, where the platform layer looks
// first (an N-API addon: one binary serves every Node version with that N-API). Run by `prepack`, so a packed
// tarball carries it; unlike the install step it fails loudly.
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PACKAGE_DIR, PREBUILT_ADDON, addonLoads, buildAddon } from './native-build.mjs';

const scratch = mkdtempSync(join(tmpdir(), 'paddock-prebuild-'));
try {
  cpSync(join(PACKAGE_DIR, 'binding.gyp'), join(scratch, 'binding.gyp'));
  cpSync(join(PACKAGE_DIR, 'native'), join(scratch, 'native'), { recursive: true });
  const failed = buildAddon(scratch);
  if (failed !== null) {
    console.error(`@paddock/platform: cannot make the prebuilt addon: ${failed}`);
    process.exit(1);
  }
  mkdirSync(dirname(PREBUILT_ADDON), { recursive: true });
  cpSync(join(scratch, 'build', 'Release', 'paddock_page_return.node'), PREBUILT_ADDON);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
if (!addonLoads(PREBUILT_ADDON)) {
  console.error(`@paddock/platform: the prebuilt addon at ${PREBUILT_ADDON} does not load`);
  process.exit(1);
}
console.log(`@paddock/platform: prebuilt addon at ${PREBUILT_ADDON}`);
