// Test utilities shared by the packages' worker tests: start a set of workers together and collect what each posts.
import { Worker } from 'node:worker_threads';
import type { AgentHost } from './suite.js';

/** Sync words shared with test workers: [ready, go, running, phase barrier, phase barrier 2]. */
export const SYNC_WORDS = 8;

/**
 * Starts `count` workers of `script`, each with `data(i)` plus `{ index, count, sync }`, holds them until
 * all are ready, releases them together and resolves with the message each posts. Rejects on the first
 * worker error or non-zero exit.
 */
export async function runWorkers<T>(script: URL, count: number, data: (index: number) => Record<string, unknown>): Promise<T[]> {
  const sync = new SharedArrayBuffer(SYNC_WORDS * 4);
  const flags = new Int32Array(sync);
  let failure: unknown = null;
  const results: Promise<T>[] = [];
  for (let index = 0; index < count; index++) {
    const worker = new Worker(script, { workerData: { ...data(index), index, count, sync } });
    results.push(
      new Promise<T>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', (err) => {
          failure = err;
          reject(err);
        });
        worker.once('exit', (code) => {
          if (code !== 0) {
            failure ??= new Error(`worker ${index} exited with code ${code}`);
            reject(failure);
          }
        });
      }),
    );
  }
  const all = Promise.all(results);
  all.catch(() => {});
  while (Atomics.load(flags, 0) < count && failure === null) await new Promise((r) => setTimeout(r, 2));
  if (failure !== null) throw failure;
  Atomics.store(flags, 1, 1);
  Atomics.notify(flags, 1);
  return all;
}

/** Resolves with the first message of `w` that satisfies `match`. */
export function nextMessage<T>(w: Worker, match: (m: T) => boolean = () => true): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: T) => {
      if (!match(m)) return;
      w.off('message', onMessage);
      w.off('error', reject);
      resolve(m);
    };
    w.on('message', onMessage);
    w.once('error', reject);
  });
}

/**
 * Agents as worker_threads Workers, for cases shared with the browser (see suite.ts): `script` is
 * `${script}.mjs` in `dir`, started under the export condition of `variant` (a backend) when one is given.
 */
export function nodeAgents(dir: URL, conditions: (variant: string) => string[] = () => []): AgentHost {
  return (script, variant, data) => {
    const w = new Worker(new URL(`${script}.mjs`, dir), { workerData: data, execArgv: conditions(variant).map((c) => `--conditions=${c}`) });
    return {
      post: (m) => w.postMessage(m),
      next: <T>(match: (m: T) => boolean) => nextMessage(w, match),
      terminate: async () => {
        await w.terminate();
      },
    };
  };
}
