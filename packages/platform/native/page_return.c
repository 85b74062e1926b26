/*
 * Paddock's page-return addon: gives the pages of a range inside a SharedArrayBuffer back to the
 * operating system with madvise(MADV_DONTNEED). JavaScript cannot do this itself; without this addon,
 * decommit in @paddock/platform is bookkeeping only.
 *
 * discard(view, offset, length) -> bytes returned
 *   view   a Uint8Array over the shared buffer (found with napi_get_typedarray_info)
 *   offset byte offset of the range inside the view
 *   length byte length of the range
 * Only the page-aligned part of [offset, offset + length) is returned; the rest is left alone. After the
 * call the returned pages read as zeros in every agent, and they cost no resident memory until touched.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <node_api.h>

static napi_value throw_error(napi_env env, const char *code, const char *message, int type_error) {
  if (type_error) {
    napi_throw_type_error(env, code, message);
  } else {
    napi_throw_range_error(env, code, message);
  }
  return NULL;
}

static int read_index(napi_env env, napi_value value, double *out) {
  if (napi_get_value_double(env, value, out) != napi_ok) return 0;
  if (!(*out >= 0) || *out != (double)(uint64_t)*out) return 0; /* rejects NaN, negatives, fractions */
  return 1;
}

static napi_value discard(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3) {
    return throw_error(env, "ERR_PADDOCK_ARGS", "discard(view, offset, length) takes three arguments", 1);
  }
  bool is_typed = false;
  napi_is_typedarray(env, argv[0], &is_typed);
  if (!is_typed) return throw_error(env, "ERR_PADDOCK_ARGS", "discard: view must be a Uint8Array", 1);

  napi_typedarray_type type;
  size_t length = 0;
  void *data = NULL;
  napi_value buffer;
  size_t byte_offset = 0;
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &data, &buffer, &byte_offset) != napi_ok ||
      type != napi_uint8_array) {
    return throw_error(env, "ERR_PADDOCK_ARGS", "discard: view must be a Uint8Array", 1);
  }
  double offset, size;
  if (!read_index(env, argv[1], &offset) || !read_index(env, argv[2], &size)) {
    return throw_error(env, "ERR_PADDOCK_RANGE", "discard: offset and length must be non-negative integers", 0);
  }
  if (offset + size > (double)length) {
    return throw_error(env, "ERR_PADDOCK_RANGE", "discard: range lies outside the view", 0);
  }

  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) page = 4096;
  uintptr_t start = (uintptr_t)data + (uintptr_t)offset;
  uintptr_t end = start + (uintptr_t)size;
  uintptr_t first = (start + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
  uintptr_t last = end & ~((uintptr_t)page - 1);
  double returned = 0;
  if (last > first) {
    if (madvise((void *)first, last - first, MADV_DONTNEED) != 0) {
      char message[128];
      snprintf(message, sizeof message, "discard: madvise failed: %s", strerror(errno));
      napi_throw_error(env, "ERR_PADDOCK_MADVISE", message);
      return NULL;
    }
    returned = (double)(last - first);
  }
  napi_value result;
  napi_create_double(env, returned, &result);
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn, page_size;
  napi_create_function(env, "discard", NAPI_AUTO_LENGTH, discard, NULL, &fn);
  napi_set_named_property(env, exports, "discard", fn);
  long page = sysconf(_SC_PAGESIZE);
  napi_create_double(env, (double)(page > 0 ? page : 4096), &page_size);
  napi_set_named_property(env, exports, "pageSize", page_size);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
