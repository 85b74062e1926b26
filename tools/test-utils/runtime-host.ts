// The runtime side of a runtime suite (see runtimes.ts): bundled into the suite's `main.js`, it starts agents as
// `node:worker_threads` Workers (Node, Bun and Deno all run them) and writes the suite's report to the file
// named by the first argument, then ends the process. Never imported by vitest itself.
import { writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { AgentHost, PageSuite } from './suite.js';

/** Agents as worker_threads Workers: `script` built for `variant` is `${script}-${variant}.js` beside main.js. */
export const threadAgents: AgentHost = (script, variant, data) => {
  const w = new Worker(new URL(`./${script}-${variant}.js`, import.meta.url), { workerData: data });
  let failure: Error | null = null;
  const failed: ((e: Error) => void)[] = [];
  const fail = (e: Error) => {
    failure ??= e;
    for (const f of failed.splice(0)) f(failure);
  };
  w.on('error', (e) => fail(new Error(`agent ${script}-${variant}: ${e.message}`)));
  w.on('exit', (code) => {
    if (code !== 0) fail(new Error(`agent ${script}-${variant} exited with code ${code}`));
  });
  return {
    post: (m) => w.postMessage(m),
    next: <T>(match: (m: T) => boolean) =>
      new Promise<T>((resolve, reject) => {
        if (failure) return reject(failure);
        const on = (m: T) => {
          if (!match(m)) return;
          w.off('message', on);
          resolve(m);
        };
        w.on('message', on);
        failed.push(reject);
      }),
    terminate: async () => {
      await w.terminate();
    },
  };
};

/** Registers the suite's cases with `register`, runs them, writes the report and ends the process. */
export async function reportSuite(suite: PageSuite, register: () => void): Promise<never> {
  const file = process.argv[2];
  if (!file) throw new Error('usage: main.js <report file>');
  const shared = typeof SharedArrayBuffer === 'function';
  let report: object;
  try {
    register();
    const results = await suite.run((name) => process.stderr.write(`case: ${name}\n`));
    report = { registered: suite.size, results, crossOriginIsolated: shared };
  } catch (err) {
    report = { error: (err as Error).stack ?? String(err), registered: suite.size, results: [], crossOriginIsolated: shared };
  }
  writeFileSync(file, JSON.stringify(report));
  process.exit(0);
}
