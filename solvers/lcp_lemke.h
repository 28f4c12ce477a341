/* lcp_lemke.h: a general dense LCP solver (Lemke's complementary pivoting method).
 *
 * Solves: find z (n) with z >= 0, w = A z + b >= 0, z^T w = 0, for a dense A (n x n,
 * column-major) and b (n). See lcp_lemke.c for the algorithm and its guarantees.
 */
#ifndef CD_LCP_LEMKE_H
#define CD_LCP_LEMKE_H

#include <stddef.h>

/* outcome of cd_lemkeSolve */
enum {
  CD_LEMKE_SOLVED = 0,      /* z solves the LCP; residual within the tolerance */
  CD_LEMKE_RAY = 1,         /* ray termination: no solution found (for a copositive-plus A:
                               the LCP is infeasible); z is the last iterate, not a solution */
  CD_LEMKE_PIVOT_LIMIT = 2, /* stopped at max_pivots; z is the last iterate */
  CD_LEMKE_INACCURATE = 3,  /* a complementary basis was found but its z misses the
                               tolerance even after refinement (ill-conditioned basis) */
  CD_LEMKE_NOMEM = -1       /* the workspace could not be allocated (= CD_ERR_NOMEM) */
};

/* tie-breaking rules of the minimum ratio test */
enum {
  CD_LEMKE_TIES_LEXICOGRAPHIC = 0, /* the textbook rule (the path Siconos' lexicolemke takes) */
  CD_LEMKE_TIES_LARGEST_PIVOT = 1  /* the largest pivot entry; lexicographic once a basis repeats */
};

typedef struct cdLemkeOptions {
  int max_pivots;   /* limit on the complementary pivots; 0: 20 n + 1000 */
  double tolerance; /* accept z when ||min(z, A z + b)||_inf <= tolerance max(1, ||b||_inf);
                       0: 1e-10 */
  int scale;        /* -1 never, 0 automatic (row or column maxima of |A| spread over more
                       than a factor CD_LEMKE_SCALE_SPREAD), 1 always */
  int ties;         /* tie-breaking in the ratio test: CD_LEMKE_TIES_LEXICOGRAPHIC (0) or
                       CD_LEMKE_TIES_LARGEST_PIVOT (see lcp_lemke.c) */
  const double *start; /* optional (n) guess of the solution, e.g. the previous time step's:
                          the complementary basis {z_j : start_j > 0, w_i : the others} is
                          tried first (see lcp_lemke.c); NULL: the standard start */
  void *work;       /* optional workspace of cd_lemkeWorkSize(n) bytes (aligned for double);
                       NULL: allocated and freed by the call */
} cdLemkeOptions;

#define CD_LEMKE_SCALE_SPREAD 100.0

typedef struct cdLemkeStats {
  int pivots;      /* complementary pivots: basis changes after the first (z0 entering),
                      the count CPS and Siconos report (Murty's example: 2^n - 1) */
  double residual; /* ||min(z, A z + b)||_inf of the returned z, unscaled */
  int refined;     /* 1 when the active-set re-solve improved the pivoting result */
  int scaled;      /* 1 when rows and columns were equilibrated */
  int warm;        /* 1 when the answer came from the start guess's basis */
} cdLemkeStats;

/* bytes of workspace cd_lemkeSolve needs for size n */
size_t cd_lemkeWorkSize(int n);

/* solves the LCP (A, b); z (n) out. opt and stats may be NULL. Returns a CD_LEMKE_ code. */
int cd_lemkeSolve(int n, const double *A, const double *b, double *z, const cdLemkeOptions *opt,
                  cdLemkeStats *stats);

/* ||min(z, A z + b)||_inf (the natural residual) for a dense column-major A; O(n^2), no
 * allocation */
double cd_lcpResidualDense(int n, const double *A, const double *b, const double *z);

#endif
