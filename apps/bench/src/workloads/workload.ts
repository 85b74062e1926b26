/**
 * A workload as the bench runs it: a descriptor that says the names `--only` takes for it, how it runs
 * (warm-up and measured rounds with the peers that offer it, interleaved), which peers failed in it, and
 * what it prints and writes to the JSON. Workloads that share a runner and their tables (the pair, the
 * churn and the size sweep; the programs) are one descriptor with several members. They are listed in
 * `index.ts`, in the order they run and print: a new workload is a file in this folder plus its line there.
 */
import type { RunContext } from '../context.js';

/** A name `--only` takes, and the groups that take it in too (`churn` for `churn-1k`, `pony` for `binary-trees`). */
export interface Member {
  readonly name: string;
  readonly groups: readonly string[];
}

/** A peer that failed in a workload, and what happened (the run then ends with exit code 1). */
export interface Failure {
  readonly peer: string;
  readonly reason: string;
}

/** What a workload prints on stdout and what it adds to the JSON document (its own top-level keys). */
export interface WorkloadReport {
  readonly lines: readonly string[];
  readonly json: Readonly<Record<string, unknown>>;
  /** How many of Paddock's targets judged here are NOT MET (`--strict` then exits 1). */
  readonly notMet?: number;
}

export interface WorkloadDescriptor<R> {
  /** Its name here and in the progress line. */
  readonly name: string;
  readonly members: readonly Member[];
  /**
   * Runs the members `picked` takes (none, possibly: then it runs nothing, and its report still stands in
   * the JSON) with the peers of `ctx` that offer it.
   */
  run(ctx: RunContext, picked: (name: string) => boolean): R | Promise<R>;
  failures(result: R): readonly Failure[];
  report(result: R, ctx: RunContext): WorkloadReport;
}
