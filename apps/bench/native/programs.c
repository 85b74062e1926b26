/*
 * The native references: every workload of apps/bench in C, with POSIX threads for agents, against
 * glibc's malloc (built plain) or mimalloc (built with -DUSE_MIMALLOC, linked with -lmimalloc: Debian's
 * libmimalloc-dev). Compiled at bench time with the machine's cc (src/native.ts); never shipped as a
 * binary. Each shape follows its JavaScript twin in src/kernels.ts step for step: the same sequences
 * (mulberry32, the same seeds), the same sizes, the same hand-over rings, the same words written into
 * each block. Usage: programs WORKLOAD key=value ...; prints one JSON line.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <math.h>

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

/* ---- parameters, clock, memory ------------------------------------------------------------------ */

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

static long rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, res = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0;
    fclose(f);
  }
  return res * sysconf(_SC_PAGESIZE);
}

/* The peak since main() began: the high-water mark was reset there (ru_maxrss would carry the parent's
 * peak across fork and exec). */
static long maxrss_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  if (f) {
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
    fclose(f);
  }
  if (kb >= 0) return kb * 1024L;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss * 1024L;
}

static void reset_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (f) {
    fputs("5", f);
    fclose(f);
  }
}

static void sleep_ms(double ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6)};
  nanosleep(&ts, NULL);
}

static void die(const char *msg) {
  printf("{\"ok\":false,\"alloc\":\"%s\",\"error\":\"%s\"}\n", ALLOC_NAME, msg);
  fflush(stdout);
  exit(1);
}

static void *xmalloc(size_t n) {
  void *p = MALLOC(n);
  if (!p) die("out of memory");
  return p;
}

/* ---- the workloads' PRNG (mulberry32) and draws, bit for bit the JavaScript ones ------------------
 * (tools/test-utils/prng.mjs and src/draws.ts; test/native-draws.test.ts compares them) */

typedef struct { uint32_t s; } rng_t;
static inline uint32_t rnext(rng_t *r) {
  r->s += 0x6d2b79f5u;
  uint32_t t = (r->s ^ (r->s >> 15)) * (1u | r->s);
  t = (t + ((t ^ (t >> 7)) * (61u | t))) ^ t;
  return t ^ (t >> 14);
}
/* lo + floor(u / 2^32 * (hi - lo + 1)) */
static inline long between(rng_t *r, long lo, long hi) {
  return lo + (long)((double)rnext(r) / 4294967296.0 * (double)(hi - lo + 1));
}
/* log-uniform in [lo, hi]: lo * 2^(u * log2(hi / lo)), floored (the JS twin: logUniform). */
static inline long log_uniform(rng_t *r, long lo, long hi) {
  double u = (double)rnext(r) / 4294967296.0;
  long s = (long)(lo * exp2(u * log2((double)hi / (double)lo)));
  return s < lo ? lo : s > hi ? hi : s;
}

static void touch(char *p, long n) {
  for (char *q = p; q < p + n; q = (char *)(((uintptr_t)q & ~(uintptr_t)4095) + 4096)) *q = 1;
  if (n > 0) p[n - 1] = 1;
}

/* ---- agents ------------------------------------------------------------------------------------- */

static atomic_int g_stop;
static atomic_int g_ready;
static atomic_int g_go;

static void relax(unsigned *spins) {
  if (++*spins < 64) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  } else {
    sched_yield();
  }
}

static void barrier_wait(int agents) {
  atomic_fetch_add(&g_ready, 1);
  unsigned spins = 0;
  while (atomic_load(&g_go) == 0) {
    if (atomic_load(&g_ready) >= agents) atomic_store(&g_go, 1);
    relax(&spins);
  }
}

/* Single-producer single-consumer ring of pointers; head and tail count entries. */
typedef struct {
  _Atomic uint64_t head;
  char pad1[56];
  _Atomic uint64_t tail;
  char pad2[56];
  void **buf;
  uint64_t mask;
} ring_t;

static void ring_init(ring_t *r, uint64_t cap) {
  uint64_t c = 1;
  while (c < cap) c <<= 1;
  r->buf = calloc(c, sizeof(void *));
  r->mask = c - 1;
  atomic_store(&r->head, 0);
  atomic_store(&r->tail, 0);
}

/* Waits for room for n entries; 0 when stopped first. */
static int ring_room(ring_t *r, uint64_t head, uint64_t n) {
  unsigned spins = 0;
  while (head + n - atomic_load_explicit(&r->tail, memory_order_acquire) > r->mask + 1) {
    if (atomic_load(&g_stop)) return 0;
    relax(&spins);
  }
  return 1;
}

/* Waits until more than `tail` entries were published; returns the head seen, or tail when stopped. */
static uint64_t ring_wait(ring_t *r, uint64_t tail) {
  unsigned spins = 0;
  for (;;) {
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    if (h != tail) return h;
    if (atomic_load(&g_stop)) return tail;
    relax(&spins);
  }
}

typedef struct {
  int id;
  int agents;
  double t0, t1;
  long ops;
  long bad;
  void *arg;
} agent_t;

