/* lcp_bgs.h: block Gauss-Seidel over contacts for the Anitescu-Hart LCP (layout in lcp.h). */
#ifndef CD_LCP_BGS_H
#define CD_LCP_BGS_H

#include "problem.h"

typedef struct cdBgsOptions {
  double tolerance; /* stop when ||min(z, A z + b)||_inf <= tolerance; 0: 1e-8 */
  int max_sweeps;   /* 0: 1000 */
} cdBgsOptions;

typedef struct cdBgsStats {
  int sweeps;         /* sweeps over all contacts */
  double residual;    /* ||min(z, A z + b)||_inf of the returned z (the best iterate) */
  int converged;      /* 1 when residual <= tolerance */
  int block_failures; /* block LCPs Lemke could not solve (the block kept its value) */
} cdBgsStats;

/* solves the LCP of p with m directions D (cd_lcpDirections) for z (cd_lcpSize(ncon, m)),
 * starting from z (warm start in, best iterate out). Returns CD_OK or CD_ERR_NOMEM. */
int cd_bgsSolve(const cdContactProblem *p, int m, const double *D, double *z, const cdBgsOptions *opt,
                cdBgsStats *stats);

#endif
