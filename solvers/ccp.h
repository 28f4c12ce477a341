/* ccp.h: the CCP backend (--model ccp, seed 001) and its three solvers, for the backend
 * table and the tests.
 *
 * Every solver solves the same cone complementarity problem on a cdContactProblem p:
 *     K ∋ lambda ⟂ c̄ = G lambda + g ∈ K*,   K = Π_i K_mu_i (cone.h),
 * the KKT conditions of  min_lambda 1/2 lambda^T G lambda + g^T lambda  s.t.  lambda ∈ K.
 * In: p->lambda is the warm start (apgd, pgs use it; primal, an interior-point method, starts
 * from its own interior point). Out: p->lambda the best iterate by the shared residual
 * (cone.h), and stats->iterations, ->residual (max_i natural-map residual / (1 + ||g||_inf)),
 * ->converged (residual <= tolerance). Return CD_OK, CD_ERR_NOMEM or CD_ERR_NUMERIC (a breakdown
 * that left no usable iterate; p->lambda then holds the best finite one, possibly the warm
 * start projected on K).
 *
 * Defaults (cdCcpParams with tolerance 0 / max_iterations 0 take these):
 *   apgd, pgs: tolerance 1e-6, max_iterations 2000;  primal: tolerance 1e-8, max_iterations 100.
 */
#ifndef CD_CCP_H
#define CD_CCP_H

#include <cholmod.h>

#include "backend.h"
#include "problem.h"

#define CD_CCP_ITER_TOL 1e-6
#define CD_CCP_ITER_MAXIT 2000
#define CD_CCP_PRIMAL_TOL 1e-8
#define CD_CCP_PRIMAL_MAXIT 100
#define CD_CCP_PRIMAL_POLISH 2000 /* at most this many Gauss-Seidel sweeps polish the IPM result */

typedef struct cdCcpParams {
  double tolerance;   /* stop when the shared residual (cone.h) is <= this */
  int max_iterations; /* apgd: gradient steps; pgs: sweeps; primal: interior-point steps */
} cdCcpParams;

/* Nesterov accelerated projected gradient (solvers/ccp_apgd.c) */
int cd_ccpApgdSolve(cdContactProblem *p, const cdCcpParams *par, cdSolveStats *stats);
/* projected block Gauss-Seidel over contacts (solvers/ccp_pgs.c) */
int cd_ccpPgsSolve(cdContactProblem *p, const cdCcpParams *par, cdSolveStats *stats);
/* primal-dual interior point with Nesterov-Todd scaling, CHOLMOD for the Newton systems
 * (solvers/ccp_primal.c); cc is a started cholmod_common owned by the caller */
int cd_ccpPrimalSolve(cdContactProblem *p, const cdCcpParams *par, cholmod_common *cc, cdSolveStats *stats);

/* the backend: solvers "apgd" (default), "pgs", "primal" */
extern const cdBackend cd_backendCcp;

#endif
