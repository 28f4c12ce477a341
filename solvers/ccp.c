/* ccp.c: the CCP backend (--model ccp): seed 001's cone complementarity problem
 *     K ∋ lambda ⟂ c̄ = G lambda + g ∈ K*,   K = Π_i {||l_T|| <= mu_i l_N},
 * with exact Coulomb cones (no polyhedral approximation, no De Saxcé term), on the contact
 * problem the core builds each step (problem.h). The unknowns are the impulses lambda
 * (N s, per contact (normal, t1, t2), acting on body b); c̄ (m/s) is the post-step contact
 * velocity plus phi/dt in the normal component.
 *
 * Solvers (option --solver):
 *   apgd   (default) Nesterov accelerated projected gradient, ccp_apgd.c;
 *   pgs    projected block Gauss-Seidel over contacts, ccp_pgs.c;
 *   primal primal-dual interior point on the conic form, CHOLMOD Newton systems, ccp_primal.c.
 * Options: tolerance (0: 1e-6 for apgd / pgs, 1e-8 for primal) on the shared residual of
 * cone.h, max_iterations (0: 2000 for apgd / pgs, 100 for primal).
 * Stats: iterations, residual = max_i ||lambda_i - Proj_K(lambda_i - c̄_i)|| / (1 + ||g||_inf),
 * converged = residual <= tolerance. A solve that does not converge still returns its best
 * iterate (CD_OK, converged 0): the step goes on with the most nearly complementary impulses,
 * and the run records the residual.
 */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "ccp.h"

typedef enum { CCP_APGD = 0, CCP_PGS = 1, CCP_PRIMAL = 2 } ccpSolver;

typedef struct ccpState {
  ccpSolver solver;
  cdCcpParams par;
  int cc_started;
  cholmod_common cc; /* the primal solver's CHOLMOD context, owned here */
} ccpState;

static const char *const ccpNames[] = {"apgd", "pgs", "primal"};

static int ccpMake(const cdScene *scene, const cdBackendOptions *opt, void **state, char *err, size_t errlen) {
  (void)scene;
  ccpSolver s = CCP_APGD;
  const char *name = opt ? opt->solver : NULL;
  if (name && *name) {
    int found = 0;
    for (int k = 0; k < 3; k++)
      if (strcmp(name, ccpNames[k]) == 0) {
        s = (ccpSolver)k;
        found = 1;
      }
    if (!found) {
      if (err && errlen) snprintf(err, errlen, "ccp: unknown solver '%s' (apgd, pgs, primal)", name);
      return CD_ERR_USAGE;
    }
  }
  if (opt && (opt->tolerance < 0 || opt->max_iterations < 0)) {
    if (err && errlen) snprintf(err, errlen, "ccp: tolerance and max_iterations must not be negative");
    return CD_ERR_USAGE;
  }
  ccpState *st = cd_calloc(1, sizeof *st);
  if (!st) return CD_ERR_NOMEM;
  st->solver = s;
  st->par.tolerance = opt && opt->tolerance > 0 ? opt->tolerance : (s == CCP_PRIMAL ? CD_CCP_PRIMAL_TOL : CD_CCP_ITER_TOL);
  st->par.max_iterations =
      opt && opt->max_iterations > 0 ? opt->max_iterations : (s == CCP_PRIMAL ? CD_CCP_PRIMAL_MAXIT : CD_CCP_ITER_MAXIT);
  if (s == CCP_PRIMAL) {
    if (!cholmod_start(&st->cc)) {
      cd_free(st);
      return CD_ERR_NOMEM;
    }
    st->cc.print = 0; /* no I/O from the solvers: failures come back through status codes */
    st->cc_started = 1;
  }
  *state = st;
  return CD_OK;
}

static const char *ccpSolverName(const void *state) { return ccpNames[((const ccpState *)state)->solver]; }

static int ccpSolve(void *state, cdContactProblem *p, cdContactSet *contacts, cdSolveStats *stats) {
  (void)contacts; /* the impulses go back through p->lambda; the core copies them */
  ccpState *st = state;
  if (cd_contactProblemDelassus(p)) return CD_ERR_NOMEM;
  switch (st->solver) {
  case CCP_PGS: return cd_ccpPgsSolve(p, &st->par, stats);
  case CCP_PRIMAL: return cd_ccpPrimalSolve(p, &st->par, &st->cc, stats);
  default: return cd_ccpApgdSolve(p, &st->par, stats);
  }
}

static void ccpFree(void *state) {
  ccpState *st = state;
  if (!st) return;
  if (st->cc_started) cholmod_finish(&st->cc);
  cd_free(st);
}

const cdBackend cd_backendCcp = {
    .name = "ccp",
    .kind = CD_BACKEND_IMPULSE,
    .make = ccpMake,
    .solverName = ccpSolverName,
    .solve = ccpSolve,
    .substeps = NULL,
    .forces = NULL,
    .free = ccpFree,
};
