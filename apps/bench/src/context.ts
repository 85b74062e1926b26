/**
 * What every workload gets from the run: the options, the peers (loaded, skipped or left out, each with
 * its descriptor and what loading it gave), the progress line, and the figures the set-up found.
 */
import { relative } from 'node:path';
import type { Options } from './options.js';
import type { Offer, PeerDescriptor, Ready } from './peers/peer.js';
import type { Progress } from './progress.js';

export interface PeerEntry {
  readonly name: string;
  readonly descriptor: PeerDescriptor;
  /** 'ran' once loaded and past its self-check; otherwise why it does not run. */
  status: 'ran' | 'skipped' | 'failed' | 'not run';
  reason: string | null;
  selfCheck: string | null;
  /** What loading it gave (null: skipped or left out). */
  readonly ready: Ready | null;
}

export interface RunContext {
  readonly opts: Options;
  /** Date.now() at the start of the run. */
  readonly started: number;
  /** Every peer, in the registry's order. */
  readonly peers: readonly PeerEntry[];
  readonly progress: Progress;
  /** Paddock's largeMax in its 2 GiB heap (the size sweep's and the realloc chain's tiers); null when the arena does not run. */
  readonly largeMax: number | null;
  /** The command line of this run, as typed at the repository root. */
  readonly command: string;
}

/** Whether the peer offers `offer`. */
export function offers(e: PeerEntry, offer: Offer): boolean {
  return e.descriptor.offers.includes(offer);
}

/** The peers that run (loaded and past their self-check) and offer `offer`, in the registry's order. */
export function running(ctx: RunContext, offer: Offer): PeerEntry[] {
  return ctx.peers.filter((e) => e.status === 'ran' && offers(e, offer));
}

/** Seconds since the start of the run, for the progress line. */
export function elapsed(ctx: RunContext): string {
  return `${((Date.now() - ctx.started) / 1000).toFixed(0)} s`;
}

/** The command line of this process, as typed at the repository root. */
export function commandLine(): string {
  const script = relative(process.cwd(), process.argv[1] ?? '') || process.argv[1];
  const args = process.argv.slice(2).join(' ');
  const via = process.env.npm_lifecycle_event ? ` (via pnpm ${process.env.npm_lifecycle_event})` : '';
  return `node ${script}${args ? ` ${args}` : ''}${via}`;
}