typedef void *(*agent_fn)(void *);

/* Runs `agents` threads of fn; when ms > 0 the main thread sets the stop flag after ms. */
static void run_agents(agent_t *a, int agents, agent_fn fn, double ms) {
  pthread_t *th = calloc(agents, sizeof(pthread_t));
  atomic_store(&g_stop, 0);
  atomic_store(&g_ready, 0);
  atomic_store(&g_go, 0);
  for (int i = 0; i < agents; i++) {
    a[i].id = i;
    a[i].agents = agents;
    pthread_create(&th[i], NULL, fn, &a[i]);
  }
  if (ms > 0) {
    while (atomic_load(&g_go) == 0) sleep_ms(0.2);
    sleep_ms(ms);
    atomic_store(&g_stop, 1);
  }
  for (int i = 0; i < agents; i++) pthread_join(th[i], NULL);
  free(th);
}

static double span(agent_t *a, int agents) {
  double t0 = a[0].t0, t1 = a[0].t1;
  for (int i = 1; i < agents; i++) {
    if (a[i].t0 < t0) t0 = a[i].t0;
    if (a[i].t1 > t1) t1 = a[i].t1;
  }
  return t1 - t0;
}

static long total_ops(agent_t *a, int agents) {
  long n = 0;
  for (int i = 0; i < agents; i++) n += a[i].ops;
  return n;
}

static long total_bad(agent_t *a, int agents) {
  long n = 0;
  for (int i = 0; i < agents; i++) n += a[i].bad;
  return n;
}

static long g_rss0;

static void report(const char *workload, double seconds, long ops, long bad, const char *extra) {
  printf("{\"ok\":true,\"alloc\":\"%s\",\"workload\":\"%s\",\"seconds\":%.9f,\"ops\":%ld,\"bad\":%ld,"
         "\"rss0\":%ld,\"maxrss\":%ld%s%s}\n",
         ALLOC_NAME, workload, seconds, ops, bad, g_rss0, maxrss_bytes(), extra[0] ? "," : "", extra);
  fflush(stdout);
}

/* ---- pair and churn ------------------------------------------------------------------------------ */

static void w_pair(void) {
  long ops = param("ops", 1000000);
  double t0 = now_s();
  for (long i = 0; i < ops; i++) {
    void *p = MALLOC(32);
    if (!p) die("out of memory");
    /* keep the pair from being folded away */
    __asm__ volatile("" : : "r"(p) : "memory");
    FREE(p);
  }
  double t1 = now_s();
  report("pair", t1 - t0, ops, 0, "");
}

static void w_churn(void) {
  long live = param("live", 1024), ops = param("ops", 200000), seed = param("seed", 0x5eed);
  long lo = param("min", 16), hi = param("max", 4096);
  rng_t r = {(uint32_t)seed ^ (uint32_t)((uint32_t)live * 0x9e3779b1u)};
  char **slot = calloc(live, sizeof(char *));
  int32_t *sz = calloc(live, sizeof(int32_t));
  for (long i = 0; i < live; i++) sz[i] = (int32_t)between(&r, lo, hi);
  int32_t *victim = malloc(ops * sizeof(int32_t)), *size = malloc(ops * sizeof(int32_t));
  for (long i = 0; i < ops; i++) {
    victim[i] = (int32_t)between(&r, 0, live - 1);
    size[i] = (int32_t)between(&r, lo, hi);
  }
  for (long i = 0; i < live; i++) {
    slot[i] = xmalloc(sz[i]);
    touch(slot[i], sz[i]);
  }
  double t0 = now_s();
  for (long i = 0; i < ops; i++) {
    int32_t v = victim[i];
    FREE(slot[v]);
    char *p = MALLOC(size[i]);
    if (!p) die("out of memory");
    slot[v] = p;
  }
  double t1 = now_s();
  report("churn", t1 - t0, ops, 0, "");
}

/* ---- binary-trees --------------------------------------------------------------------------------- */

typedef struct node {
  struct node *l, *r;
  long pad[2]; /* 32 B, as the JavaScript twin asks for */
} node_t;

static node_t *bt_build(int d, long *n) {
  node_t *t = MALLOC(32);
  if (!t) die("out of memory");
  ++*n;
  if (d > 0) {
    t->l = bt_build(d - 1, n);
    t->r = bt_build(d - 1, n);
  } else {
    t->l = t->r = NULL;
  }
  return t;
}
static long bt_check(node_t *t) { return t->l ? 1 + bt_check(t->l) + bt_check(t->r) : 1; }
static void bt_free(node_t *t) {
  if (t->l) {
    bt_free(t->l);
    bt_free(t->r);
  }
  FREE(t);
}

