/* lcp_subspace.h: the subspace-minimisation step that block Gauss-Seidel (lcp_bgs.c) takes
 * to carry what the sweeps carry slowly: the contact LCP restricted to the current active
 * set, a sparse linear system solved by preconditioned GMRES, then projected back onto the
 * LCP's cones. */
#ifndef CD_LCP_SUBSPACE_H
#define CD_LCP_SUBSPACE_H

#include <stddef.h>

#include "problem.h"

/* bytes of workspace cd_lcpSubspaceStep needs for p's contacts and m directions (aligned
 * for double; after cd_contactProblemDelassus, for cd_lcpDelassusScratch) */
size_t cd_lcpSubspaceWorkSize(const cdContactProblem *p, int m);

typedef struct cdLcpSubspaceStats {
  int iterations; /* GMRES iterations (products with G), all passes */
  int passes;     /* linear solves (the active set updated between them) */
  int sticking;   /* contacts whose three impulse components were free */
  int sliding;    /* sliding contacts (friction on the polygon) */
  double residual; /* ||min(z, A z + b)||_inf of zout */
} cdLcpSubspaceStats;

/* from the iterate z of the LCP (layout in lcp.h) writes the candidate zout (both
 * cd_lcpSize(ncon, m); they may not alias). At most max_iter GMRES iterations a pass; they stop
 * early once the restricted residual ||R u||_2 <= tolerance (m/s, lcp_subspace.c). zout is
 * the candidate, its LCP residual in stats->residual, for the caller to judge. work: cd_lcpSubspaceWorkSize
 * bytes, aligned for double; no allocation. */
void cd_lcpSubspaceStep(const cdContactProblem *p, int m, const double *D, const double *z, double *zout,
                        int max_iter, double tolerance, void *work, cdLcpSubspaceStats *stats);

#endif
