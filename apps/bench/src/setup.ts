/**
 * Before any timing: the peers that are compiled here are built (nothing prebuilt is downloaded; the
 * native references first, then the wasm peers), then every peer `--only` picks is loaded. A peer whose
 * toolchain, build or module is missing is skipped with the reason; the run goes on.
 */
import type { PeerEntry } from './context.js';
import { PEERS } from './peers/index.js';
import type { Progress } from './progress.js';
import type { Selection } from './selection.js';
import { type Built, ccVersion, TOOLCHAINS } from './toolchain.js';

export interface SetUp {
  /** Each compiled peer's build, in the order they were built. */
  readonly builds: ReadonlyMap<string, Built>;
  /** The C compiler's version line (null: no native peer picked, or no `cc`). */
  readonly cc: string | null;
  readonly seconds: number;
}

const wanted = (pick: Selection, name: string) => pick.peers === null || pick.peers.has(name);

export function buildPeers(pick: Selection, progress: Progress): SetUp {
  const started = Date.now();
  progress.show('set-up: building the native references (cc) and the wasm peers (asc, clang)', 'setup');
  const builds = new Map<string, Built>();
  for (const toolchain of TOOLCHAINS) {
    for (const p of PEERS) {
      if (p.build?.toolchain !== toolchain) continue;
      builds.set(p.name, wanted(pick, p.name) ? p.build.build() : { ok: false, reason: 'left out by --only' });
    }
  }
  const native = PEERS.some((p) => p.build?.toolchain === 'native' && wanted(pick, p.name));
  const cc = native ? ccVersion() : null;
  progress.done();
  return { builds, cc, seconds: (Date.now() - started) / 1000 };
}

/** Loads every peer `pick` takes; the others are 'not run'. */
export async function loadPeers(setup: SetUp, pick: Selection): Promise<PeerEntry[]> {
  const entries: PeerEntry[] = [];
  for (const descriptor of PEERS) {
    const name = descriptor.name;
    const entry = (status: PeerEntry['status'], reason: string | null, ready: PeerEntry['ready']): PeerEntry => ({
      name,
      descriptor,
      status,
      reason,
      selfCheck: null,
      ready,
    });
    if (!wanted(pick, name)) {
      entries.push(entry('not run', 'left out by --only', null));
      continue;
    }
    const built = setup.builds.get(name);
    if (built !== undefined && !built.ok) {
      entries.push(entry('skipped', built.reason, null));
      continue;
    }
    const loaded = await descriptor.load(name, built?.ok ? built.path : null);
    entries.push('skip' in loaded ? entry('skipped', loaded.skip, null) : entry('ran', null, loaded));
  }
  return entries;
}

/** The set-up line of the report. */
export function setupLine(setup: SetUp): string {
  return (
    `set-up (${setup.seconds.toFixed(1)} s): ` +
    [...setup.builds].map(([n, b]) => (b.ok ? `${n} ${b.cached ? 'built (cached)' : 'built'}` : `${n} not built`)).join(', ') +
    (setup.cc ? `; cc: ${setup.cc}` : '')
  );
}

/** The set-up in the JSON document. */
export function setupJson(setup: SetUp): unknown {
  return {
    seconds: setup.seconds,
    cc: setup.cc,
    builds: Object.fromEntries(
      [...setup.builds].map(([n, b]) => [n, b.ok ? { ok: true, command: b.command, cached: b.cached } : { ok: false, reason: b.reason }]),
    ),
  };
}
