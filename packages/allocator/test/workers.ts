import { Worker, type TransferListItem } from 'node:worker_threads';

/** Starts `script` (in test/workers) with `workerData`. */
export function startWorker(script: string, workerData: unknown, transferList: TransferListItem[] = []): Worker {
  return new Worker(new URL(`./workers/${script}`, import.meta.url), { workerData, transferList });
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
