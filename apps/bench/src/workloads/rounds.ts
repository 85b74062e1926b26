/**
 * The rounds of the workloads beyond the timed loops (hold-then-free, cross-32, realloc): how many warm-up
 * and measured rounds they run, how a round is named on the progress line, their memory peers, and one
 * round of a memory workload on a fresh instance.
 */
import { running, type RunContext } from '../context.js';
import { errorText } from '../format.js';
import type { MemPeer } from '../mem-peer.js';
import { settle } from '../memory.js';
import { roundsOr } from '../options.js';

export interface Rounds {
  readonly warmup: number;
  readonly rounds: number;
}

/** --warmup / --rounds where given, else the mode's figures for these workloads. */
export function suiteRounds(ctx: RunContext): Rounds {
  const { opts } = ctx;
  return { warmup: roundsOr(opts.warmupGiven, opts.mode.memWarmup), rounds: roundsOr(opts.roundsGiven, opts.mode.memRounds) };
}

export function phaseText(rounds: Rounds, r: number): string {
  return r < rounds.warmup ? `warm-up ${r + 1}/${rounds.warmup}` : `round ${r - rounds.warmup + 1}/${rounds.rounds}`;
}

/** The memory peers of one workload, in the registry's order: each peer that offers it, Paddock at each of `rungs`. */
export function memPeers(ctx: RunContext, rungs: readonly number[]): MemPeer[] {
  return running(ctx, 'memory').flatMap((e) => e.ready!.memory!(rungs));
}

/** One round's sample, or what went wrong. */
export type RoundOutcome<S> = { ok: true; sample: S } | { ok: false; error: string };

/**
 * One round of a memory workload on a fresh instance of `peer`: resident memory is let settle first (its
 * level, `rss0`, is the round's base), then `setup`, `round(rss0)`, and `teardown` whatever happened. A
 * throw is the round's error.
 */
export function onFreshInstance<S>(peer: MemPeer, round: (rss0: number) => RoundOutcome<S>): RoundOutcome<S> {
  const rss0 = settle();
  try {
    peer.setup();
  } catch (err) {
    return { ok: false, error: `setup threw: ${errorText(err)}` };
  }
  try {
    return round(rss0);
  } catch (err) {
    return { ok: false, error: `threw: ${errorText(err)}` };
  } finally {
    try {
      peer.teardown();
    } catch {
      // nothing to add
    }
  }
}