static void *bt_agent(void *arg) {
  agent_t *a = arg;
  int depth = (int)(long)a->arg;
  barrier_wait(a->agents);
  a->t0 = now_s();
  long n = 0;
  node_t *longlived = NULL;
  if (a->id == 0) {
    node_t *stretch = bt_build(depth + 1, &n);
    if (bt_check(stretch) != (2L << (depth + 1)) - 1) a->bad++;
    bt_free(stretch);
    longlived = bt_build(depth, &n);
  }
  long k = 0;
  for (int d = 4; d <= depth; d += 2) {
    long iters = 1L << (depth - d + 4);
    for (long i = 0; i < iters; i++, k++) {
      if (k % a->agents != a->id) continue;
      node_t *t = bt_build(d, &n);
      if (bt_check(t) != (2L << d) - 1) a->bad++;
      bt_free(t);
    }
  }
  if (longlived) {
    if (bt_check(longlived) != (2L << depth) - 1) a->bad++;
    bt_free(longlived);
  }
  a->t1 = now_s();
  a->ops = n;
  return NULL;
}

static void w_binary_trees(void) {
  int agents = (int)param("agents", 2);
  agent_t a[64] = {0};
  for (int i = 0; i < agents; i++) a[i].arg = (void *)param("depth", 12);
  run_agents(a, agents, bt_agent, 0);
  report("binary-trees", span(a, agents), total_ops(a, agents), total_bad(a, agents), "");
}

/* ---- producer-consumer, xmalloc-test ------------------------------------------------------------ */

typedef struct {
  ring_t *rings; /* one per producer */
  int producers;
  long batch;
  long lo, hi; /* block sizes */
} pc_t;

static void *pc_agent(void *arg) {
  agent_t *a = arg;
  pc_t *pc = a->arg;
  barrier_wait(a->agents);
  a->t0 = now_s();
  if (a->id < pc->producers) {
    ring_t *r = &pc->rings[a->id];
    rng_t rg = {0x9c0ffee ^ (uint32_t)a->id};
    uint64_t head = 0;
    long serial = 0;
    while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
      if (!ring_room(r, head, pc->batch)) break;
      for (long i = 0; i < pc->batch; i++) {
        long s = pc->lo == pc->hi ? pc->lo : between(&rg, pc->lo, pc->hi);
        int32_t *p = xmalloc(s);
        p[0] = (int32_t)serial++;
        p[(s >> 2) - 1] = (int32_t)s;
        r->buf[(head + i) & r->mask] = p;
      }
      head += pc->batch;
      atomic_store_explicit(&r->head, head, memory_order_release);
      a->ops += pc->batch;
    }
  } else {
    uint64_t *tails = calloc(pc->producers, sizeof(uint64_t));
    long *expect = calloc(pc->producers, sizeof(long));
    unsigned spins = 0;
    while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
      int got = 0;
      for (int k = 0; k < pc->producers; k++) {
        ring_t *r = &pc->rings[k];
        uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
        uint64_t t = tails[k];
        if (h == t) continue;
        got = 1;
        for (; t < h; t++) {
          int32_t *p = r->buf[t & r->mask];
          if (p[0] != (int32_t)expect[k]++) a->bad++;
          FREE(p);
          a->ops++;
        }
        tails[k] = t;
        atomic_store_explicit(&r->tail, t, memory_order_release);
      }
      if (!got) relax(&spins);
      else spins = 0;
    }
    a->t1 = now_s();
    /* what is left in flight, untimed */
    for (int k = 0; k < pc->producers; k++) {
      ring_t *r = &pc->rings[k];
      for (uint64_t t = tails[k]; t < atomic_load(&r->head); t++) FREE(r->buf[t & r->mask]);
    }
    free(tails);
    free(expect);
    return NULL;
  }
  a->t1 = now_s();
  return NULL;
}

static void w_producer_consumer(const char *name, long lo, long hi) {
  int producers = (int)param("producers", 2);
  pc_t pc = {0};
  pc.producers = producers;
  pc.batch = param("batch", 32);
  pc.lo = lo;
  pc.hi = hi;
  pc.rings = calloc(producers, sizeof(ring_t));
  for (int i = 0; i < producers; i++) ring_init(&pc.rings[i], param("ring", 1024));
  agent_t a[64] = {0};
  for (int i = 0; i <= producers; i++) a[i].arg = &pc;
  run_agents(a, producers + 1, pc_agent, (double)param("ms", 300));
  /* throughput: blocks the consumer freed, over its time */
  agent_t *c = &a[producers];
  report(name, span(a, producers + 1), c->ops, c->bad, "");
}

/* ---- message-ubench ------------------------------------------------------------------------------ */

typedef struct {
  ring_t ring[2]; /* ring[k]: messages to agent k */
  long window, size;
} mu_t;

static void *mu_agent(void *arg) {
  agent_t *a = arg;
  mu_t *m = a->arg;
  ring_t *in = &m->ring[a->id], *out = &m->ring[1 - a->id];
  uint64_t head = 0, tail = 0;
  barrier_wait(2);
  a->t0 = now_s();
  for (long i = 0; i < m->window / 2; i++) {
    int32_t *p = xmalloc(m->size);
    p[0] = (int32_t)i;
    out->buf[head++ & out->mask] = p;
  }
  atomic_store_explicit(&out->head, head, memory_order_release);
  unsigned spins = 0;
  while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
    uint64_t h = atomic_load_explicit(&in->head, memory_order_acquire);
    if (h == tail) {
      relax(&spins);
      continue;
    }
    spins = 0;
    for (; tail < h; tail++) {
      int32_t *p = in->buf[tail & in->mask];
      int32_t v = p[0];
      FREE(p);
      int32_t *q = xmalloc(m->size);
      q[0] = v + 1;
      out->buf[head++ & out->mask] = q;
      a->ops++;
    }
    atomic_store_explicit(&in->tail, tail, memory_order_release);
    atomic_store_explicit(&out->head, head, memory_order_release);
  }
  a->t1 = now_s();
  return NULL;
}

