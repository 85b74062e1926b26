/*
 * The native limit of the `channels` group: blocks handed between threads through a bounded MPMC queue of
 * pointers (stamped slots: each slot carries the position it expects next, producers and consumers claim
 * positions with a CAS on their counter), in C with pthreads and mimalloc (-DUSE_MIMALLOC -lmimalloc), or
 * glibc's malloc when built plain.
 *
 *   channels queue producers=P consumers=C size=B batch=K ms=T capacity=N
 *
 * Each producer, until told to stop (after T ms), mallocs a block of B bytes, writes a tag into every 32-bit
 * word and enqueues the pointer (K = 1: one at a time; K > 1: it mallocs and writes K blocks, then enqueues
 * them). Each consumer dequeues (K > 1: up to K at once, waiting only for the first), reads every word,
 * checks they all hold the block's tag, and frees it. A full or empty queue: spin a little, then
 * sched_yield. The last producer to stop enqueues one end marker per consumer. The figure: blocks received
 * over the time from the start (every thread ready) to the last consumer's end, one JSON line on stdout
 * (as `programs.c` writes it: ok, seconds, ops, bad, rss0, maxrss). `bad` counts blocks whose words
 * disagree and a sum of tags sent that differs from the sum received (a lost or duplicated block).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef USE_MIMALLOC
#include <mimalloc.h>
#define MALLOC(n) mi_malloc(n)
#define FREE(p) mi_free(p)
#define ALLOC_NAME "mimalloc"
#else
#define MALLOC(n) malloc(n)
#define FREE(p) free(p)
#define ALLOC_NAME "glibc"
#endif

#define MAX_AGENTS 64
#define MAX_BATCH 1024

static int g_argc;
static char **g_argv;

static long param(const char *key, long def) {
  size_t n = strlen(key);
  for (int i = 2; i < g_argc; i++) {
    if (strncmp(g_argv[i], key, n) == 0 && g_argv[i][n] == '=') return atol(g_argv[i] + n + 1);
  }
  return def;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = 0;
  size_t n = strlen(key);
  if (f) {
    while (fgets(line, sizeof line, f))
      if (strncmp(line, key, n) == 0) {
        kb = atol(line + n);
        break;
      }
    fclose(f);
  }
  return kb;
}

static void die(const char *msg) {
  printf("{\"ok\":false,\"alloc\":\"%s\",\"error\":\"%s\"}\n", ALLOC_NAME, msg);
  fflush(stdout);
  exit(1);
}

/* ---- the queue: a ring of stamped slots --------------------------------------------------------- */

typedef struct {
  _Atomic size_t stamp;
  void *ptr;
} slot_t;

static struct {
  _Alignas(64) _Atomic size_t tail; /* next position to enqueue */
  _Alignas(64) _Atomic size_t head; /* next position to dequeue */
  _Alignas(64) slot_t *slots;
  size_t mask;
} q;

static void queue_init(size_t capacity) {
  q.slots = aligned_alloc(64, capacity * sizeof(slot_t));
  if (!q.slots) die("out of memory");
  for (size_t i = 0; i < capacity; i++) atomic_store_explicit(&q.slots[i].stamp, i, memory_order_relaxed);
  q.mask = capacity - 1;
  atomic_store(&q.tail, 0);
  atomic_store(&q.head, 0);
}

static int try_enqueue(void *ptr) {
  size_t pos = atomic_load_explicit(&q.tail, memory_order_relaxed);
  for (;;) {
    slot_t *s = &q.slots[pos & q.mask];
    size_t stamp = atomic_load_explicit(&s->stamp, memory_order_acquire);
    intptr_t d = (intptr_t)stamp - (intptr_t)pos;
    if (d == 0) {
      if (atomic_compare_exchange_weak_explicit(&q.tail, &pos, pos + 1, memory_order_relaxed, memory_order_relaxed)) {
        s->ptr = ptr;
        atomic_store_explicit(&s->stamp, pos + 1, memory_order_release);
        return 1;
      }
    } else if (d < 0) {
      return 0; /* full */
    } else {
      pos = atomic_load_explicit(&q.tail, memory_order_relaxed);
    }
  }
}

/* 1 with *out set, 0 when empty. */
static int try_dequeue(void **out) {
  size_t pos = atomic_load_explicit(&q.head, memory_order_relaxed);
  for (;;) {
    slot_t *s = &q.slots[pos & q.mask];
    size_t stamp = atomic_load_explicit(&s->stamp, memory_order_acquire);
    intptr_t d = (intptr_t)stamp - (intptr_t)(pos + 1);
    if (d == 0) {
      if (atomic_compare_exchange_weak_explicit(&q.head, &pos, pos + 1, memory_order_relaxed, memory_order_relaxed)) {
        *out = s->ptr;
        atomic_store_explicit(&s->stamp, pos + q.mask + 1, memory_order_release);
        return 1;
      }
    } else if (d < 0) {
      return 0; /* empty */
    } else {
      pos = atomic_load_explicit(&q.head, memory_order_relaxed);
    }
  }
}

