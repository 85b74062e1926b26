/** `mimalloc`: the native reference against mimalloc (Debian's libmimalloc-dev). */
import { nativeReference } from './native.js';

export const mimalloc = nativeReference('mimalloc', {
  defines: ['-DUSE_MIMALLOC'],
  libs: ['-lmimalloc'],
  missing: (reason) => (/mimalloc/.test(reason) ? `mimalloc not found (apt-get update && apt-get install -y libmimalloc-dev): ${reason}` : reason),
});
