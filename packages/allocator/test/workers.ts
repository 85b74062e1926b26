import { Worker, type TransferListItem } from 'node:worker_threads';

/** Starts `script` (in test/workers) with `workerData`. */
export function startWorker(script: string, workerData: unknown, transferList: TransferListItem[] = []): Worker {
  return new Worker(new URL(`./workers/${script}`, import.meta.url), { workerData, transferList });
}

export { nextMessage } from '../../../tools/test-utils/workers.js';
