/**
 * The swarm's host in Node (`#swarm-host` by default): workers are worker_threads Workers running
 * dist/swarm-worker.js with their start data as `workerData`, peers talk over worker_threads MessageChannels,
 * and a worker's thread ends the way a departure says (its event loop runs dry, `process.exit()`, or its
 * ports close). swarm-host-browser.ts is the same for a browser page.
 */
import { MessageChannel, Worker, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { BlockBatch, FromSwarmWorker, LeaveHow, SwarmThread, SwarmWorkerData, SwarmWorkerIO, ToSwarmWorker } from './swarm-protocol.js';

export type PeerPort = MessagePort;

/** Starts one swarm worker. */
export function startSwarmWorker(data: SwarmWorkerData): SwarmThread<PeerPort> {
  const w = new Worker(new URL('./swarm-worker.js', import.meta.url), { workerData: data });
  return {
    thread: w.threadId + 1, // the key its agents record for their thread (see threadKey in the allocator)
    watchable: w,
    onMessage: (fn) => w.on('message', fn),
    onError: (fn) => w.on('error', fn),
    onExit: (fn) => w.once('exit', fn),
    post: (m, transfer = []) => w.postMessage(m, transfer),
    terminate: () => w.terminate(),
  };
}

/** A pair of connected ports for two workers. */
export function openChannel(): [PeerPort, PeerPort] {
  const ch = new MessageChannel();
  return [ch.port1, ch.port2];
}

/** Reports what would otherwise end the process (a reap a watch runs in a worker's 'exit' event); returns the undo. */
export function catchUncaught(fn: (e: Error) => void): () => void {
  process.on('uncaughtException', fn);
  return () => process.off('uncaughtException', fn);
}

/**
 * Closes a port; the port to the main thread in Deno has no close() (nor removeAllListeners()), where the worker
 * scope's own close() ends the thread as closing it does in Node and Bun.
 */
function closePort(p: MessagePort): void {
  if (typeof p.close === 'function') p.close();
  else (globalThis as { close?: () => void }).close?.();
}

/** A swarm worker's side: its start data, its port to the main thread, its peers. */
export async function swarmWorkerIO(): Promise<SwarmWorkerIO<PeerPort>> {
  const port = parentPort!;
  // The 'message' listeners this side added, by port: a natural departure takes them off again (Deno's ports
  // have no removeAllListeners()).
  const listeners = new Map<MessagePort, ((m: unknown) => void)[]>();
  const listen = <M>(p: MessagePort, fn: (m: M) => void) => {
    listeners.set(p, [...(listeners.get(p) ?? []), fn as (m: unknown) => void]);
    p.on('message', fn);
  };
  return {
    data: workerData as SwarmWorkerData,
    post: (m: FromSwarmWorker) => port.postMessage(m),
    onCommand: (fn: (m: ToSwarmWorker) => void) => listen(port, fn),
    onPeer: (p, fn: (b: BlockBatch) => void) => listen(p, fn),
    soon: (fn) => setImmediate(fn),
    leave: (how: LeaveHow, peers) => {
      if (how === 'exit') process.exit(0);
      // 'close': the ports close. 'natural': nothing listens and nothing keeps the event loop alive any more
      // (a port stays referenced without listeners), so the loop runs dry.
      for (const p of [...peers, port]) {
        if (how === 'close') closePort(p);
        else {
          for (const fn of listeners.get(p) ?? []) p.off('message', fn);
          p.unref();
        }
      }
    },
    finish: (peers) => {
      for (const p of peers) p.close();
      closePort(port);
    },
  };
}