static void w_message_ubench(void) {
  mu_t m;
  m.window = param("window", 64);
  m.size = param("size", 64);
  ring_init(&m.ring[0], m.window * 2);
  ring_init(&m.ring[1], m.window * 2);
  agent_t a[2] = {0};
  a[0].arg = a[1].arg = &m;
  run_agents(a, 2, mu_agent, (double)param("ms", 300));
  report("message-ubench", span(a, 2), total_ops(a, 2), 0, "");
}

/* ---- mixed-churn: a ring of agents, bursts of 4 KiB blocks to the next, scratch kept ------------- */

typedef struct {
  ring_t *ring; /* ring[k]: bursts to agent k */
  long burst, scratch, inflight, size;
} mc_t;

static void *mc_agent(void *arg) {
  agent_t *a = arg;
  mc_t *m = a->arg;
  int k = a->id, n = a->agents;
  ring_t *in = &m->ring[k], *out = &m->ring[(k + 1) % n];
  uint64_t head = 0, tail = 0;
  void **scratch = calloc(m->scratch, sizeof(void *));
  barrier_wait(n);
  a->t0 = now_s();
  for (long b = 0; b < m->inflight; b++) {
    for (long i = 0; i < m->burst; i++) {
      int32_t *p = xmalloc(m->size);
      p[0] = k;
      out->buf[head++ & out->mask] = p;
    }
  }
  atomic_store_explicit(&out->head, head, memory_order_release);
  while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
    /* wait for a whole burst */
    unsigned spins = 0;
    while (atomic_load_explicit(&in->head, memory_order_acquire) - tail < (uint64_t)m->burst) {
      if (atomic_load(&g_stop)) goto done;
      relax(&spins);
    }
    for (long i = 0; i < m->burst; i++, tail++) {
      int32_t *p = in->buf[tail & in->mask];
      if (p[0] != (k + n - 1) % n) a->bad++;
      FREE(p);
    }
    atomic_store_explicit(&in->tail, tail, memory_order_release);
    for (long s = 0; s < m->scratch; s++) {
      int32_t *p = xmalloc(m->size);
      p[0] = s;
      scratch[s] = p;
    }
    if (!ring_room(out, head, m->burst)) goto done;
    for (long i = 0; i < m->burst; i++) {
      int32_t *p = xmalloc(m->size);
      p[0] = k;
      out->buf[head++ & out->mask] = p;
    }
    atomic_store_explicit(&out->head, head, memory_order_release);
    for (long s = 0; s < m->scratch; s++) FREE(scratch[s]);
    a->ops += m->burst;
  }
done:
  a->t1 = now_s();
  free(scratch);
  return NULL;
}

static void w_mixed_churn(void) {
  int agents = (int)param("agents", 2);
  mc_t m;
  m.burst = param("burst", 16);
  m.scratch = param("scratch", 8);
  m.inflight = param("inflight", 2);
  m.size = 4096;
  m.ring = calloc(agents, sizeof(ring_t));
  for (int i = 0; i < agents; i++) ring_init(&m.ring[i], (m.inflight + 1) * m.burst);
  agent_t a[64] = {0};
  for (int i = 0; i < agents; i++) a[i].arg = &m;
  run_agents(a, agents, mc_agent, (double)param("ms", 300));
  report("mixed-churn", span(a, agents), total_ops(a, agents), total_bad(a, agents), "");
}

/* ---- idle return: A holds `bytes` in blocks, B frees them, both idle; RSS sampled ----------------- */

typedef struct {
  long bytes, block, count;
  void **ptrs;
  atomic_int phase; /* 1: held, 2: free now, 3: freed, 4: end */
  double t_freed;
} idle_t;

static void *idle_agent(void *arg) {
  agent_t *a = arg;
  idle_t *m = a->arg;
  if (a->id == 0) {
    a->t0 = now_s();
    for (long i = 0; i < m->count; i++) {
      m->ptrs[i] = xmalloc(m->block);
      touch(m->ptrs[i], m->block);
    }
    a->t1 = now_s();
    atomic_store(&m->phase, 1);
  } else {
    while (atomic_load(&m->phase) < 2) sleep_ms(1);
    a->t0 = now_s();
    for (long i = 0; i < m->count; i++) FREE(m->ptrs[i]);
    a->t1 = m->t_freed = now_s();
    atomic_store(&m->phase, 3);
  }
  /* idle: an agent that stays alive and does nothing */
  while (atomic_load(&m->phase) < 4) sleep_ms(5);
  return NULL;
}

