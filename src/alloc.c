/* alloc.c: counting allocator with failure injection (see alloc.h). */
#include "alloc.h"

#include <stdatomic.h>
#include <stdlib.h>

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

void *cd_malloc(size_t size) {
  if (injected()) return NULL;
  void *p = malloc(size ? size : 1);
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

