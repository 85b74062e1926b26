#!/usr/bin/env node
// `pnpm test`: build (turbo, cached), the layering check, then typecheck and every package's tests
// (turbo, cached per package). Each package writes test-results.json; this script totals them and ends
// with one plain line, `tests: N passed, N failed, N skipped; in Chromium: N passed; in Firefox: N passed;
// Node 22: N passed; ...; Bun: ...; Deno: ...`: the cases that ran in a browser page or under another runtime
// are the vitest cases under a `describe('in Chromium')`, `in Firefox`, `in Node 22`, `in Bun`... (a browser or
// runtime suite reports each case it ran as one; tools/test-utils/browser.ts and runtimes.ts), counted apart from
// the ones of the Node that runs vitest. Where a browser or runtime is missing here its part says skipped (CI
// installs them all and requires them: PADDOCK_BROWSER=required, CI=true). The failed cases are listed again
// just above that line, each with the first line of its message, so that a log cut to its end still names them.
//
// turbo's cache keys: the test task of turbo.json names PADDOCK_NODE (set here to this Node's version) and
// PADDOCK_HAVE (set here: which runtimes and browsers are installed), and tools/runtimes.json (the runtimes'
// pinned versions) is a global dependency, so a run under another Node, or once a runtime is installed, replays
// no test result (the builds, which do not depend on the Node that runs them, are still reused).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseUse } from './use-flags.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let parsed;
try {
  parsed = parseUse(process.argv.slice(2));
} catch (err) {
  console.error(`pnpm test: ${err.message}`);
  process.exit(2);
}
// What the suites will find here (turbo keys on it, so installing a runtime or a browser reruns what skipped).
const { runtimes } = JSON.parse(readFileSync(join(root, 'tools', 'runtimes.json'), 'utf8'));
const runtimesDir = process.env.PADDOCK_RUNTIMES_DIR ?? join(root, '.runtimes');
const have = [
  ...runtimes.filter((r) => existsSync(join(runtimesDir, r.id, r.bin))).map((r) => r.id),
  ...(existsSync(process.env.PADDOCK_CHROMIUM ?? '/usr/bin/chromium') ? ['chromium'] : []),
  ...(existsSync(process.env.PADDOCK_FIREFOX ?? '/usr/bin/firefox-esr') ? ['firefox'] : []),
].join(',');
const env = { ...process.env, PADDOCK_USE: parsed.flags, PADDOCK_NODE: process.version, PADDOCK_HAVE: have, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };
const sh = (cmd, args) => spawnSync(cmd, args, { stdio: 'inherit', env, cwd: root }).status ?? 1;

const dirs = ['packages', 'apps']
  .flatMap((g) => (existsSync(join(root, g)) ? readdirSync(join(root, g)).map((n) => join(root, g, n)) : []))
  .concat([join(root, 'tools')]);
for (const d of dirs) rmSync(join(d, 'test-results.json'), { force: true });

let status = sh('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only']);
if (status === 0) status = sh('node', ['tools/check-layers.mjs']);
if (status === 0) status = sh('pnpm', ['exec', 'turbo', 'run', 'typecheck', 'test', '--continue', '--output-logs=new-only', '--concurrency=1', ...parsed.rest]);

let passed = 0;
let failed = 0;
let skipped = 0;
// The cases counted apart, by where they ran (the first title of a vitest case: `in Chromium`, `in Node 22`).
const elsewhere = new Map(['Chromium', 'Firefox', ...runtimes.map((r) => r.label)].map((w) => [w, { passed: 0, failed: 0, skipped: 0 }]));
const failures = [];
for (const d of dirs) {
  const f = join(d, 'test-results.json');
  if (!existsSync(f)) continue;
  const r = JSON.parse(readFileSync(f, 'utf8'));
  passed += r.numPassedTests ?? 0;
  // A suite that fails to load has no failed tests of its own: count it once.
  failed += r.numFailedTests || r.numFailedTestSuites || 0;
  skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  for (const file of r.testResults ?? []) {
    const where = file.name ? file.name.slice(root.length + 1) : d.slice(root.length + 1);
    if (file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed')) {
      failures.push(`${where}: ${firstLine(file.message)}`);
    }
    for (const t of file.assertionResults ?? []) {
      if (t.status === 'failed') failures.push(`${where} > ${[...(t.ancestorTitles ?? []), t.title].join(' > ')}: ${firstLine(t.failureMessages?.[0])}`);
      const ranIn = elsewhere.get(/^in (.+)$/.exec(t.ancestorTitles?.[0] ?? '')?.[1]);
      if (!ranIn) continue;
      const key = t.status === 'passed' ? 'passed' : t.status === 'failed' ? 'failed' : 'skipped';
      ranIn[key]++;
    }
  }
}
let failedElsewhere = 0;
for (const c of elsewhere.values()) {
  passed -= c.passed;
  failed -= c.failed;
  skipped -= c.skipped;
  failedElsewhere += c.failed;
}
// The failures again at the end, where a log cut to its last lines still shows them.
if (failures.length > 0) console.log(`\nfailed:\n${failures.map((f) => `  ${f}`).join('\n')}`);
if (status !== 0 && failed + failedElsewhere === 0) failed = 1; // a build, typecheck or layering failure counts as one
const missing = {
  Chromium: `no Chromium at ${process.env.PADDOCK_CHROMIUM ?? '/usr/bin/chromium'}`,
  Firefox: `no Firefox at ${process.env.PADDOCK_FIREFOX ?? '/usr/bin/firefox-esr'}`,
};
const parts = [...elsewhere].map(([w, c]) => {
  const label = w === 'Chromium' || w === 'Firefox' ? `in ${w}` : w;
  if (c.passed + c.failed > 0 || c.skipped === 0) return `${label}: ${c.passed} passed${c.failed > 0 ? `, ${c.failed} failed` : ''}${c.skipped > 0 ? `, ${c.skipped} skipped` : ''}`;
  return `${label}: skipped (${missing[w] ?? 'not installed: node tools/install-runtimes.mjs'}; ${c.skipped} skipped)`;
});
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped; ${parts.join('; ')}`);
function firstLine(text) {
  const line = String(text ?? '').split('\n').find((l) => l.trim() !== '') ?? '(no message)';
  return line.length > 400 ? `${line.slice(0, 400)}...` : line;
}

process.exit(status === 0 && failed === 0 && failedElsewhere === 0 ? 0 : 1);