static void w_idle(void) {
  idle_t m = {0};
  m.bytes = param("bytes", 100L << 20);
  m.block = param("block", 512 << 10);
  m.count = m.bytes / m.block;
  m.ptrs = calloc(m.count, sizeof(void *));
  long window = param("window", 5000), sampleMs = param("sample", 10);
  agent_t a[2] = {0};
  a[0].arg = a[1].arg = &m;
  pthread_t th[2];
  for (int i = 0; i < 2; i++) {
    a[i].id = i;
    a[i].agents = 2;
    pthread_create(&th[i], NULL, idle_agent, &a[i]);
  }
  while (atomic_load(&m.phase) < 1) sleep_ms(1);
  long rss_held = rss_bytes();
  atomic_store(&m.phase, 2);
  while (atomic_load(&m.phase) < 3) sleep_ms(0.5);
  double t_freed = m.t_freed;
  double half = -1, ninety = -1;
  long rss_end = rss_bytes();
  double t;
  while ((t = now_s()) - t_freed < window / 1000.0) {
    long r = rss_bytes();
    double fell = (double)(rss_held - r);
    if (half < 0 && fell >= m.bytes * 0.5) half = (t - t_freed) * 1000;
    if (ninety < 0 && fell >= m.bytes * 0.9) ninety = (t - t_freed) * 1000;
    rss_end = r;
    if (ninety >= 0) break;
    sleep_ms((double)sampleMs);
  }
  atomic_store(&m.phase, 4);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  char extra[512], hs[32], ns[32];
  if (half < 0) snprintf(hs, sizeof hs, "null");
  else snprintf(hs, sizeof hs, "%.3f", half);
  if (ninety < 0) snprintf(ns, sizeof ns, "null");
  else snprintf(ns, sizeof ns, "%.3f", ninety);
  snprintf(extra, sizeof extra,
           "\"rssHeld\":%ld,\"rssAfter\":%ld,\"halfMs\":%s,\"ninetyMs\":%s,\"holdSeconds\":%.6f,\"freeSeconds\":%.6f",
           rss_held, rss_end, hs, ns, a[0].t1 - a[0].t0, a[1].t1 - a[1].t0);
  report("idle", a[1].t1 - a[1].t0, m.count, 0, extra);
}

/* ---- large-cross-free: A mallocs 4 MiB and writes it, B frees it, 100 rounds ---------------------- */

typedef struct {
  ring_t to_b;
  long rounds, size;
  uintptr_t *addr;
} lc_t;

static void *lc_agent(void *arg) {
  agent_t *a = arg;
  lc_t *m = a->arg;
  barrier_wait(2);
  a->t0 = now_s();
  if (a->id == 0) {
    uint64_t head = 0;
    for (long i = 0; i < m->rounds; i++) {
      if (!ring_room(&m->to_b, head, 1)) break;
      char *p = xmalloc(m->size);
      touch(p, m->size);
      m->addr[i] = (uintptr_t)p;
      m->to_b.buf[head++ & m->to_b.mask] = p;
      atomic_store_explicit(&m->to_b.head, head, memory_order_release);
      a->ops++;
    }
  } else {
    uint64_t tail = 0;
    while (tail < (uint64_t)m->rounds) {
      uint64_t h = ring_wait(&m->to_b, tail);
      for (; tail < h; tail++) FREE(m->to_b.buf[tail & m->to_b.mask]);
      atomic_store_explicit(&m->to_b.tail, tail, memory_order_release);
    }
  }
  a->t1 = now_s();
  return NULL;
}

static int cmp_uptr(const void *x, const void *y) {
  uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;
  return a < b ? -1 : a > b;
}

static void w_large_cross_free(void) {
  lc_t m;
  m.rounds = param("rounds", 100);
  m.size = param("size", 4 << 20);
  ring_init(&m.to_b, param("inflight", 2));
  m.addr = calloc(m.rounds, sizeof(uintptr_t));
  agent_t a[2] = {0};
  a[0].arg = a[1].arg = &m;
  run_agents(a, 2, lc_agent, 0);
  qsort(m.addr, m.rounds, sizeof(uintptr_t), cmp_uptr);
  long distinct = 0;
  for (long i = 0; i < m.rounds; i++)
    if (i == 0 || m.addr[i] != m.addr[i - 1]) distinct++;
  char extra[128];
  snprintf(extra, sizeof extra, "\"distinctAddresses\":%ld,\"rssAfter\":%ld", distinct, rss_bytes());
  report("large-cross-free", span(a, 2), total_ops(a, 2), 0, extra);
}

/* ---- class-no-reuse: fill `bytes` with one class, free, then the next class -------------------- */

