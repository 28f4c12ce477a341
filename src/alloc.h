/* alloc.h: the one allocation entry point of cdsim.
 *
 * Every heap allocation in src/, solvers/ and io/ goes through these functions so
 * that tests can count live bytes and fail the k-th allocation on purpose
 * (cd_allocFailAt). A failed allocation returns NULL; callers propagate it as
 * CD_ERR_NOMEM, never abort. CHOLMOD's own allocations are routed here too
 * (see world.c), so an injected failure reaches them as well.
 */
#ifndef CD_ALLOC_H
#define CD_ALLOC_H

#include <stddef.h>

void *cd_malloc(size_t size);               /* NULL on failure or injected failure */
void *cd_calloc(size_t count, size_t size); /* zeroed; overflow-checked */
void *cd_realloc(void *ptr, size_t size);   /* like realloc; ptr unchanged on failure */
void cd_free(void *ptr);                    /* NULL is fine */
/* *pbuf (a pointer to the buffer pointer) reallocated to n elements of size bytes (at least
 * one); 0 ok, -1 on failure with *pbuf unchanged */
int cd_grow(void *pbuf, size_t n, size_t size);

/* The heap in transparent huge pages, where the kernel gives them on request: from this call on,
 * every growth of the heap is advised (madvise MADV_HUGEPAGE) by the allocation that made it,
 * the heap grows by at least two huge pages at a time, blocks up to 32 MiB come from it and it
 * is not trimmed below 64 MiB free. A page fault costs ~20 us on the VMs cdsim is measured on:
 * a run's first step, which grows the heap by 0.2-0.9 MB of solver workspace, took 100-230
 * faults (README, Performance); the heap's first 8 MiB are faulted in by this call, before any
 * step (alloc.c, HUGE_WARM). Returns 1 when in effect, 0 when the kernel has no huge pages
 * to give (or not glibc). Called once, first thing in main. */
int cd_allocHugeHeap(void);

/* testing hooks */
void cd_allocFailAt(long k);   /* make the k-th allocation from now fail (1-based); 0 disables */
long cd_allocCount(void);      /* allocations made since start (successful ones) */
long cd_allocLive(void);       /* blocks allocated and not yet freed */

#endif
