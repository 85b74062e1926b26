// AssemblyScript's TLSF, the memory manager of its `incremental` runtime, exported bare: compiled at
// bench set-up by src/wasm.ts with the npm package's own compiler (asc), called from JavaScript.
export function tlsf_malloc(size: usize): usize {
  return heap.alloc(size);
}
export function tlsf_free(ptr: usize): void {
  heap.free(ptr);
}
