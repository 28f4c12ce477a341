/* alloc.c: counting allocator with failure injection, and the heap in huge pages (see
 * alloc.h). */
#include "alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* the heap in huge pages needs glibc's malloc (its options, its use of the break); ASan's
 * allocator is its own */
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define HUGE_HEAP 1
#include <malloc.h>
#else
#define HUGE_HEAP 0
#endif

/* atomic: the recorder's writer thread allocates beside the main thread (its contact
 * columns grow there), and plain counters lost updates: the allocation-failure test saw
 * the live count off by one in about one run of five */
static atomic_long g_count;   /* successful allocations so far */
static atomic_long g_live;    /* live blocks */
static atomic_long g_fail_at; /* fail when g_attempt reaches this; 0 = never */
static atomic_long g_attempt;

void cd_allocFailAt(long k) {
  atomic_store(&g_attempt, 0);
  atomic_store(&g_fail_at, k > 0 ? k : 0);
}

long cd_allocCount(void) { return atomic_load(&g_count); }
long cd_allocLive(void) { return atomic_load(&g_live); }

static int injected(void) {
  long at = atomic_load(&g_fail_at);
  if (at == 0) return 0;
  return atomic_fetch_add(&g_attempt, 1) + 1 == at;
}

/* ---- the heap in huge pages (alloc.h, cd_allocHugeHeap) ---- */
#if HUGE_HEAP

static atomic_uintptr_t g_advised; /* the heap's end as far as it is advised; 0: off */
static void *volatile g_guard;      /* the block that starts the advised heap (cd_allocHugeHeap), kept */
#define HUGE_PAD (32 << 20)         /* bytes the heap grows past a request */
/* bytes of the advised heap touched at the call (cd_allocHugeHeap, below), before any step: a
 * run's first step grows the heap into its first huge pages, and the kernel (transparent huge
 * pages' defrag at madvise: it may compact memory inside the fault) took 4.5-7 ms there in about
 * one run in three, against 1.2-1.5 ms otherwise (the 55-cube pyramid under lcp, whose median
 * step is 0.16 ms: the first step 27-34 times it in 8 of 24 runs; with 8 MiB touched first, at
 * most 14 times in 24 runs, and in 24 more, at a time when other steps of both builds took 4-6 ms
 * in a third of the runs, the first step never the slowest over 20 times: 1 of 24 without); the sliding cube's whole run 19.2-20.2 ms either way (perf stat -r 10, three
 * pairs) */
#define HUGE_WARM (8 << 20)

/* the kernel's transparent huge page size when it gives them to regions that ask (madvise) or
 * to all (always), else 0 */
static size_t thpSize(void) {
  char mode[128] = "";
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return 0;
  int ok = fgets(mode, sizeof mode, f) != NULL;
  fclose(f);
  if (!ok || !(strstr(mode, "[madvise]") || strstr(mode, "[always]"))) return 0;
  unsigned long sz = 0;
  f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
  if (f) {
    if (fscanf(f, "%lu", &sz) != 1) sz = 0;
    fclose(f);
  }
  return sz >= 4096 && (sz & (sz - 1)) == 0 ? (size_t)sz : 0;
}

/* the heap grown since the last call is advised into huge pages (one madvise when the break
 * moved, nothing otherwise) */
static void heapAdvise(void) {
  uintptr_t from = atomic_load(&g_advised);
  if (!from) return;
  uintptr_t end = (uintptr_t)sbrk(0);
  if (end <= from || !atomic_compare_exchange_strong(&g_advised, &from, end)) return;
  long pg = sysconf(_SC_PAGESIZE);
  uintptr_t a = from & ~((uintptr_t)(pg > 0 ? pg : 4096) - 1);
  (void)madvise((void *)a, end - a, MADV_HUGEPAGE);
}

int cd_allocHugeHeap(void) {
  size_t thp = thpSize();
  if (!thp || atomic_load(&g_advised)) return 0;
  /* the heap grows HUGE_PAD past each request, rarely, and is not trimmed; blocks up to 32 MiB
   * come from it (setting the pad ends glibc's sliding mmap threshold, which would otherwise
   * reach the same after the first free: mmap'd blocks come back as faults on every use) */
  if (!mallopt(M_TOP_PAD, HUGE_PAD) || !mallopt(M_MMAP_THRESHOLD, 32 << 20) || !mallopt(M_TRIM_THRESHOLD, 2 * HUGE_PAD))
    return 0;
  /* The break moved up to a huge page boundary A (address space only; glibc's malloc takes the
   * gap as another sbrk user's and goes on above it). The heap's next growth then starts at A,
   * and glibc writes a chunk header at A and one after the block it returns: those pages are
   * touched before any advice can be given, and a huge page cannot go where a small one is. So
   * the block that makes that growth ends a page short of A + thp, and it is kept, never used:
   * both headers fall in the first huge page's range, given up to small pages, and everything
   * from A + thp on is advised before it is touched. */
  uintptr_t end = (uintptr_t)sbrk(0), a = (end + thp - 1) & ~((uintptr_t)thp - 1);
  if (end == (uintptr_t)-1 || (a > end && sbrk((intptr_t)(a - end)) == (void *)-1)) return 0;
  g_guard = malloc(thp - 4096 - 64);
  if (!g_guard) return 0;
  atomic_store(&g_advised, a);
  heapAdvise();
  /* the first HUGE_WARM bytes faulted now (HUGE_WARM): a block taken, advised, touched a byte
   * a page and given back, which leaves its pages in the heap's top for the first allocations */
  char *warm = malloc(HUGE_WARM);
  if (warm) {
    heapAdvise();
    for (size_t o = 0; o < HUGE_WARM; o += 4096) ((volatile char *)warm)[o] = 0;
    free(warm);
  }
  return 1;
}

#else
static void heapAdvise(void) {}
int cd_allocHugeHeap(void) { return 0; }
#endif

void *cd_malloc(size_t size) {
  if (injected()) return NULL;
  void *p = malloc(size ? size : 1);
  heapAdvise();
  if (p) {
    atomic_fetch_add(&g_count, 1);
    atomic_fetch_add(&g_live, 1);
  }
  return p;
}

void *cd_calloc(size_t count, size_t size) {
  if (size && count > (size_t)-1 / size) return NULL;
  if (injected()) return NULL;
  void *p = calloc(count ? count : 1, size ? size : 1);
  heapAdvise();
  if (p) {
    atomic_fetch_add(&g_count, 1);
    atomic_fetch_add(&g_live, 1);
  }
  return p;
}

void *cd_realloc(void *ptr, size_t size) {
  if (!ptr) return cd_malloc(size);
  if (injected()) return NULL;
  void *p = realloc(ptr, size ? size : 1);
  heapAdvise();
  if (p) atomic_fetch_add(&g_count, 1);
  return p;
}

void cd_free(void *ptr) {
  if (!ptr) return;
  atomic_fetch_sub(&g_live, 1);
  free(ptr);
}

int cd_grow(void *pbuf, size_t n, size_t size) {
  void **b = pbuf;
  void *q = cd_realloc(*b, (n > 0 ? n : 1) * size);
  if (!q) return -1;
  *b = q;
  return 0;
}

