/* linalg.c: CHOLMOD set-up shared by the world and the peer-problem readers. */
#include "linalg.h"


#include "alloc.h"

static void *ss_malloc(size_t n) { return cd_malloc(n); }
static void *ss_calloc(size_t n, size_t s) { return cd_calloc(n, s); }
static void *ss_realloc(void *p, size_t n) { return cd_realloc(p, n); }
static void ss_free(void *p) { cd_free(p); }

void cd_linalgInit(void) {
  SuiteSparse_config.malloc_func = ss_malloc;
  SuiteSparse_config.calloc_func = ss_calloc;
  SuiteSparse_config.realloc_func = ss_realloc;
  SuiteSparse_config.free_func = ss_free;
  SuiteSparse_config.printf_func = NULL;
}