static void w_class_no_reuse(void) {
  long bytes = param("bytes", 64L << 20);
  long sizes[3] = {param("a", 64), param("b", 1024), param("c", 16384)};
  long maxn = bytes / sizes[0];
  void **p = calloc(maxn, sizeof(void *));
  double t0 = now_s();
  long ops = 0, peak = 0;
  for (int c = 0; c < 3; c++) {
    long n = bytes / sizes[c];
    for (long i = 0; i < n; i++) {
      p[i] = xmalloc(sizes[c]);
      touch(p[i], sizes[c]);
    }
    long r = rss_bytes();
    if (r > peak) peak = r;
    for (long i = 0; i < n; i++) FREE(p[i]);
    ops += n;
  }
  double t1 = now_s();
  char extra[128];
  snprintf(extra, sizeof extra, "\"rssPhasePeak\":%ld,\"rssAfter\":%ld", peak, rss_bytes());
  report("class-no-reuse", t1 - t0, ops, 0, extra);
}

/* ---- build-then-free: blocks of mixed sizes built one after another, then freed whole in random order -- */

static void w_build_then_free(void) {
  long n = param("blocks", 64000), lo = param("min", 16), hi = param("max", 20000), rounds = param("rounds", 3);
  rng_t r = {(uint32_t)param("seed", 0xb7f)};
  long *sz = calloc(n, sizeof(long));
  long *order = calloc(n, sizeof(long));
  void **p = calloc(n, sizeof(void *));
  /* the JS twin's draws (buildThenFreeDraws): the sizes, then a Fisher-Yates shuffle of the free order */
  for (long i = 0; i < n; i++) sz[i] = between(&r, lo, hi);
  for (long i = 0; i < n; i++) order[i] = i;
  for (long i = n - 1; i > 0; i--) {
    long j = between(&r, 0, i), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  double malloc_s = 0, free_s = 0;
  for (long k = 0; k < rounds; k++) {
    double t0 = now_s();
    for (long i = 0; i < n; i++) p[i] = xmalloc(sz[i]);
    double t1 = now_s();
    for (long i = 0; i < n; i++) FREE(p[order[i]]);
    double t2 = now_s();
    malloc_s += t1 - t0;
    free_s += t2 - t1;
  }
  char extra[128];
  snprintf(extra, sizeof extra, "\"mallocNs\":%.3f,\"freeNs\":%.3f", malloc_s * 1e9 / (double)(rounds * n), free_s * 1e9 / (double)(rounds * n));
  report("build-then-free", malloc_s + free_s, 2 * rounds * n, 0, extra);
  free(sz);
  free(order);
  free(p);
}

/* ---- per-agent churn: mixed-sizes (16 B..64 KiB) and glibc-thread (4 B..32 KiB) ------------------ */

typedef struct {
  long live, lo, hi;
  uint32_t seed;
} ac_t;

static void *ac_agent(void *arg) {
  agent_t *a = arg;
  ac_t *m = a->arg;
  rng_t r = {m->seed ^ (uint32_t)(a->id * 0x85ebca6bu)};
  long live = m->live;
  char **slot = calloc(live, sizeof(char *));
  for (long i = 0; i < live; i++) {
    long s = log_uniform(&r, m->lo, m->hi);
    slot[i] = xmalloc(s);
    touch(slot[i], s);
  }
  barrier_wait(a->agents);
  a->t0 = now_s();
  long ops = 0;
  while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
    for (int k = 0; k < 256; k++) {
      long v = between(&r, 0, live - 1);
      FREE(slot[v]);
      long s = log_uniform(&r, m->lo, m->hi);
      char *p = xmalloc(s);
      p[0] = 1;
      slot[v] = p;
    }
    ops += 256;
  }
  a->t1 = now_s();
  a->ops = ops;
  for (long i = 0; i < live; i++) FREE(slot[i]);
  free(slot);
  return NULL;
}

static void w_agent_churn(const char *name) {
  int agents = (int)param("agents", 2);
  ac_t m = {param("live", 4096) / agents, param("min", 16), param("max", 65536), (uint32_t)param("seed", 0x5eed)};
  agent_t a[64] = {0};
  for (int i = 0; i < agents; i++) a[i].arg = &m;
  run_agents(a, agents, ac_agent, (double)param("ms", 300));
  report(name, span(a, agents), total_ops(a, agents), 0, "");
}

/* ---- larson: per-agent slot arrays, swapped through a mailbox every round ------------------------ */

typedef struct {
  long slots, lo, hi, round;
  char ***arrays; /* agents + 1 arrays */
  _Atomic long mailbox;
} la_t;

static void la_fill(la_t *m, long k) {
  rng_t r = {0x1a250u + (uint32_t)k};
  for (long i = 0; i < m->slots; i++) m->arrays[k][i] = xmalloc(between(&r, m->lo, m->hi));
}

static void *la_agent(void *arg) {
  agent_t *a = arg;
  la_t *m = a->arg;
  /* each agent fills its own array; agent 0 the spare one too */
  la_fill(m, a->id);
  if (a->id == 0) la_fill(m, a->agents);
  rng_t r = {0x1a2503u ^ (uint32_t)(a->id * 0x9e3779b1u)};
  long mine = a->id;
  barrier_wait(a->agents);
  a->t0 = now_s();
  long ops = 0;
  while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
    char **arr = m->arrays[mine];
    for (long k = 0; k < m->round; k++) {
      long v = between(&r, 0, m->slots - 1);
      FREE(arr[v]);
      long s = between(&r, m->lo, m->hi);
      char *p = xmalloc(s);
      p[0] = 1;
      arr[v] = p;
    }
    ops += m->round;
    mine = atomic_exchange(&m->mailbox, mine);
  }
  a->t1 = now_s();
  a->ops = ops;
  return NULL;
}

