// The install step of the optional page-return addon. It must never fail the install: without the addon Paddock
// runs with pageReturn 'none'. A prebuilt binary shipped for this platform (prebuilds/<platform>-<arch>/) that
// loads is used as it is, with no compiler needed; otherwise the addon is built from source; where that fails
// too, the warning says so and decommit is bookkeeping only.
import { PREBUILT_ADDON, addonLoads, buildAddon } from './native-build.mjs';

const skip = (why) => {
  console.warn(`@paddock/platform: native page return not built (${why}); decommit will be bookkeeping only.`);
  process.exit(0);
};

if (process.env.PADDOCK_SKIP_NATIVE === '1') skip('PADDOCK_SKIP_NATIVE=1');
if (addonLoads(PREBUILT_ADDON)) {
  console.log(`@paddock/platform: native page return prebuilt for ${process.platform}-${process.arch}`);
  process.exit(0);
}
const failed = buildAddon();
if (failed !== null) skip(failed);
console.log('@paddock/platform: native page return built');
