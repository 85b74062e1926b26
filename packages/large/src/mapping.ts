/**
 * An oversized mapping, as every agent reads it: its header, the walk that finds every mapping in the heap (for
 * snapshots and reaps), an agent's stash as a reaper reads it from the agent area, what a reap releases, and which
 * large sizes become mappings rather than arena blocks.
 * The tier that makes, frees and reuses mappings is `LargeTier` (large-tier.ts).
 *
 * An oversized mapping is a range of its own of exactly `size + 16 KiB` rounded up to 64 KiB (the address space's
 * granule), at 64 KiB alignment, outside every region. Its header is in its first page and the payload starts
 * 16 KiB in, so a free finds the header at `p - 16 KiB` once the heap's region map says `p` is in no region.
 * Header Int32 words: 0 kind (2, no owner), 1 magic 'PMAP', 2 reservation in KiB, 3 payload bytes, 4 state
 * (1 live, 2 stashed; changed by CAS, so two agents freeing one mapping cannot both win), 5 the mapping's own
 * base address (a header found at `p - 16 KiB` must name itself), 6 the agent id that allocated it (a reap with
 * `releaseLive` releases a dead agent's live mappings).
 */
import { G_STASH_COUNT, KIND_MAPPING, MAPPING_MAGIC, MAPPING_OFFSET, MP_BASE, MP_KIB, MP_MAKING, MP_MOVING, STASH_CAPACITY, STASH_OFFSET } from '@paddock/arena';
import { GRANULE, HeapError, PAGE_SIZE, formatAddress, type AddressSpace } from '@paddock/platform';

/** The payload of an oversized mapping starts this far into it (so payloads stay 16 KiB aligned). */
export const MAPPING_HEADER_BYTES = 16 * 1024;
export const M_KIND = 0;
export const M_MAGIC = 1;
export const M_RESERVED_KIB = 2;
export const M_BYTES = 3;
export const M_STATE = 4;
export const M_SELF = 5;
export const M_AGENT = 6;
export const LIVE = 1;
export const STASHED = 2;

/** What a reap asks of the tier: whether `p` starts a mapping's payload (`LargeTier.isMapping`). */
export interface MappingFinder {
  isMapping(p: number): boolean;
}

/** One stashed mapping, as a reaper reads it: words [base, reservation in KiB, committed bytes] in the agent area. */
export interface StashEntry {
  base: number;
  reservation: number;
  committed: number;
}

/** Reads the stash kept in the agent area at `area` (oldest first). */
export function readStash(space: AddressSpace, area: number): StashEntry[] {
  const u32 = space.u32;
  const n = Math.min(STASH_CAPACITY, u32[(area >>> 2) + G_STASH_COUNT]!);
  const out: StashEntry[] = [];
  for (let i = 0; i < n; i++) {
    const w = ((area + STASH_OFFSET) >>> 2) + 3 * i;
    out.push({ base: u32[w]!, reservation: u32[w + 1]! * 1024, committed: u32[w + 2]! });
  }
  return out;
}

/** An oversized mapping as a heap snapshot shows it. */
export interface MappingPicture {
  base: number;
  /** Bytes reserved for it (64 KiB granules: its payload plus 16 KiB, rounded up, or more after a stash reuse). */
  reservation: number;
  /** Bytes of its payload (what was asked for, rounded to pages). */
  payloadBytes: number;
  /** `live`: handed out; `stashed`: freed and kept in an agent's stash for reuse. */
  state: 'live' | 'stashed';
}

/**
 * Every oversized mapping in the heap, found by its header: each 64 KiB-aligned address outside the regions (whose
 * bases and size are given) that is reserved, has its header page committed and carries a mapping header naming
 * itself; the walk steps over each mapping found, so its payload is never read as a header. Any agent may call it;
 * nothing is written. A mapping being created, resized or released at that moment may be missed.
 */
export function mappingPictures(space: AddressSpace, regions: readonly number[], regionBytes: number): MappingPicture[] {
  const out: MappingPicture[] = [];
  space.refresh();
  const end = Math.min(space.u8.length, space.maxBytes);
  const sorted = [...regions].sort((a, b) => a - b);
  let next = 0; // the first region at or above `base`
  for (let base = GRANULE; base + PAGE_SIZE <= end; base += GRANULE) {
    while (next < sorted.length && sorted[next]! + regionBytes <= base) next++;
    if (next < sorted.length && base >= sorted[next]!) {
      base = sorted[next]! + regionBytes - GRANULE; // past the region
      continue;
    }
    if (!space.holdsPage(base)) continue;
    const w = base >>> 2;
    const i32 = space.i32;
    if (i32[w + M_MAGIC] !== MAPPING_MAGIC || i32[w + M_KIND] !== KIND_MAPPING || space.u32[w + M_SELF] !== base) continue;
    const reservation = space.u32[w + M_RESERVED_KIB]! * 1024;
    const state = Atomics.load(i32, w + M_STATE);
    if (reservation < GRANULE || reservation % GRANULE !== 0 || (state !== LIVE && state !== STASHED)) continue;
    out.push({ base, reservation, payloadBytes: space.u32[w + M_BYTES]!, state: state === LIVE ? 'live' : 'stashed' });
    base += reservation - GRANULE;
  }
  return out;
}

