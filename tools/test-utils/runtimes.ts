// Runs shared cases under the other runtimes (tools/runtimes.json: Node 22, 24 and 26, Bun, Deno), installed
// in .runtimes/ by tools/install-runtimes.mjs. A runtime suite is bundled like a browser suite (esbuild, one
// folder: the main script `main.js` and its agents, each built under its backend's export condition), but for a
// server runtime: its agents are `node:worker_threads` Workers, which all five run (and whose `exit` event is
// how Paddock finds an agent that died), and the platform's native page-return addon is found where it was
// built. The runtime runs `main.js <report file>`; the report is the page's (SuiteReport), and each case comes
// back as a vitest case under `in <runtime>`, which is how `pnpm test` counts them apart.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import type { SuiteBuild, SuiteReport } from './browser.js';

/** A runtime of tools/runtimes.json. */
export interface Runtime {
  id: string;
  /** How results name it: `Node 22`, `Bun`, `Deno`. */
  label: string;
  package: string;
  version: string;
  /** The binary, relative to the runtime's folder. */
  bin: string;
  /** Arguments before the script (Deno: `run -A`). */
  args: string[];
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every runtime CI runs besides the Node that runs vitest. */
export const RUNTIMES: Runtime[] = (JSON.parse(readFileSync(join(root, 'tools', 'runtimes.json'), 'utf8')) as { runtimes: Runtime[] }).runtimes;

/** Where the runtimes are installed. */
export const RUNTIMES_DIR = process.env.PADDOCK_RUNTIMES_DIR ?? join(root, '.runtimes');

/** The runtime's binary. */
export function runtimeBinary(r: Runtime): string {
  return join(RUNTIMES_DIR, r.id, r.bin);
}

/**
 * Whether `r` is installed here, and must be: CI installs the runtimes and sets PADDOCK_RUNTIMES=required (as
 * CI=true does), where a missing one fails the suite instead of skipping it.
 */
export function runtimeAvailable(r: Runtime): boolean {
  const found = existsSync(runtimeBinary(r));
  if (!found && (process.env.PADDOCK_RUNTIMES === 'required' || process.env.CI === 'true')) {
    throw new Error(`PADDOCK_RUNTIMES=required (or CI=true) but ${r.label} is not at ${runtimeBinary(r)} (node tools/install-runtimes.mjs)`);
  }
  return found;
}

/** The note a skipped runtime suite carries. */
export function runtimeMissing(r: Runtime): string {
  return `skipped: ${r.label} is not installed at ${runtimeBinary(r)} (node tools/install-runtimes.mjs installs it)`;
}

/** What one run of a runtime printed and how it ended. */
export interface RuntimeRun {
  status: number | null;
  out: string;
  ms: number;
}

/** Runs `script` under `r` with `args` (Deno gets `run -A`), in `cwd`; kills it after `timeoutMs`. */
export function runUnder(r: Runtime, script: string, args: string[], timeoutMs: number, cwd = root, env: Record<string, string> = {}): Promise<RuntimeRun> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(runtimeBinary(r), [...r.args, script, ...args], { cwd, env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => {
      out += `\n(killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, out, ms: Date.now() - t0 });
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ status: null, out: `${out}\n${err.message}`, ms: Date.now() - t0 });
    });
  });
}

/**
 * The platform's files find the native addon relative to their own `import.meta.url`; in a bundle that would be
 * the bundle's. This keeps their own (the addon loads in a bundle as it does from the package).
 */
const platformOwnUrl: Plugin = {
  name: 'platform-own-url',
  setup(b) {
    b.onLoad({ filter: /[\\/]packages[\\/]platform[\\/]dist[\\/][^\\/]+\.js$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
      loader: 'js',
    }));
  },
};

/** Bundles each build into `dir` for a server runtime (ESM, node builtins external). */
export async function bundleForRuntime(builds: SuiteBuild[], dir: string): Promise<void> {
  await Promise.all(
    builds.map((b) =>
      build({ entryPoints: b.entries, outdir: dir, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'error', conditions: b.conditions ?? [], plugins: [platformOwnUrl] }),
    ),
  );
}

/**
 * Bundles a suite (`main` and its agents) and runs it under `r`: its `main.js` gets a file to write its report
 * to (see reportSuite in runtime-host.ts). Never throws: a failure to bundle, a crash or a time-out comes back
 * as the report's `error`, with what the runtime printed.
 */
export async function runRuntimeSuite(r: Runtime, builds: SuiteBuild[], timeoutMs: number): Promise<{ report: SuiteReport; dir: string; ms: number }> {
  const t0 = Date.now();
  const dir = mkdtempSync(join(tmpdir(), `paddock-${r.id}-`));
  let report: SuiteReport;
  try {
    await bundleForRuntime(builds, dir);
    const file = join(dir, 'report.json');
    const run = await runUnder(r, join(dir, 'main.js'), [file], timeoutMs, dir);
    if (existsSync(file)) report = JSON.parse(readFileSync(file, 'utf8')) as SuiteReport;
    else report = { error: `${r.label} wrote no report (exit status ${run.status}):\n${run.out.slice(-4000)}`, registered: 0, results: [], crossOriginIsolated: false };
  } catch (err) {
    report = { error: (err as Error).stack ?? String(err), registered: 0, results: [], crossOriginIsolated: false };
  }
  return { report, dir, ms: Date.now() - t0 };
}
