/** `glibc`: the native reference against the C library's own malloc. */
import { nativeReference } from './native.js';

export const glibc = nativeReference('glibc', { defines: [], libs: [] });