static void w_larson(void) {
  int agents = (int)param("agents", 2);
  la_t m;
  m.slots = param("slots", 1000);
  m.lo = param("min", 8);
  m.hi = param("max", 1000);
  m.round = param("round", 10000);
  m.arrays = calloc(agents + 1, sizeof(char **));
  for (int k = 0; k <= agents; k++) m.arrays[k] = calloc(m.slots, sizeof(char *));
  atomic_store(&m.mailbox, agents);
  agent_t a[64] = {0};
  for (int i = 0; i < agents; i++) a[i].arg = &m;
  run_agents(a, agents, la_agent, (double)param("ms", 300));
  report("larson", span(a, agents), total_ops(a, agents), 0, "");
}

/* ---- mstress: mimalloc-bench's stress, scaled ------------------------------------------------------ */

#define TRANSFERS 1000
typedef struct {
  long scale, iterations;
  _Atomic(int32_t *) transfer[TRANSFERS];
} ms_t;

static inline int chance(long perc, rng_t *r) { return (long)(rnext(r) % 100) < perc; }

static int32_t *ms_alloc(long items, rng_t *r) {
  if (chance(1, r)) items *= 10; /* 1% larger */
  if (items == 40 && chance(10, r)) items = 4000; /* rare very large */
  long bytes = items * 8;
  int32_t *p = xmalloc(bytes);
  p[0] = (int32_t)items;
  p[(bytes >> 2) - 1] = (int32_t)items;
  return p;
}
static void ms_free(int32_t *p, long *bad) {
  if (!p) return;
  long items = p[0];
  if (p[(items * 8 >> 2) - 1] != items) ++*bad;
  FREE(p);
}

static void *ms_agent(void *arg) {
  agent_t *a = arg;
  ms_t *m = a->arg;
  barrier_wait(a->agents);
  a->t0 = now_s();
  rng_t r = {(uint32_t)(a->id * 43 + 1)};
  for (long it = 0; it < m->iterations; it++) {
    long allocs = 100 * m->scale * (a->id % 8 + 1);
    long retain = allocs / 2;
    long cap = allocs + 1, top = 0, rtop = 0;
    int32_t **data = calloc(cap, sizeof(int32_t *));
    int32_t **kept = calloc(retain + 1, sizeof(int32_t *));
    while (allocs > 0 || retain > 0) {
      if (retain == 0 || (chance(50, &r) && allocs > 0)) {
        allocs--;
        data[top++] = ms_alloc(1L << (rnext(&r) % 5), &r);
      } else {
        kept[rtop++] = ms_alloc(1L << (rnext(&r) % 7), &r);
        retain--;
      }
      a->ops++;
      if (chance(66, &r) && top > 0) {
        long i = rnext(&r) % top;
        ms_free(data[i], &a->bad);
        data[i] = NULL;
      }
      if (chance(25, &r) && top > 0) {
        long i = rnext(&r) % top;
        long t = rnext(&r) % TRANSFERS;
        data[i] = atomic_exchange(&m->transfer[t], data[i]);
      }
    }
    for (long i = 0; i < rtop; i++) ms_free(kept[i], &a->bad);
    for (long i = 0; i < top; i++) ms_free(data[i], &a->bad);
    free(data);
    free(kept);
  }
  a->t1 = now_s();
  return NULL;
}

static void w_mstress(void) {
  int agents = (int)param("agents", 2);
  static ms_t m;
  m.scale = param("scale", 20);
  m.iterations = param("iterations", 10);
  for (int i = 0; i < TRANSFERS; i++) atomic_store(&m.transfer[i], NULL);
  agent_t a[64] = {0};
  for (int i = 0; i < agents; i++) a[i].arg = &m;
  run_agents(a, agents, ms_agent, 0);
  long bad = total_bad(a, agents);
  for (int i = 0; i < TRANSFERS; i++) ms_free(atomic_load(&m.transfer[i]), &bad);
  report("mstress", span(a, agents), total_ops(a, agents), bad, "");
}

/* ---- rptest: rpmalloc's benchmark, scaled: sets of blocks, some handed to the next agent -------- */

typedef struct {
  ring_t *ring; /* ring[k]: blocks for agent k to free */
  long count, ops, cross, lo, hi;
} rp_t;

