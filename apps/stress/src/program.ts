/** A stress program as `main.ts` runs it: `node apps/stress/dist/main.js <name> [options]`. */
export interface StressProgram {
  readonly name: string;
  /** One line, for the list of programs. */
  readonly summary: string;
  /** Its options, for `<program> --help` and after a bad argument. */
  readonly usage: string;
  /** Runs it and resolves with the exit code (0: pass, 1: fail). A throw is a bad argument (exit 2). */
  run(args: string[]): Promise<number>;
}
