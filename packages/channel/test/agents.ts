// Starting the test agents (workers/agent.mjs) and collecting what they report.
import { Worker } from 'node:worker_threads';
import { conditionsOf, type Backend } from './backends.js';

/** The agent script: a producer or a consumer, by its workerData. */
const AGENT = new URL('./workers/agent.mjs', import.meta.url);
/** Words of the agents' shared counters (see workers/agent.mjs). */
export const SHARED_WORDS = 8;

/** Starts an agent under `backend`'s export condition. */
export function startAgent(backend: Backend, data: Record<string, unknown>): Worker {
  return new Worker(AGENT, { workerData: data, execArgv: conditionsOf(backend) });
}

/** Resolves with the agent's report; rejects if it fails or exits first. */
export function resultOf<T>(w: Worker): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`worker exited with code ${code} before it reported`)));
  });
}
