// A program that shows its own heap in the inspector: one line, `serveInspector(heap)`, prints the URL of the
// live view. Run it with `pnpm inspect apps/inspector/examples/serve.mjs` (or plain `node` after `pnpm build`).
// It keeps a window of blocks of random sizes on the main thread and replaces some every 50 ms, until Ctrl-C.
import { createHeap } from '@paddock/allocator';
import { serveInspector } from '@paddock/inspector';

const heap = createHeap({ maxBytes: 256 << 20 });
const inspector = await serveInspector(heap, { port: Number(process.argv[2] ?? 0) });

const blocks = [];
let seed = 1;
const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0);
setInterval(() => {
  for (let i = 0; i < 200; i++) blocks.push(heap.malloc(16 + (random() % (random() % 8 === 0 ? 200_000 : 2000))));
  while (blocks.length > 8000) heap.free(blocks.splice(random() % blocks.length, 1)[0]);
  heap.tick();
}, 50);
setInterval(() => {
  blocks.splice(0).forEach((p) => heap.free(p));
  heap.returnIdle();
  inspector.mark('freed everything');
}, 15_000);
