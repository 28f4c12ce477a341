/* ccp.h: the CCP backend (--model ccp, seed 001) and its four solvers, for the backend table,
 * the tests, and models built on the CCP.
 *
 * Every solver solves the same cone complementarity problem on a cdContactProblem p:
 *     K ∋ lambda ⟂ c̄ = G lambda + g ∈ K*,   K = Π_i K_mu_i (cone.h),
 * the KKT conditions of the dual  min_lambda 1/2 lambda^T G lambda + g^T lambda  s.t.
 * lambda ∈ K, and of seed 001's primal  min_v 1/2 ||v - v_f||^2_M  s.t.  J v + (phi/dt) e_n ∈ K*
 * (its multipliers are lambda). In: p->lambda is the warm start (apgd, pgs and primal use it;
 * ipm, an interior-point method, starts from its own interior point). Out: p->lambda the best
 * iterate by the shared residual (cone.h: max_i ||l_i - Proj_K(l_i - c̄_i)|| / ||g||_inf with
 * l_i = lambda_i / meff_i), and stats->iterations (what one is: each solver's file says),
 * ->residual, ->converged (residual <= tolerance), ->factorizations, ->products. Return CD_OK,
 * CD_ERR_NOMEM or CD_ERR_NUMERIC (a breakdown that left no usable iterate; p->lambda then holds
 * the best finite one, possibly the warm start projected on K).
 *
 * Each entry point works on any cdContactProblem: a simulation step's (velocity-space form
 * present; G built on demand by the solvers that need it) or one read from a file (G given,
 * nbody = 0). Solvers that keep state from one step to the next (apgd: its step size; primal:
 * the symbolic analysis of its Newton matrix and its buffers) take it as a work object, made
 * once and passed to every solve; NULL works too (a fresh one for that solve).
 *
 * Defaults (cdCcpParams with tolerance 0 / max_iterations 0 take these): apgd, pgs: 1e-6 and
 * 2000 iterations; the second-order methods: 1e-8, and 200 Newton steps (primal) or 100
 * interior-point steps (ipm).
 */
#ifndef CD_CCP_H
#define CD_CCP_H

#include <cholmod.h>

#include "backend.h"
#include "problem.h"

#define CD_CCP_ITER_TOL 1e-6
#define CD_CCP_ITER_MAXIT 2000
#define CD_CCP_NEWTON_TOL 1e-8
#define CD_CCP_NEWTON_MAXIT 100 /* ipm's interior-point steps */
#define CD_CCP_PRIMAL_MAXIT 200 /* primal's Newton steps: a cold start on a pile or stack takes up to ~150 */
#define CD_CCP_IPM_POLISH 2000 /* at most this many Gauss-Seidel sweeps polish the IPM result */

typedef struct cdCcpParams {
  double tolerance;   /* stop when the shared residual (cone.h) is <= this */
  int max_iterations; /* apgd: gradient steps; pgs: sweeps; primal: Newton steps; ipm: interior-point steps */
  int warm_max_iterations; /* primal: a lower limit for a start that is not cold (warm-start residual
                              <= 0.5), e.g. a budget before another solver takes over; 0: none */
  double max_factor_flops; /* primal: no Newton step when a factorization of its matrix would take
                              more floating-point operations a contact (CHOLMOD's count after the
                              analysis); the warm start comes back unconverged. 0: no cap */
  double cg_factor_flops;  /* primal: Newton steps by preconditioned conjugate gradients instead of a
                              factorization when one would take more flops a contact than this
                              (ccp_primal.c); 0: primal's default bound */
  int apgd_metric;         /* apgd: 1 in the per-contact diagonal metric from G's diagonal (fewer
                              iterations; what the ccp backend runs), 0 the Euclidean one (Mazhar et
                              al.'s method; the NCP's fixed point keeps it: ccp_apgd.c) */
  int apgd_relax;          /* apgd: 1 to start with over-relaxed Gauss-Seidel sweeps over the contacts
                              above the tolerance (ccp_relax.c; with apgd_metric, on a simulation
                              step's problem: what the ccp backend runs), 0 without (ccp_apgd.c) */
} cdCcpParams;

/* Nesterov accelerated projected gradient (solvers/ccp_apgd.c). Its work object carries the
 * step size (a Lipschitz estimate of G) and the buffers from one solve to the next. */
typedef struct cdCcpApgdWork cdCcpApgdWork;
cdCcpApgdWork *cd_ccpApgdWorkMake(void); /* NULL: no memory */
void cd_ccpApgdWorkFree(cdCcpApgdWork *w);
int cd_ccpApgdSolve(cdContactProblem *p, const cdCcpParams *par, cdCcpApgdWork *work, cdSolveStats *stats);

/* projected block Gauss-Seidel over contacts (solvers/ccp_pgs.c) */
int cd_ccpPgsSolve(cdContactProblem *p, const cdCcpParams *par, cdSolveStats *stats);

/* seed 001's primal by Newton on its augmented Lagrangian (solvers/ccp_primal.c): in velocity
 * space when p has that form (the Newton matrix M + J^T D J, never G), else the same Newton in
 * contact space on G. Its work object holds CHOLMOD's context, the symbolic analysis (reused
 * while the contact graph keeps its pattern) and the buffers. */
typedef struct cdCcpPrimalWork cdCcpPrimalWork;
cdCcpPrimalWork *cd_ccpPrimalWorkMake(void); /* NULL: no memory or CHOLMOD did not start */
void cd_ccpPrimalWorkFree(cdCcpPrimalWork *w);
int cd_ccpPrimalSolve(cdContactProblem *p, const cdCcpParams *par, cdCcpPrimalWork *work, cdSolveStats *stats);

/* primal-dual interior point with Nesterov-Todd scaling, CHOLMOD for the Newton systems
 * (solvers/ccp_ipm.c); cc is a started cholmod_common owned by the caller */
int cd_ccpIpmSolve(cdContactProblem *p, const cdCcpParams *par, cholmod_common *cc, cdSolveStats *stats);

/* the backend: solvers "primal", "apgd", "pgs", "ipm"; the default picks primal or apgd each
 * step (ccp.c) */
extern const cdBackend cd_backendCcp;

#endif
