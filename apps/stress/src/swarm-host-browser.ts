/**
 * The swarm's host in a browser page (`#swarm-host` under the `browser` condition, as a bundler resolves it):
 * workers are module Web Workers running the bundled swarm-worker.js beside the page, their start data their
 * first message, and peers talk over the page's MessageChannels. A Web Worker has no exit event and its
 * `terminate()` returns before its thread has stopped, so each worker holds a Web Lock from before it starts
 * until its thread is gone: `terminate()` resolves when the page is granted that lock (the worker is dead, its
 * agent can be reaped), and a worker that finishes says so in its last message before it closes itself. A
 * Web Worker never ends by itself (no departures: `leave` closes it, whatever the departure says), and a watch
 * cannot be tied to one worker (it reaps every agent whose lock goes): the runs watch none.
 */
import type { BlockBatch, FromSwarmWorker, LeaveHow, SwarmThread, SwarmWorkerData, SwarmWorkerIO, ToSwarmWorker } from './swarm-protocol.js';

export type PeerPort = MessagePort;

/** The host's own last message of a worker that closes itself (never one of the swarm's messages). */
const CLOSING = '@paddock/stress: closing';

let locks = 0;

/** Starts one swarm worker. */
export function startSwarmWorker(data: SwarmWorkerData): SwarmThread<PeerPort> {
  const w = new Worker(new URL('./swarm-worker.js', import.meta.url), { type: 'module', name: `swarm worker ${data.index}` });
  const lock = `paddock-swarm:${Math.random().toString(36).slice(2)}:${++locks}`;
  const exits: ((code: number) => void)[] = [];
  let exited = false;
  const exit = (code: number) => {
    if (exited) return;
    exited = true;
    for (const fn of exits.splice(0)) fn(code);
  };
  w.addEventListener('message', (e) => {
    if (e.data === CLOSING) exit(0);
  });
  w.postMessage({ data, lock });
  return {
    thread: 0, // a Web Worker's agents record no thread the page can name (watch goes by their Web Locks)
    watchable: null, // a watch in a page reaps every agent whose lock goes, not this worker's alone
    onMessage: (fn) => w.addEventListener('message', (e) => e.data !== CLOSING && fn(e.data as FromSwarmWorker)),
    onError: (fn) =>
      w.addEventListener('error', (e) => {
        e.preventDefault();
        fn(new Error(`${e.message} (${e.filename}:${e.lineno})`));
      }),
    onExit: (fn) => {
      if (exited) fn(1);
      else exits.push(fn);
    },
    post: (m, transfer = []) => w.postMessage(m, transfer),
    terminate: async () => {
      w.terminate();
      await navigator.locks.request(lock, () => {});
      exit(1);
    },
  };
}

/** A pair of connected ports for two workers. */
export function openChannel(): [PeerPort, PeerPort] {
  const ch = new MessageChannel();
  return [ch.port1, ch.port2];
}

/** Reports an uncaught error of the page (a reap a watch runs when a worker's lock goes); returns the undo. */
export function catchUncaught(fn: (e: Error) => void): () => void {
  const on = (e: ErrorEvent) => {
    e.preventDefault();
    fn(e.error instanceof Error ? e.error : new Error(e.message));
  };
  addEventListener('error', on);
  return () => removeEventListener('error', on);
}

/** A swarm worker's side: waits for its start data and holds its lock before the swarm starts in it. */
export async function swarmWorkerIO(): Promise<SwarmWorkerIO<PeerPort>> {
  const scope = globalThis as unknown as { onmessage: ((e: MessageEvent) => void) | null; postMessage(m: unknown): void; close(): void };
  const { data, lock } = await new Promise<{ data: SwarmWorkerData; lock: string }>((resolve) => {
    scope.onmessage = (e) => resolve(e.data);
  });
  const commands: MessageEvent[] = [];
  scope.onmessage = (e) => commands.push(e);
  await new Promise<void>((held) => {
    navigator.locks.request(lock, () => {
      held();
      return new Promise(() => {}); // held until the thread is gone
    });
  });
  // setImmediate: a message to itself runs after the events waiting now (a timer would be clamped to 4 ms).
  const immediate = new MessageChannel();
  const queue: (() => void)[] = [];
  immediate.port1.onmessage = () => queue.shift()?.();
  const close = (peers: PeerPort[]) => {
    for (const p of peers) p.close();
    scope.postMessage(CLOSING);
    scope.close();
  };
  return {
    data,
    post: (m: FromSwarmWorker) => scope.postMessage(m),
    onCommand: (fn: (m: ToSwarmWorker) => void) => {
      scope.onmessage = (e) => fn(e.data);
      for (const e of commands.splice(0)) fn(e.data);
    },
    onPeer: (p, fn: (b: BlockBatch) => void) => {
      p.onmessage = (e) => fn(e.data);
    },
    soon: (fn) => {
      queue.push(fn);
      immediate.port2.postMessage(0);
    },
    leave: (_how: LeaveHow, peers) => close(peers),
    finish: (peers) => close(peers),
  };
}
