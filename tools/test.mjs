#!/usr/bin/env node
// `pnpm test`: build (turbo, cached), the layering check, then typecheck and every package's tests
// (turbo, cached per package). Each package writes test-results.json; this script totals them and ends
// with one plain line, `tests: N passed, N failed, N skipped; in Chromium: N cases passed, N failed`: the
// cases that ran in a browser page are the vitest cases under a `describe('in Chromium')` (a browser suite
// reports each case its page ran as one; tools/test-utils/browser.ts), counted apart from the Node ones. The
// failed cases are listed again just above that line, each with the first line of its message, so that a log
// cut to its end still names them.
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
const env = { ...process.env, PADDOCK_USE: parsed.flags, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };
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
const browser = { passed: 0, failed: 0, skipped: 0 };
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
      if (t.ancestorTitles?.[0] !== 'in Chromium') continue;
      const key = t.status === 'passed' ? 'passed' : t.status === 'failed' ? 'failed' : 'skipped';
      browser[key]++;
    }
  }
}
passed -= browser.passed;
// The failures again at the end, where a log cut to its last lines still shows them.
if (failures.length > 0) console.log(`\nfailed:\n${failures.map((f) => `  ${f}`).join('\n')}`);
failed -= browser.failed;
skipped -= browser.skipped;
if (status !== 0 && failed + browser.failed === 0) failed = 1; // a build, typecheck or layering failure counts as one
const inBrowser = browser.passed + browser.failed > 0 || browser.skipped === 0 ? `${browser.passed} cases passed, ${browser.failed} failed` : `skipped (no Chromium at ${process.env.PADDOCK_CHROMIUM ?? '/usr/bin/chromium'}; ${browser.skipped} skipped)`;
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped; in Chromium: ${inBrowser}`);
function firstLine(text) {
  const line = String(text ?? '').split('\n').find((l) => l.trim() !== '') ?? '(no message)';
  return line.length > 400 ? `${line.slice(0, 400)}...` : line;
}

process.exit(status === 0 && failed === 0 && browser.failed === 0 ? 0 : 1);
