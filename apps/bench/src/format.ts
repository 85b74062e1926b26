/** How figures are written in the tables: times, ratios, counts, bytes, rates, shares, and the tables' layout. */

const MiB = 1024 * 1024;

/** ns: two decimals below 10, one below 100, whole numbers with separators above. */
export function fmtNs(x: number): string {
  if (x < 10) return x.toFixed(2);
  if (x < 100) return x.toFixed(1);
  return Math.round(x).toLocaleString('en-US');
}

export function fmtRatio(x: number | null): string {
  if (x === null) return '-';
  if (x < 0.1) return `${x.toPrecision(2)}x`;
  if (x < 10) return `${x.toFixed(2)}x`;
  if (x < 100) return `${x.toFixed(1)}x`;
  return `${Math.round(x).toLocaleString('en-US')}x`;
}

export function fmtCount(x: number): string {
  return x.toLocaleString('en-US');
}

/** Bytes in MiB: two decimals below 10 MiB, one above. */
export function fmtMiB(bytes: number | null): string {
  if (bytes === null || !Number.isFinite(bytes)) return '-';
  const m = bytes / MiB;
  return `${Math.abs(m) < 10 ? m.toFixed(2) : m.toFixed(1)} MiB`;
}

/** A rate (per second), with k, M or G. */
export function fmtRate(x: number): string {
  if (!Number.isFinite(x)) return '-';
  if (x >= 1e9) return `${(x / 1e9).toFixed(2)} G`;
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)} M`;
  if (x >= 1e3) return `${(x / 1e3).toFixed(1)} k`;
  return x.toFixed(x < 10 ? 2 : 0);
}

export function fmtMs(x: number): string {
  if (!Number.isFinite(x)) return '-';
  return x < 10 ? `${x.toFixed(2)} ms` : x < 100 ? `${x.toFixed(1)} ms` : `${Math.round(x)} ms`;
}

/** A share, 0..1, as a whole percentage. */
export function fmtPct(x: number): string {
  return `${(x * 100).toFixed(0)}%`;
}

/** A change, as a signed percentage with one decimal. */
export function fmtSigned(x: number): string {
  if (!Number.isFinite(x)) return '-';
  const pct = x * 100;
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(1)}%`;
}

/** Lays out rows as left-aligned first column, right-aligned others. */
export function layout(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd())
    .join('\n');
}

/** An error's message (or the thrown value as text). */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