/** Releases the mapping at `base` (its header cleared first, so no walk finds it half gone). */
export function releaseMapping(space: AddressSpace, base: number, reservation: number): void {
  const i32 = space.i32;
  Atomics.store(i32, (base >>> 2) + M_MAGIC, 0);
  i32[(base >>> 2) + M_KIND] = 0;
  i32[(base >>> 2) + M_SELF] = 0;
  i32[(base >>> 2) + M_AGENT] = 0;
  space.release(base, reservation);
}

/**
 * Releases every mapping stashed by the dead agent whose area is at `area` (its ledger died with it).
 * A mapping whose header is not a stashed mapping is left alone (counted as skipped).
 */
export function reapStash(tier: MappingFinder, space: AddressSpace, area: number): { released: number; skipped: number } {
  let released = 0;
  let skipped = 0;
  const stash = readStash(space, area);
  // A mapping the dead agent was making (reserved, header not whole: nobody else can have it) or freeing (taken
  // from live, then neither stashed nor released: nobody else will free it).
  const pw = (area + MAPPING_OFFSET) >>> 2;
  const u32 = space.u32;
  const word = Atomics.load(u32, pw + MP_BASE);
  if (word !== 0) {
    const pBase = (word & ~(GRANULE - 1)) >>> 0;
    const what = word & (GRANULE - 1);
    const size = u32[pw + MP_KIB]! * 1024;
    const hw = pBase >>> 2;
    if (what === MP_MAKING && size > 0 && pBase % GRANULE === 0 && pBase + size <= space.maxBytes && space.isReserved(pBase, size)) {
      if (space.covers(pBase + PAGE_SIZE) && space.isCommitted(pBase, PAGE_SIZE) && space.i32[hw + M_MAGIC] === MAPPING_MAGIC) {
        skipped++; // its header was whole: a live mapping (a reap with releaseLive finds it by its owner word)
      } else {
        if (space.isCommitted(pBase, PAGE_SIZE) && space.covers(pBase + PAGE_SIZE)) {
          space.i32[hw + M_MAGIC] = 0;
          space.i32[hw + M_SELF] = 0;
        }
        space.release(pBase, size);
        released++;
      }
    } else if (
      what === MP_MOVING && tier.isMapping(pBase + MAPPING_HEADER_BYTES) && !stash.some((e) => e.base === pBase) &&
      Atomics.compareExchange(space.i32, hw + M_STATE, STASHED, 0) === STASHED
    ) {
      releaseMapping(space, pBase, space.u32[hw + M_RESERVED_KIB]! * 1024);
      released++;
    }
    Atomics.store(u32, pw + MP_BASE, 0);
  }
  for (const e of stash) {
    const hw = e.base >>> 2;
    if (
      !tier.isMapping(e.base + MAPPING_HEADER_BYTES) || space.i32[hw + M_RESERVED_KIB]! * 1024 !== e.reservation ||
      Atomics.compareExchange(space.i32, hw + M_STATE, STASHED, 0) !== STASHED
    ) {
      skipped++;
      continue;
    }
    releaseMapping(space, e.base, e.reservation);
    released++;
  }
  Atomics.store(space.u32, (area >>> 2) + G_STASH_COUNT, 0);
  return { released, skipped };
}

/**
 * Releases every live mapping that the agent `agentId` allocated (for a reap with `releaseLive`: that agent is
 * dead and shared nothing still in use). Each is found by a walk of the address space outside the regions, taken
 * from live with the free's CAS (so a racing free of it by another agent loses with DOUBLE_FREE) and released.
 * Returns how many.
 */
export function releaseLiveOf(space: AddressSpace, regions: readonly number[], regionBytes: number, agentId: number): number {
  let n = 0;
    for (const m of mappingPictures(space, regions, regionBytes)) {
    const hw = m.base >>> 2;
    if (m.state !== 'live' || space.i32[hw + M_AGENT] !== agentId) continue;
    if (Atomics.compareExchange(space.i32, hw + M_STATE, LIVE, 0) !== LIVE) continue;
    releaseMapping(space, m.base, m.reservation);
    n++;
  }
  return n;
}

export function roundPage(n: number): number {
  return n <= 0xfffff000 ? ((n + 0xfff) >>> 12) * 0x1000 : Math.ceil(n / PAGE_SIZE) * PAGE_SIZE; // integer arithmetic below 4 GiB
}

/** Committed bytes of a mapping holding `bytes`: its header page plus the payload's pages. */
export function committedBytes(bytes: number): number {
  return PAGE_SIZE + roundPage(bytes);
}

