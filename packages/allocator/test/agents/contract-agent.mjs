// The contract suite's agent, whatever thread runs it: attaches to the heap it is sent, frees what it is sent
// and allocates blocks for the other side to free, reporting the backend of the build it was given (the one
// `@paddock/allocator` resolved to under its backend's export condition). Its entries: workers/contract-agent.mjs
// (a worker_threads Worker) and browser/contract-agent.mjs (a module Web Worker).

/** Serves the contract agent on `endpoint` (see AgentEndpoint in tools/test-utils/suite.ts) with `lib`'s heap. */
export function serveContractAgent(lib, endpoint) {
  const { attachHeap, BACKEND } = lib;
  const heap = attachHeap(endpoint.data.handle);
  endpoint.onMessage((m) => {
    if (m.kind === 'free') {
      let bad = 0;
      for (const [p, tag] of m.blocks) {
        if (heap.u32[p >>> 2] !== tag) bad++;
        heap.free(p);
      }
      heap.flushCache();
      heap.flush();
      endpoint.post({ kind: 'freed', bad, backend: BACKEND });
    } else if (m.kind === 'alloc') {
      const blocks = [];
      for (let i = 0; i < m.count; i++) {
        const p = heap.malloc(m.size);
        heap.u32[p >>> 2] = 0xc0de0000 + i;
        blocks.push([p, 0xc0de0000 + i]);
      }
      endpoint.post({ kind: 'allocated', blocks });
    } else if (m.kind === 'stop') {
      heap.detach();
      endpoint.post({ kind: 'stopped' });
      endpoint.close();
    }
  });
  endpoint.post({ kind: 'ready', backend: BACKEND });
}
