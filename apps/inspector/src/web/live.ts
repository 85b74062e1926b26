// The Node source: the page was served by `serveInspector` and reads its stream (server-sent events on
// /stream): the figures and marks so far, then a snapshot every interval and the program's marks.
import type { HeapSnapshot } from '@paddock/allocator';
import { decodeSnapshot } from '../codec.js';
import type { Figures, Mark } from '../stream.js';

export interface LiveHandlers {
  hello(backend: string, history: Figures[], marks: Mark[]): void;
  snapshot(s: HeapSnapshot): void;
  mark(m: Mark): void;
  status(text: string): void;
}

export function connectLive(on: LiveHandlers): EventSource {
  const source = new EventSource('./stream');
  source.addEventListener('hello', (e) => {
    const h = JSON.parse((e as MessageEvent<string>).data) as { backend: string; history: Figures[]; marks: Mark[] };
    on.hello(h.backend, h.history, h.marks);
    on.status('connected');
  });
  source.addEventListener('snapshot', (e) => on.snapshot(decodeSnapshot((e as MessageEvent<string>).data)));
  source.addEventListener('mark', (e) => on.mark(JSON.parse((e as MessageEvent<string>).data) as Mark));
  source.addEventListener('end', () => {
    on.status('the heap was closed');
    source.close();
  });
  source.onerror = () => on.status(source.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting');
  return source;
}