/**
 * Checks the stash kept in the agent area at `area` against the tier's count and the mapping waiting for its cut:
 * each entry a stashed mapping whose header names its reservation. Returns the stash's committed bytes.
 * @throws HeapError CORRUPTION.
 */
export function checkStash(tier: MappingFinder, space: AddressSpace, area: number, count: number, cutBase: number): number {
  let stashBytes = 0;
  const i32 = space.i32;
  const stash = readStash(space, area);
  if (stash.length !== count) throw new HeapError('CORRUPTION', `stash holds ${stash.length} mappings, counted ${count}`);
  if (cutBase !== 0 && !stash.some((e) => e.base === cutBase)) {
    throw new HeapError('CORRUPTION', `the mapping at ${formatAddress(cutBase)} waits for its cut but is not stashed`, cutBase);
  }
  for (const e of stash) {
    const hw = e.base >>> 2;
    if (!tier.isMapping(e.base + MAPPING_HEADER_BYTES) || i32[hw + M_STATE] !== STASHED || i32[hw + M_RESERVED_KIB]! * 1024 !== e.reservation) {
      throw new HeapError('CORRUPTION', `stashed mapping at ${formatAddress(e.base)} has a bad header`, e.base);
    }
    stashBytes += e.committed;
  }
  return stashBytes;
}

/** A stashed mapping serves a malloc that needs at least half its reservation. */
const STASH_REUSE_FACTOR = 2;

/**
 * A large span is served from arena units only when the arena holds whole blocks of it in at least this share of
 * its usable units (in sixteenths: 15/16); a span that packs worse (a 1.5 MiB block is 96 units: one per 126-unit
 * arena, 76%) is served as an oversized mapping of its exact size instead.
 */
const PACK_SIXTEENTHS = 15;

/**
 * Per span of large units (index 0 to `usableUnits`): 1 when whole blocks of that span fill at least 15/16 of an
 * arena's usable units, so that blocks of it are served there; 0 when the span packs worse.
 */
export function spanTable(usableUnits: number): Uint8Array {
  const t = new Uint8Array(usableUnits + 1);
  for (let span = 1; span <= usableUnits; span++) {
    if (16 * Math.floor(usableUnits / span) * span >= PACK_SIXTEENTHS * usableUnits) t[span] = 1;
  }
  return t;
}

/**
 * The stash entry (of `count`, in the agent area from word `at`) that serves a mapping of `kib` KiB: the newest of
 * exactly that reservation, else the smallest up to twice it. Returns its index, or -1.
 */
export function pickStashed(u32: Uint32Array, at: number, count: number, kib: number): number {
  let best = -1;
  let bestKib = 0;
  for (let i = count - 1; i >= 0; i--) {
    const k = u32[at + 3 * i + 1]!;
    if (k === kib) return i;
    if (k > kib && k <= STASH_REUSE_FACTOR * kib && (best < 0 || k < bestKib)) {
      best = i;
      bestKib = k;
    }
  }
  return best;
}

/** Writes the header of a new mapping at `base` (`kib` KiB reserved, no payload yet), all but its state and magic. */
export function writeMappingHeader(space: AddressSpace, base: number, kib: number): void {
  const i32 = space.i32;
  const hw = base >>> 2;
  i32[hw + M_KIND] = KIND_MAPPING;
  i32[hw + M_RESERVED_KIB] = kib;
  i32[hw + M_BYTES] = 0;
  i32[hw + M_SELF] = base | 0;
  i32[hw + M_AGENT] = space.agentId;
}

/** Sets a mapping's payload to `size` bytes: commits what it now needs, decommits what it no longer does. */
export function setPayload(space: AddressSpace, base: number, size: number): void {
  const old = space.u32[(base >>> 2) + M_BYTES]!;
  const start = base + MAPPING_HEADER_BYTES;
  const need = roundPage(size);
  const had = roundPage(old);
  if (need > had) space.commit(start + had, need - had);
  else if (need < had) space.decommit(start + need, had - need);
  space.u32[(base >>> 2) + M_BYTES] = size;
}

/**
 * The base of the live mapping whose payload starts at `p`, for the operation `what`.
 * @throws HeapError BAD_POINTER when `p` starts no mapping, DOUBLE_FREE when it is stashed (freed).
 */
export function locateMapping(tier: MappingFinder, space: AddressSpace, p: number, what: string): number {
  if (typeof p !== 'number' || (p >>> 0) !== p) throw new HeapError('BAD_POINTER', `${what}: ${String(p)} is not a pointer`);
  const base = p - MAPPING_HEADER_BYTES;
  if (!tier.isMapping(p)) {
    throw new HeapError('BAD_POINTER', `${what}: ${formatAddress(p)} is not the start of an oversized block`, p);
  }
  const state = Atomics.load(space.i32, (base >>> 2) + M_STATE);
  if (state !== LIVE) throw new HeapError('DOUBLE_FREE', `${what}: the oversized block at ${formatAddress(p)} has been freed`, p);
  return base;
}
