// One agent of the block exchange, the same in a Node worker and a Web Worker (each wires its messages to
// `exchangeAgent`): the agent is both the block-exchange wasm module and JavaScript over one heap. It
// instantiates the module over the heap's own WebAssembly.Memory with Paddock's malloc/free as its imports, and
// on request allocates stamped blocks from wasm or from JS, or checks and frees blocks another agent allocated,
// from wasm or from JS. A block list is 8 bytes a block in the heap: [pointer, size].

/** Instantiates the module in this agent over `heap`; returns the handler of the exchange's requests and the ready message. */
export function exchangeAgent(heap, module, backend) {
  const wasm = new WebAssembly.Instance(module, {
    env: {
      memory: heap.handle.space.memory,
      // wasm passes and takes i32: a pointer at or above 2 GiB arrives negative.
      malloc: (size) => heap.malloc(size >>> 0),
      free: (ptr) => heap.free(ptr >>> 0),
    },
  }).exports;

  /** JS allocates `count` blocks of the module's sizes for agent `tag` and stamps every byte. */
  const jsAllocStamped = (list, count, tag) => {
    const blocks = [];
    for (let k = 0; k < count; k++) {
      const size = wasm.sizeFor(tag, k);
      blocks.push(heap.malloc(size), size);
    }
    const u8 = heap.u8;
    const u32 = heap.u32;
    for (let k = 0; k < count; k++) {
      const p = blocks[2 * k];
      const size = blocks[2 * k + 1];
      for (let j = 0; j < size; j++) u8[p + j] = wasm.stampByte(tag, k, j);
      u32[(list >>> 2) + 2 * k] = p;
      u32[(list >>> 2) + 2 * k + 1] = size;
    }
    return count;
  };

  /** JS checks the stamp of each block agent `tag` allocated, then frees it. Returns how many were wrong. */
  const jsVerifyAndFree = (list, count, tag) => {
    const u8 = heap.u8;
    const u32 = heap.u32;
    let bad = 0;
    for (let k = 0; k < count; k++) {
      const p = u32[(list >>> 2) + 2 * k];
      const size = u32[(list >>> 2) + 2 * k + 1];
      if (size !== wasm.sizeFor(tag, k)) bad++;
      else {
        for (let j = 0; j < size; j++) {
          if (u8[p + j] !== wasm.stampByte(tag, k, j)) {
            bad++;
            break;
          }
        }
      }
      heap.free(p);
    }
    return bad;
  };

  const handle = (m) => {
    if (m.kind === 'alloc') {
      const list = heap.malloc(m.count * 8);
      const got = m.side === 'wasm' ? wasm.allocStamped(list, m.count, m.tag) : jsAllocStamped(list, m.count, m.tag);
      return { kind: 'listed', list, got };
    }
    if (m.kind === 'free') {
      const bad = m.side === 'wasm' ? wasm.verifyAndFree(m.list, m.count, m.tag) : jsVerifyAndFree(m.list, m.count, m.tag);
      heap.free(m.list);
      heap.flushCache();
      heap.flush();
      return { kind: 'freed', bad };
    }
    if (m.kind === 'drain') {
      heap.drain();
      return { kind: 'drained' };
    }
    if (m.kind === 'stop') {
      const tableSum = wasm.tableSum();
      heap.detach();
      return { kind: 'stopped', tableSum };
    }
    throw new Error(`block exchange: unknown request ${m.kind}`);
  };
  return { handle, ready: { kind: 'ready', backend, staticEnd: wasm.staticEnd() } };
}
