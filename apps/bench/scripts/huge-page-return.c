/* How fast the kernel takes back written pages, with and without transparent huge pages, for the platform note
 * (why the page-return addon does not mark the heap MADV_HUGEPAGE): maps 1 GiB anonymous (2 MiB aligned), marks it
 * MADV_HUGEPAGE when asked, writes every page, then gives 512 MiB back in 512 KiB MADV_DONTNEED calls and the other
 * 512 MiB in one call, timing each step and printing resident MiB after it. Linux only.
 *   cc -O2 -o /tmp/huge-page-return apps/bench/scripts/huge-page-return.c && /tmp/huge-page-return 0|1
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static long resident_mib(void) {
  long size = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL || fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
  if (f != NULL) fclose(f);
  return resident * 4096 / (1 << 20);
}

int main(int argc, char **argv) {
  int huge = argc > 1 && atoi(argv[1]) != 0;
  size_t n = (size_t)1 << 30, align = (size_t)2 << 20;
  char *raw = mmap(NULL, n + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return perror("mmap"), 1;
  char *p = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
  if (huge && madvise(p, n, MADV_HUGEPAGE) != 0) return perror("madvise(MADV_HUGEPAGE)"), 1;
  double t = now_ms();
  for (size_t i = 0; i < n; i += 4096) p[i] = 1;
  printf("%s: wrote 1 GiB in %.1f ms, resident %ld MiB\n", huge ? "MADV_HUGEPAGE" : "4 KiB pages", now_ms() - t, resident_mib());
  t = now_ms();
  for (size_t o = 0; o < n / 2; o += 512 << 10) madvise(p + o, 512 << 10, MADV_DONTNEED);
  printf("  512 MiB back in 512 KiB calls: %.1f ms, resident %ld MiB\n", now_ms() - t, resident_mib());
  t = now_ms();
  madvise(p + n / 2, n / 2, MADV_DONTNEED);
  printf("  512 MiB back in one call: %.1f ms, resident %ld MiB\n", now_ms() - t, resident_mib());
  return 0;
}
