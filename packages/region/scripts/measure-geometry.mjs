// Measures the two region geometries across heap sizes, to place the threshold between them.
// Run after `pnpm build` in packages/region:  node scripts/measure-geometry.mjs
//
// For each maxBytes and geometry it carves arenas until the heap is out of memory (carving commits only a
// region's header page, so this is fast and touches little memory), then reports: regions and arenas the
// heap holds, arena bytes as a share of maxBytes, usable unit bytes (every unit of every arena: the arena
// layer keeps its headers in the regions' slot 0),
// how many agents could each hold a current and a spare arena, and the cost of a carve + release when the
// only free slot sits in the current region, and what a full walk of the list to the oldest region
// adds to that, in nanoseconds.
import { createAddressSpace } from '@paddock/platform';
import { LARGE_GEOMETRY, Regions, SMALL_GEOMETRY } from '@paddock/region';

const MiB = 2 ** 20;
const sizes = [256, 512, 768, 1024, 1536, 2048, 3072, 4096].map((m) => m * MiB);
const rows = [];

function measure(maxBytes, geometry) {
  const space = createAddressSpace({ maxBytes, pageReturn: 'none' });
  let regions;
  try {
    regions = Regions.create(space, { geometry: { ...geometry } });
  } catch {
    return null; // the heap cannot hold one region of this size
  }
  const arenas = [];
  const t0 = performance.now();
  for (;;) {
    try {
      arenas.push(regions.carveArena());
    } catch (err) {
      if (err.code !== 'OUT_OF_MEMORY') throw err;
      break;
    }
  }
  const fillNs = ((performance.now() - t0) * 1e6) / Math.max(1, arenas.length);
  const list = regions.regionList();
  // Worst walk: the only free slot is in the oldest region; a fresh agent (no current region) must walk.
  const oldest = list[list.length - 1];
  const victim = arenas.find((a) => a - (a % geometry.regionBytes) === oldest);
  const walker = Regions.open(space);
  const rounds = 20000;
  regions.releaseArena(victim);
  const pair = (fullWalk) => {
    const t = performance.now();
    for (let i = 0; i < rounds; i++) {
      const a = walker.carveArena();
      walker.releaseArena(a);
      if (fullWalk) walker['current'] = 0; // no current region: every carve walks the whole list
    }
    return ((performance.now() - t) * 1e6) / rounds;
  };
  pair(true); // warm up
  const nearNs = pair(false); // the free slot is in the current region: no walk
  const walkNs = pair(true) - nearNs; // what walking the whole list adds
  const unitsUsable = arenas.length * geometry.unitsPerArena * geometry.unitBytes;
  return {
    regions: list.length,
    arenas: arenas.length,
    arenaBytes: arenas.length * geometry.arenaBytes,
    usableBytes: unitsUsable,
    agents: Math.floor(arenas.length / 2),
    fillNs,
    nearNs,
    walkNs,
  };
}

for (const maxBytes of sizes) {
  const small = measure(maxBytes, SMALL_GEOMETRY);
  const large = measure(maxBytes, LARGE_GEOMETRY);
  rows.push({ maxBytes, small, large });
}

const mib = (b) => (b / MiB).toFixed(0);
const pct = (a, b) => ((100 * a) / b).toFixed(1);
console.log('maxBytes | small: regions arenas arenaMiB (% of max) usableMiB agents fill-ns pair-ns walk-ns | large: (same) | large/small usable');
for (const { maxBytes, small, large } of rows) {
  const cell = (g) =>
    g === null
      ? 'does not fit'
      : `${g.regions} ${g.arenas} ${mib(g.arenaBytes)} (${pct(g.arenaBytes, maxBytes)}%) ${mib(g.usableBytes)} ${g.agents} ${g.fillNs.toFixed(0)} ${g.nearNs.toFixed(0)} ${g.walkNs.toFixed(0)}`;
  const ratio = small && large ? `${pct(large.usableBytes, small.usableBytes)}%` : '-';
  console.log(`${mib(maxBytes)} MiB | ${cell(small)} | ${cell(large)} | ${ratio}`);
}
