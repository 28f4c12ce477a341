/* alloc.c: counting allocator with failure injection (see alloc.h). */
#include "alloc.h"

#include <stdlib.h>

static long g_count;   /* successful allocations so far */
static long g_live;    /* live blocks */
static long g_fail_at; /* fail when g_attempt reaches this; 0 = never */
static long g_attempt;

void cd_allocFailAt(long k) {
  g_fail_at = k > 0 ? k : 0;
  g_attempt = 0;
}

long cd_allocCount(void) { return g_count; }
long cd_allocLive(void) { return g_live; }

static int injected(void) {
  if (g_fail_at == 0) return 0;
  return ++g_attempt == g_fail_at;
}

void *cd_malloc(size_t size) {
  if (injected()) return NULL;
  void *p = malloc(size ? size : 1);
  if (p) {
    g_count++;
    g_live++;
  }
  return p;
}

void *cd_calloc(size_t count, size_t size) {
  if (size && count > (size_t)-1 / size) return NULL;
  if (injected()) return NULL;
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (p) {
    g_count++;
    g_live++;
  }
  return p;
}

void *cd_realloc(void *ptr, size_t size) {
  if (!ptr) return cd_malloc(size);
  if (injected()) return NULL;
  void *p = realloc(ptr, size ? size : 1);
  if (p) g_count++;
  return p;
}

void cd_free(void *ptr) {
  if (!ptr) return;
  g_live--;
  free(ptr);
}

int cd_grow(void *pbuf, size_t n, size_t size) {
  void **b = pbuf;
  void *q = cd_realloc(*b, (n > 0 ? n : 1) * size);
  if (!q) return -1;
  *b = q;
  return 0;
}

