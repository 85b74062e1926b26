// How fast the page-return addon gives touched pages back, for the platform design note: 512 MiB of a
// SharedArrayBuffer, every page written, returned with `discard` in 8 MiB and then 64 MiB calls, three rounds each.
//   node apps/bench/scripts/page-return-rate.mjs [addon .node file, default the one built in packages/platform]
// Prints ms and MiB per ms a round. Linux only. Give another build of the addon (one built from an older
// native/page_return.c with node-gyp in a scratch folder) to compare.
import { createRequire } from 'node:module';

const file = process.argv[2] ?? new URL('../../../packages/platform/build/Release/paddock_page_return.node', import.meta.url).pathname;
const addon = createRequire(import.meta.url)(file);
const u8 = new Uint8Array(new SharedArrayBuffer(512 << 20));
for (const chunk of [8 << 20, 64 << 20]) {
  for (let r = 0; r < 3; r++) {
    for (let q = 0; q < u8.length; q += 4096) u8[q] = 1;
    const t = performance.now();
    for (let o = 0; o < u8.length; o += chunk) addon.discard(u8, o, chunk);
    const ms = performance.now() - t;
    console.log(`${chunk >> 20} MiB calls: 512 MiB in ${ms.toFixed(1)} ms = ${(512 / ms).toFixed(1)} MiB/ms`);
  }
}
