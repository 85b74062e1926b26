// Command-line helpers shared by the stress programs.

/**
 * Reads `v` as a number (decimal, or hex with 0x) from `min` to `max` for the option `flag`.
 * @throws Error with a message for the user.
 */
export function numberArg(flag: string, v: string | undefined, min: number, max: number): number {
  const n = v !== undefined && /^0x[0-9a-f]+$/i.test(v.trim()) ? parseInt(v.trim(), 16) : Number(v);
  if (v === undefined || v.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
    throw new Error(`${flag} needs a number from ${min} to ${max}, got ${v === undefined ? 'nothing' : JSON.stringify(v)}`);
  }
  return n;
}

/** Splits `--flag=value` into [flag, value]; a bare `--flag` gives [flag, undefined]. */
export function splitFlag(a: string): [string, string | undefined] {
  const eq = a.indexOf('=');
  return eq >= 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
}