static void *rp_agent(void *arg) {
  agent_t *a = arg;
  rp_t *m = a->arg;
  int k = a->id, n = a->agents;
  ring_t *in = &m->ring[k], *out = &m->ring[(k + 1) % n];
  uint64_t head = 0, tail = 0;
  rng_t r = {0x5e7u ^ (uint32_t)(k * 0x27d4eb2du)};
  int32_t **set = calloc(m->count, sizeof(int32_t *));
  barrier_wait(n);
  a->t0 = now_s();
  long loop = 0;
  while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
    uint64_t h = atomic_load_explicit(&in->head, memory_order_acquire);
    for (; tail < h; tail++) FREE(in->buf[tail & in->mask]);
    atomic_store_explicit(&in->tail, tail, memory_order_release);
    for (long i = 0; i < m->count; i++) {
      long s = log_uniform(&r, m->lo, m->hi);
      set[i] = xmalloc(s);
      set[i][0] = (int32_t)s;
    }
    for (long i = 0; i < m->ops; i++) {
      long v = between(&r, 0, m->count - 1);
      FREE(set[v]);
      long s = log_uniform(&r, m->lo, m->hi);
      set[v] = xmalloc(s);
      set[v][0] = (int32_t)s;
    }
    a->ops += m->count + m->ops;
    if (++loop % m->cross == 0 && ring_room(out, head, m->count)) {
      for (long i = 0; i < m->count; i++) out->buf[head++ & out->mask] = set[i];
      atomic_store_explicit(&out->head, head, memory_order_release);
    } else {
      for (long i = 0; i < m->count; i++) FREE(set[i]);
    }
  }
  a->t1 = now_s();
  free(set);
  return NULL;
}

static void w_rptest(void) {
  int agents = (int)param("agents", 2);
  rp_t m;
  m.count = param("count", 1000);
  m.ops = param("opcount", 100);
  m.cross = param("cross", 8);
  m.lo = param("min", 16);
  m.hi = param("max", 16000);
  m.ring = calloc(agents, sizeof(ring_t));
  for (int i = 0; i < agents; i++) ring_init(&m.ring[i], 4 * m.count);
  agent_t a[64] = {0};
  for (int i = 0; i < agents; i++) a[i].arg = &m;
  run_agents(a, agents, rp_agent, (double)param("ms", 300));
  report("rptest", span(a, agents), total_ops(a, agents), 0, "");
}

/* ---- cache-scratch: the main thread's objects freed by the agents, then private write loops ------ */

typedef struct {
  long iterations, objsize, reps;
  char **initial;
} cs_t;

static void *cs_agent(void *arg) {
  agent_t *a = arg;
  cs_t *m = a->arg;
  barrier_wait(a->agents);
  a->t0 = now_s();
  FREE(m->initial[a->id]);
  for (long i = 0; i < m->iterations; i++) {
    volatile char *p = xmalloc(m->objsize);
    for (long j = 0; j < m->reps; j++) {
      for (long k = 0; k < m->objsize; k++) {
        p[k] = (char)k;
        char ch = p[k];
        ch++;
        p[k] = ch;
      }
    }
    FREE((void *)p);
    a->ops++;
  }
  a->t1 = now_s();
  return NULL;
}

static void w_cache_scratch(void) {
  int agents = (int)param("agents", 2);
  cs_t m;
  m.iterations = param("iterations", 1000);
  m.objsize = param("objsize", 8);
  m.reps = param("reps", 2000);
  m.initial = calloc(agents, sizeof(char *));
  for (int i = 0; i < agents; i++) m.initial[i] = xmalloc(m.objsize);
  agent_t a[64] = {0};
  for (int i = 0; i < agents; i++) a[i].arg = &m;
  run_agents(a, agents, cs_agent, 0);
  report("cache-scratch", span(a, agents), total_ops(a, agents), 0, "");
}

int main(int argc, char **argv) {
  g_argc = argc;
  g_argv = argv;
  if (argc < 2) die("usage: programs WORKLOAD key=value ...");
  reset_peak();
  g_rss0 = rss_bytes();
  const char *w = argv[1];
  if (!strcmp(w, "pair")) w_pair();
  else if (!strcmp(w, "churn")) w_churn();
  else if (!strcmp(w, "binary-trees")) w_binary_trees();
  else if (!strcmp(w, "producer-consumer")) w_producer_consumer("producer-consumer", 4096, 4096);
  else if (!strcmp(w, "xmalloc-test")) w_producer_consumer("xmalloc-test", param("min", 8), param("max", 64));
  else if (!strcmp(w, "message-ubench")) w_message_ubench();
  else if (!strcmp(w, "mixed-churn")) w_mixed_churn();
  else if (!strcmp(w, "idle")) w_idle();
  else if (!strcmp(w, "large-cross-free")) w_large_cross_free();
  else if (!strcmp(w, "class-no-reuse")) w_class_no_reuse();
  else if (!strcmp(w, "build-then-free")) w_build_then_free();
  else if (!strcmp(w, "mixed-sizes")) w_agent_churn("mixed-sizes");
  else if (!strcmp(w, "glibc-thread")) w_agent_churn("glibc-thread");
  else if (!strcmp(w, "larson")) w_larson();
  else if (!strcmp(w, "mstress")) w_mstress();
  else if (!strcmp(w, "rptest")) w_rptest();
  else if (!strcmp(w, "cache-scratch")) w_cache_scratch();
  else die("unknown workload");
  return 0;
}
