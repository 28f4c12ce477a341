/* lcp_bgs.h: block Gauss-Seidel over contacts for the Anitescu-Hart LCP (layout in lcp.h),
 * and the exact solve of one contact's block that it is built on. */
#ifndef CD_LCP_BGS_H
#define CD_LCP_BGS_H

#include <stddef.h>

#include "problem.h"

typedef struct cdBgsOptions {
  double tolerance; /* stop when ||min(z, A z + b)||_inf <= tolerance max(1, ||b||_inf); 0: 1e-8 */
  int max_sweeps;   /* 0: 1000 */
  const int *order; /* (ncon) optional: the contacts in the order of a forward sweep (a
                       permutation of 0 .. ncon-1); NULL: 0 .. ncon-1 */
  struct cdLcpNewton *newton; /* optional: the workspace of the active-set tries (lcp_newton.h,
                                 lcp_bgs.c), each with at most CD_BGS_TRY_SETS active sets
                                 (cd_bgsTrySets: fewer under a smaller max_sweeps); NULL: none */
  double lu_flops_max; /* the tries' bound (cdLcpNewtonOptions); a try over it ends the tries
                          and the subspace steps take over */
} cdBgsOptions;

typedef struct cdBgsStats {
  int sweeps;         /* sweeps over all contacts (the idle ones left out: lcp_bgs.c) */
  long blocks;        /* block solves in the sweeps: contacts swept, idle ones not */
  double residual;    /* ||min(z, A z + b)||_inf of the returned z (the best iterate) */
  int converged;      /* 1 when residual <= tolerance max(1, ||b||_inf) */
  int products;       /* products with G outside the sweeps: residual checks, GMRES iterations,
                         the active-set try's checks and refinement */
  int factorizations; /* the clusters' dense Lemke solves and the active-set try's sparse ones */
  int newton_tries;   /* active-set tries */
  int newton_sets;    /* active sets they solved */
  int newton_solved;  /* 1 when the answer is an active-set try's */
  int newton_costly;  /* 1 when a try stopped at lu_flops_max */
} cdBgsStats;

/* solves the LCP of p with m directions D (cd_lcpDirections) for z (cd_lcpSize(ncon, m)),
 * starting from z (warm start in, best iterate out). Returns CD_OK or CD_ERR_NOMEM. */
int cd_bgsSolve(const cdContactProblem *p, int m, const double *D, double *z, const cdBgsOptions *opt,
                cdBgsStats *stats);

/* the residual at or below which the next active-set try comes after one made at res (the
 * tries also come after NEWTON_SWEEPS, 2 NEWTON_SWEEPS .. sweeps: lcp_bgs.c) */
double cd_bgsNextTryResidual(double res);

/* the active sets an active-set try inside bgs solves at most (lcp_bgs.c: a try from the
 * sweeps' iterate that needs more mostly fails, and the sweeps mend its iterate for less;
 * a try ends at its first set no better than its best, lcp_newton.c, so the ones that reach
 * the limit are still improving: ten piles of S2 10's kind, 400 steps each, 4 -> 6 took
 * 612.5 -> 584.7 iterations a step summed and 14,653 -> 14,082 sets; on four more, 8 sets
 * did as 6) */
#define CD_BGS_TRY_SETS 6

/* the active sets a try solves at most under a sweep cap max_sweeps (0: none): the smaller of
 * the two */
int cd_bgsTrySets(int max_sweeps);

/* outcome of cd_bgsBlockSolve */
enum {
  CD_BGS_BLOCK_DIRECT = 0, /* an active set in closed form solved the block */
  CD_BGS_BLOCK_LEMKE = 1,  /* the closed forms missed; Lemke on the block solved it */
  CD_BGS_BLOCK_FAILED = 2  /* neither met the block tolerance; z is the best candidate */
};

/* bytes of workspace cd_bgsBlockSolve needs for m directions */
size_t cd_bgsBlockWorkSize(int m);

/* the block LCP of one contact: with W = G_ii (3x3 row-major, its own Delassus block) and
 * c (3) = the contact velocity without its own impulse, find z = (lambda_n, alpha (m), beta)
 *     0 <= lambda_n perp u_n >= 0,  0 <= alpha perp D^T u_T + e beta >= 0,
 *     0 <= beta perp mu lambda_n - e^T alpha >= 0,     u = W (lambda_n, D alpha) + c,
 * to the block's part of cd_lcpResidual (impulses and the bound row times wi = 1 / meff_i,
 * m/s) <= 1e-10 max(vref, ||q||_inf), q = (c_n, D^T c_T) and vref the problem's velocity scale
 * (cd_contactProblemVelocityScale): the same answer in any unit of mass.
 * z (m + 2): in, the current value (its active set is tried first); out, the
 * solution. work: cd_bgsBlockWorkSize(m) bytes, aligned for double; no allocation.
 * Returns a CD_BGS_BLOCK_ code. */
int cd_bgsBlockSolve(const double *W, double mu, int m, const double *D, const double *c, double wi, double vref,
                     double *z, void *work);

#endif
