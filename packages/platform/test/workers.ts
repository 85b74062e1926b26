import { Worker } from 'node:worker_threads';

/** Runs the platform worker with `job`, resolving with its one message. */
export function runWorker<T>(workerData: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL('./workers/space-worker.mjs', import.meta.url), { workerData });
    let result: T | undefined;
    w.once('message', (m: T) => (result = m));
    w.once('error', reject);
    w.once('exit', (code) => (code === 0 && result !== undefined ? resolve(result) : reject(new Error(`worker exited with ${code}`))));
  });
}

/** A start gate: workers count in on word 1, then spin until word 0 is set. */
export function makeGate(): SharedArrayBuffer {
  return new SharedArrayBuffer(8);
}

export async function openGateWhenReady(gate: SharedArrayBuffer, workers: number): Promise<void> {
  const g = new Int32Array(gate);
  while (Atomics.load(g, 1) < workers) await new Promise((r) => setTimeout(r, 1));
  Atomics.store(g, 0, 1);
  Atomics.notify(g, 0);
}
