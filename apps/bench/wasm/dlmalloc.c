/* wasi-libc's malloc (dlmalloc), exported bare: compiled at bench set-up by src/wasm.ts with Debian's
 * clang for wasm32-wasi against Debian's wasi-libc, called from JavaScript. */
#include <stdlib.h>
__attribute__((export_name("dl_malloc"))) void *dl_malloc(size_t n) { return malloc(n); }
__attribute__((export_name("dl_free"))) void dl_free(void *p) { free(p); }
