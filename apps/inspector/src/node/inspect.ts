#!/usr/bin/env node
/**
 * `pnpm inspect [script]`: runs the demo workload (or `script`, a program that calls `serveInspector(heap)`)
 * and prints the URL of its live view. The script runs in this process, its arguments after it.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [script, ...rest] = process.argv.slice(2);
if (script === undefined) await import('./demo-workload.js');
else {
  process.argv = [process.argv[0]!, resolve(script), ...rest];
  await import(pathToFileURL(resolve(script)).href);
}
