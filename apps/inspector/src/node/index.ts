/**
 * The inspector's Node entry: `serveInspector(heap)` serves the built inspector page from 127.0.0.1 (with the
 * cross-origin isolation headers a SharedArrayBuffer page needs) and streams the heap to it: a snapshot taken
 * on the calling agent every 100 ms, sent to each open page as a server-sent event, with the marks the program
 * adds. Only Node's own modules are used; the allocator packages stay free of them.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Heap, HeapSnapshot } from '@paddock/allocator';
import { encodeSnapshot } from '../codec.js';
import type { Figures, Mark } from '../stream.js';

/** Where Vite puts the page (the same from src/node and from dist/node). */
export const PAGE_DIR = fileURLToPath(new URL('../../dist/web/', import.meta.url));

export interface PageServerOptions {
  /** Port on 127.0.0.1 (default: PADDOCK_INSPECTOR_PORT, else any free port). */
  port?: number;
  /** The built page (default: this package's dist/web). */
  pageDir?: string;
}

export interface InspectorOptions extends PageServerOptions {
  /** Milliseconds between snapshots (default 100). */
  intervalMs?: number;
  /** Do not print the URL. */
  quiet?: boolean;
}

export interface PageServer {
  /** The page's address. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface InspectorServer extends PageServer {
  /** Puts a mark on the page's timeline now (what the program just did: 'producer 2 terminated'). */
  mark(label: string): void;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.map': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

/** How many figures the timeline keeps for a page that opens late (10 minutes at 100 ms). */
const HISTORY = 6000;

/** Answers a request for a file of the built page, or 404. */
function servePageFile(dir: string, req: IncomingMessage, res: ServerResponse): void {
  const path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
  const file = normalize(join(dir, path === '/' ? 'index.html' : path));
  if (!file.startsWith(normalize(dir + sep)) || !existsSync(file) || !statSync(file).isFile()) {
    res.writeHead(404, ISOLATION);
    res.end();
    return;
  }
  res.writeHead(200, { ...ISOLATION, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
  res.end(readFileSync(file));
}

async function listen(port: number | undefined, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<PageServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port ?? Number(process.env.PADDOCK_INSPECTOR_PORT ?? 0), '127.0.0.1', resolve);
  });
  const bound = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${bound}/`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function pageDirOf(options: PageServerOptions): string {
  const dir = options.pageDir ?? PAGE_DIR;
  if (!existsSync(join(dir, 'index.html'))) throw new Error(`the inspector page is not built (no ${join(dir, 'index.html')}): run pnpm build`);
  return dir;
}

/**
 * Serves the inspector page alone, whose own source is the in-page scenario (a heap and its workers in the page):
 * what any static server with the isolation headers does.
 */
export async function serveInspectorPage(options: PageServerOptions = {}): Promise<PageServer> {
  const dir = pageDirOf(options);
  return listen(options.port, (req, res) => servePageFile(dir, req, res));
}

/**
 * Serves the inspector for `heap` on 127.0.0.1 and prints its URL: a snapshot every `intervalMs` on this agent,
 * streamed to every open page (`/stream`, server-sent events). The timer never keeps the process alive; it stops
 * when the heap is closed or the server is.
 */
export async function serveInspector(heap: Heap, options: InspectorOptions = {}): Promise<InspectorServer> {
  const dir = pageDirOf(options);
  const intervalMs = options.intervalMs ?? 100;
  const clients = new Set<ServerResponse>();
  const history: Figures[] = [];
  const marks: Mark[] = [];
  const send = (event: string, data: string) => {
    for (const res of clients) if (!res.writableNeedDrain) res.write(`event: ${event}\ndata: ${data}\n\n`);
  };
  const take = () => {
    if (heap.isDetached) return stop();
    let s: HeapSnapshot;
    try {
      s = heap.snapshot();
    } catch (err) {
      console.error('paddock inspector: the snapshot failed, the stream stops:', err);
      return stop();
    }
    history.push({ t: s.takenAt, committed: s.committedBytes, resident: s.residentBytes, live: s.liveBytes });
    if (history.length > HISTORY) history.splice(0, history.length - HISTORY);
    if (clients.size > 0) send('snapshot', encodeSnapshot(s));
  };
  const timer = setInterval(take, intervalMs);
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    send('end', '{}');
  };
  const server = await listen(options.port, (req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/stream') return servePageFile(dir, req, res);
    res.writeHead(200, { ...ISOLATION, 'Content-Type': 'text/event-stream', Connection: 'keep-alive' });
    res.write(`event: hello\ndata: ${JSON.stringify({ backend: heap.backend, history, marks })}\n\n`);
    clients.add(res);
    req.on('close', () => clients.delete(res));
  });
  const url = `${server.url}?source=node`;
  if (!options.quiet) console.log(`paddock inspector: ${url}`);
  return {
    url,
    port: server.port,
    mark(label: string) {
      const m: Mark = { t: Date.now(), label, kind: 'program' };
      marks.push(m);
      send('mark', JSON.stringify(m));
    },
    close() {
      stop();
      for (const res of clients) res.end();
      clients.clear();
      return server.close();
    },
  };
}