static void backoff(int *spins) {
  if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    sched_yield();
  }
}

static void enqueue(void *ptr) {
  int spins = 0;
  while (!try_enqueue(ptr)) backoff(&spins);
}

static void *dequeue(void) {
  void *p;
  int spins = 0;
  while (!try_dequeue(&p)) backoff(&spins);
  return p;
}

/* ---- the agents --------------------------------------------------------------------------------- */

static long g_producers, g_consumers, g_size, g_batch;
static _Atomic int g_stop;
static _Atomic long g_ready;
static _Atomic long g_left;
static _Atomic uint64_t g_sent_sum, g_recv_sum;
static _Atomic long g_received, g_bad;
static double g_end[MAX_AGENTS];

static void wait_start(void) {
  atomic_fetch_add(&g_ready, 1);
  while (atomic_load(&g_ready) <= g_producers + g_consumers) sched_yield();
}

static void *producer(void *arg) {
  long id = (long)arg;
  long words = g_size / 4;
  uint64_t sum = 0;
  uint32_t seq = 0;
  void *batch[MAX_BATCH];
  wait_start();
  while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
    for (long k = 0; k < g_batch; k++) {
      uint32_t *w = MALLOC(g_size);
      if (!w) die("out of memory");
      uint32_t tag = ((uint32_t)id << 24) ^ ++seq;
      for (long i = 0; i < words; i++) w[i] = tag;
      sum += tag;
      batch[k] = w;
    }
    for (long k = 0; k < g_batch; k++) enqueue(batch[k]);
  }
  atomic_fetch_add(&g_sent_sum, sum);
  if (atomic_fetch_sub(&g_left, 1) == 1)
    for (long c = 0; c < g_consumers; c++) enqueue(NULL);
  return NULL;
}

static void *consumer(void *arg) {
  long id = (long)arg;
  long words = g_size / 4;
  uint64_t sum = 0;
  long received = 0, bad = 0;
  void *batch[MAX_BATCH];
  int open = 1;
  wait_start();
  while (open) {
    long n = 0;
    batch[n++] = dequeue();
    while (n < g_batch && batch[n - 1] != NULL && try_dequeue(&batch[n])) n++; /* one end marker each */
    for (long k = 0; k < n; k++) {
      uint32_t *w = batch[k];
      if (w == NULL) {
        open = 0;
        continue;
      }
      uint32_t tag = w[0];
      uint32_t diff = 0;
      for (long i = 1; i < words; i++) diff |= w[i] ^ tag;
      if (diff) bad++;
      sum += tag;
      received++;
      FREE(w);
    }
  }
  g_end[g_producers + id] = now_s();
  atomic_fetch_add(&g_recv_sum, sum);
  atomic_fetch_add(&g_received, received);
  atomic_fetch_add(&g_bad, bad);
  return NULL;
}

int main(int argc, char **argv) {
  g_argc = argc;
  g_argv = argv;
  if (argc < 2 || strcmp(argv[1], "queue") != 0) die("usage: channels queue producers=P consumers=C size=B batch=K ms=T capacity=N");
  g_producers = param("producers", 1);
  g_consumers = param("consumers", 1);
  g_size = param("size", 64);
  g_batch = param("batch", 1);
  long ms = param("ms", 200);
  long capacity = param("capacity", 256);
  if (g_producers < 1 || g_consumers < 1 || g_producers + g_consumers > MAX_AGENTS) die("bad agent count");
  if (g_size < 4 || g_batch < 1 || g_batch > MAX_BATCH || capacity < 2 || (capacity & (capacity - 1))) die("bad parameter");
  long rss0 = status_kb("VmRSS:") * 1024L;
  queue_init((size_t)capacity);
  atomic_store(&g_left, g_producers);
  pthread_t th[MAX_AGENTS];
  for (long i = 0; i < g_producers; i++) pthread_create(&th[i], NULL, producer, (void *)i);
  for (long i = 0; i < g_consumers; i++) pthread_create(&th[g_producers + i], NULL, consumer, (void *)i);
  while (atomic_load(&g_ready) < g_producers + g_consumers) sched_yield();
  double t0 = now_s();
  atomic_fetch_add(&g_ready, 1); /* go */
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  atomic_store(&g_stop, 1);
  for (long i = 0; i < g_producers + g_consumers; i++) pthread_join(th[i], NULL);
  double t1 = t0;
  for (long i = 0; i < g_consumers; i++)
    if (g_end[g_producers + i] > t1) t1 = g_end[g_producers + i];
  long bad = atomic_load(&g_bad) + (atomic_load(&g_sent_sum) != atomic_load(&g_recv_sum) ? 1 : 0);
  printf("{\"ok\":true,\"alloc\":\"%s\",\"workload\":\"queue\",\"seconds\":%.9f,\"ops\":%ld,\"bad\":%ld,\"rss0\":%ld,\"maxrss\":%ld}\n",
         ALLOC_NAME, t1 - t0, atomic_load(&g_received), bad, rss0, status_kb("VmHWM:") * 1024L);
  return 0;
}
