// An AssemblyScript module that allocates in a Paddock heap: it imports the heap's shared memory and Paddock's
// `malloc` / `free` (env.memory, env.malloc, env.free), and has no allocator of its own (the `stub` runtime,
// never called). It stamps every block it allocates and checks the stamp of every block it frees, so blocks
// can change hands with JavaScript agents and any lost, shared or overwritten block shows.
//
// Where its own bytes live: the module keeps its state in wasm globals and locals (per instance); its only
// memory is the read-only size table below, an active data segment under `__heap_base`, which stays in the
// memory's first page. The heap is built over a memory that already has that page (`createHeap({ memory })`
// starts the heap after the memory's length), so Paddock never hands those bytes out; each instance writes
// the same bytes there again when it is instantiated. It uses no shadow stack (the stub runtime has none).
//
// A block list is 8 bytes a block in heap memory: [pointer u32, size u32].

@external("env", "malloc") declare function malloc(size: usize): usize;
@external("env", "free") declare function free(ptr: usize): void;

/** Block sizes, drawn in turn: the small classes, both sides of 4 KiB, and a few above the class sizes. */
const SIZES: StaticArray<u32> = [8, 16, 24, 32, 48, 64, 96, 100, 128, 200, 256, 500, 512, 1000, 2048, 4000, 4096, 4100, 9000, 40000];

/** The end of the module's static data: the heap must start at or above it. */
export function staticEnd(): usize {
  return __heap_base;
}

/** A sum over the size table, to show at the end that the heap never wrote into the module's data. */
export function tableSum(): u32 {
  let s: u32 = 0;
  for (let i = 0; i < SIZES.length; i++) s = s * 31 + unchecked(SIZES[i]);
  return s;
}

/** The size of block `k` of agent `tag`: big blocks are rare (one in 50), the rest cycles the small sizes. */
export function sizeFor(tag: u32, k: u32): u32 {
  const n = <u32>SIZES.length;
  const i = (k * 7 + tag) % n;
  return i >= n - 2 && k % 50 != 0 ? unchecked(SIZES[i - 4]) : unchecked(SIZES[i]);
}

/** Byte `j` of block `k` of agent `tag` (JavaScript agents stamp and check with it too). */
export function stampByte(tag: u32, k: u32, j: u32): u8 {
  return <u8>(tag * 131 + k * 7 + j * 13 + (k >>> 8));
}

/** Allocates `count` blocks through Paddock, stamps every byte of each, records them in `list`. Returns how many it got. */
export function allocStamped(list: usize, count: u32, tag: u32): u32 {
  for (let k: u32 = 0; k < count; k++) {
    const size = sizeFor(tag, k);
    const p = malloc(size);
    if (p == 0) return k;
    for (let j: u32 = 0; j < size; j++) store<u8>(p + j, stampByte(tag, k, j));
    store<u32>(list + (<usize>k << 3), <u32>p);
    store<u32>(list + (<usize>k << 3) + 4, size);
  }
  return count;
}

/** Checks the stamp of each of the `count` blocks in `list` (stamped by agent `tag`), then frees it through Paddock. Returns how many were wrong. */
export function verifyAndFree(list: usize, count: u32, tag: u32): u32 {
  let bad: u32 = 0;
  for (let k: u32 = 0; k < count; k++) {
    const p = <usize>load<u32>(list + (<usize>k << 3));
    const size = load<u32>(list + (<usize>k << 3) + 4);
    if (size != sizeFor(tag, k)) bad++;
    else {
      for (let j: u32 = 0; j < size; j++) {
        if (load<u8>(p + j) != stampByte(tag, k, j)) {
          bad++;
          break;
        }
      }
    }
    free(p);
  }
  return bad;
}
