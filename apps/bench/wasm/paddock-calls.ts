// The cost of a malloc/free pair called from inside WebAssembly, three ways, for the wasm-calls measurement
// (src/wasm-calls.ts compiles it at set-up with the npm package's own compiler, asc):
//   paddockPairs: Paddock's malloc/free imported from JavaScript (the module over a Paddock heap's memory);
//   ownPairs: the module's own allocator, AssemblyScript's TLSF (the incremental runtime's `heap`), in its
//   own memory; crossings: two calls of an empty import, the boundary crossing alone.
// Each loop writes and reads one word of every block, so no allocator is asked for memory it never touches.

@external("env", "malloc") declare function paddockMalloc(size: usize): usize;
@external("env", "free") declare function paddockFree(ptr: usize): void;
@external("env", "nothing") declare function nothing(x: u32): u32;

export function paddockPairs(n: u32, size: usize): u32 {
  let s: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const p = paddockMalloc(size);
    store<u32>(p, i);
    s += load<u32>(p);
    paddockFree(p);
  }
  return s;
}

export function ownPairs(n: u32, size: usize): u32 {
  let s: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const p = heap.alloc(size);
    store<u32>(p, i);
    s += load<u32>(p);
    heap.free(p);
  }
  return s;
}

export function crossings(n: u32): u32 {
  let s: u32 = 0;
  for (let i: u32 = 0; i < n; i++) s += nothing(nothing(i));
  return s;
}

/** The end of the module's static data and stack: the heap's memory must start above it. */
export function staticEnd(): usize {
  return __heap_base;
}

/** The module's own allocator, exported bare, for JavaScript to call. */
export function ownMalloc(size: usize): usize {
  return heap.alloc(size);
}
export function ownFree(ptr: usize): void {
  heap.free(ptr);
}
