/* ccp.c: the CCP backend (--model ccp): seed 001's cone complementarity problem
 *     K ∋ lambda ⟂ c̄ = G lambda + g ∈ K*,   K = Π_i {||l_T|| <= mu_i l_N},
 * with exact Coulomb cones (no polyhedral approximation, no De Saxcé term), on the contact
 * problem the core builds each step (problem.h). The unknowns are the impulses lambda
 * (N s, per contact (normal, t1, t2), acting on body b); c̄ (m/s) is the post-step contact
 * velocity plus phi/dt in the normal component.
 *
 * Solvers (option --solver):
 *   primal  seed 001's primal in velocity space, Newton on its augmented Lagrangian with
 *           CHOLMOD factors of M + J^T D J, or conjugate gradients where the factor would fill
 *           in, ccp_primal.c (tolerance 1e-8);
 *   apgd    Nesterov accelerated projected gradient on the dual in a per-contact diagonal
 *           metric from G's diagonal (cdCcpParams.apgd_metric), after over-relaxed
 *           Gauss-Seidel sweeps over the contacts above the tolerance (apgd_relax, ccp_relax.c),
 *           ccp_apgd.c (1e-6);
 *   pgs     projected block Gauss-Seidel over contacts, ccp_pgs.c (1e-6);
 *   ipm     primal-dual interior point on the dual's conic form, ccp_ipm.c (1e-8);
 *   default primal or apgd, chosen each step by primal's cost and record (below).
 * Options: tolerance (0: each solver's default) on the shared residual of cone.h,
 * max_iterations (0: 200 Newton steps, 100 interior-point steps, 2000 apgd / pgs iterations).
 * A solve that does not converge still returns its best iterate (CD_OK, converged 0): the step
 * goes on with the most nearly complementary impulses, and the run records the residual.
 *
 * The default. A Newton step of primal costs a sparse Cholesky factorization of the
 * velocity-space matrix M + J^T D J; an apgd iteration a product with G. Which is cheaper depends
 * on the scene more than on its size: on stacks and pyramids of boxes primal's warm start is
 * nearly the answer and a step takes 0 or 1 Newton step (the 20-cube stack: 0.69 a step, the
 * 55-cube pyramid 0.76), where apgd takes 50-700 iterations; on sphere piles sliding and rolling
 * contacts switch between sticking and sliding a few at a time under the exact line search, and
 * primal takes 20-30 Newton steps a step (the 64-sphere pile: 27) against apgd's 65 iterations,
 * and the factorization's fill grows with the pile (20k-70k flops a contact in the collapsed
 * 1000-sphere pile, against 130-500 for the stacks). So the default tries primal with a budget
 * and watches it: primal runs when its factorization costs at most CCP_AUTO_FLOPS a contact
 * (CHOLMOD's count; measured on these scenes CHOLMOD spends 5-10 instructions a flop on them,
 * so 4 Newton steps then cost about what 100-200 apgd iterations do), within CCP_AUTO_NEWTON
 * Newton steps from a warm start (CCP_AUTO_COLD on the run's first step with contacts when it starts cold, whose
 * answer is then every later step's warm start; a cold start later, after an impact, gets
 * CCP_AUTO_NEWTON: on a falling pile new contacts come every step); when it misses, apgd finishes the step from primal's best iterate and solves the
 * next steps, 2, 4, 8, ... up to 256 while primal keeps missing, before primal is tried again.
 * The output's solver attribute names what ran: "primal", "apgd", or "primal+apgd".
 */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "backends.h"
#include "ccp.h"

/* the default's choice (opening comment): primal's budget of Newton steps from a warm and from a
 * cold start, the steps apgd runs before primal is tried again (doubling, up to
 * CCP_AUTO_WAIT_MAX, while primal keeps missing its budget), and the factorization flops per
 * contact above which primal takes no Newton step */
#define CCP_AUTO_NEWTON 4
#define CCP_AUTO_COLD 16
#define CCP_AUTO_WAIT 2
#define CCP_AUTO_WAIT_MAX 256
#define CCP_AUTO_FLOPS 2e3

typedef enum { CCP_AUTO = 0, CCP_PRIMAL = 1, CCP_APGD = 2, CCP_PGS = 3, CCP_IPM = 4 } ccpSolver;

typedef struct ccpState {
  ccpSolver solver;
  double tolerance;  /* the user's, or 0: each solver's default */
  int max_iterations;
  int used_primal, used_apgd;
  int wait, wait_next; /* default: steps left for apgd before primal is tried again, and the next wait */
  int first;           /* default: no step with contacts solved yet */
  cdCcpPrimalWork *primal;
  cdCcpApgdWork *apgd;
  int cc_started;
  cholmod_common cc; /* ipm's CHOLMOD context */
} ccpState;

static const char *const ccpNames[] = {"default", "primal", "apgd", "pgs", "ipm"};

static void ccpFree(void *state) {
  ccpState *st = state;
  if (!st) return;
  cd_ccpPrimalWorkFree(st->primal);
  cd_ccpApgdWorkFree(st->apgd);
  if (st->cc_started) cholmod_finish(&st->cc);
  cd_free(st);
}

static int ccpMake(const cdScene *scene, const cdBackendOptions *opt, void **state, char *err, size_t errlen) {
  (void)scene;
  ccpSolver s = CCP_AUTO;
  const char *name = opt ? opt->solver : NULL;
  if (name && *name) {
    /* ccpNames[0], the default, is not a name to ask for */
    int k = cd_backendSolverIndex("ccp", name, ccpNames + 1, 4, err, errlen);
    if (k < 0) return CD_ERR_USAGE;
    s = (ccpSolver)(k + 1);
  }
  if (opt && (opt->tolerance < 0 || opt->max_iterations < 0)) {
    if (err && errlen) snprintf(err, errlen, "ccp: tolerance and max_iterations must not be negative");
    return CD_ERR_USAGE;
  }
  ccpState *st = cd_calloc(1, sizeof *st);
  if (!st) return CD_ERR_NOMEM;
  st->solver = s;
  st->tolerance = opt ? opt->tolerance : 0.0;
  st->wait_next = CCP_AUTO_WAIT;
  st->first = 1;
  st->max_iterations = opt ? opt->max_iterations : 0;
  if ((s == CCP_AUTO || s == CCP_PRIMAL) && !(st->primal = cd_ccpPrimalWorkMake())) {
    ccpFree(st);
    return CD_ERR_NOMEM;
  }
  if ((s == CCP_AUTO || s == CCP_APGD) && !(st->apgd = cd_ccpApgdWorkMake())) {
    ccpFree(st);
    return CD_ERR_NOMEM;
  }
  if (s == CCP_IPM) {
    if (!cholmod_start(&st->cc)) {
      ccpFree(st);
      return CD_ERR_NOMEM;
    }
    st->cc.print = 0; /* no I/O from the solvers: failures come back through status codes */
    st->cc_started = 1;
  }
  *state = st;
  return CD_OK;
}

static const char *ccpSolverName(const void *state) {
  const ccpState *st = state;
  if (st->used_primal && st->used_apgd) return "primal+apgd";
  if (st->used_primal) return "primal";
  if (st->used_apgd) return "apgd";
  return st->solver == CCP_AUTO ? "primal+apgd" : ccpNames[st->solver];
}

/* the default: primal within its budget of Newton steps where its factorization is cheap
 * enough; apgd otherwise, from primal's best iterate when primal ran out of budget, and for the
 * next steps (a wait that doubles while primal keeps missing) */
static int ccpAuto(ccpState *st, cdContactProblem *p, const cdCcpParams *par, cdSolveStats *stats) {
  if (p->nbody > 0 && st->wait > 0) {
    st->wait--;
    st->used_apgd = 1;
    return cd_ccpApgdSolve(p, par, st->apgd, stats);
  }
  /* a problem without the velocity-space form (from a file) has no apgd fallback here: primal
   * runs to its own limit */
  cdCcpParams pp = *par;
  if (p->nbody > 0) {
    int cap = st->first ? CCP_AUTO_COLD : CCP_AUTO_NEWTON;
    if (pp.max_iterations <= 0 || pp.max_iterations > cap) pp.max_iterations = cap;
    pp.warm_max_iterations = CCP_AUTO_NEWTON;
    pp.max_factor_flops = CCP_AUTO_FLOPS;
  }
  st->used_primal = 1;
  int rc = cd_ccpPrimalSolve(p, &pp, st->primal, stats);
  st->first = 0;
  if (rc == CD_ERR_NOMEM || stats->converged || p->nbody == 0) {
    if (stats->converged) st->wait_next = CCP_AUTO_WAIT;
    return rc;
  }
  /* primal missed its budget, or its factorization would cost too much: apgd from its best
   * iterate, and for the next steps */
  cdSolveStats first = *stats;
  st->used_apgd = 1;
  st->wait = st->wait_next;
  st->wait_next = st->wait_next * 2 < CCP_AUTO_WAIT_MAX ? st->wait_next * 2 : CCP_AUTO_WAIT_MAX;
  rc = cd_ccpApgdSolve(p, par, st->apgd, stats);
  stats->iterations += first.iterations;
  stats->factorizations += first.factorizations;
  stats->products += first.products;
  stats->fallbacks = first.iterations > 0;
  return rc;
}

static int ccpSolve(void *state, cdContactProblem *p, cdContactSet *contacts, cdSolveStats *stats) {
  (void)contacts; /* the impulses go back through p->lambda; the core copies them */
  ccpState *st = state;
  cdCcpParams par = {st->tolerance, st->max_iterations, 0, 0.0, 0.0, 1, 1};
  switch (st->solver) {
  case CCP_PRIMAL: st->used_primal = 1; return cd_ccpPrimalSolve(p, &par, st->primal, stats);
  case CCP_APGD: st->used_apgd = 1; return cd_ccpApgdSolve(p, &par, st->apgd, stats);
  case CCP_PGS: return cd_ccpPgsSolve(p, &par, stats);
  case CCP_IPM: return cd_ccpIpmSolve(p, &par, &st->cc, stats);
  default: return ccpAuto(st, p, &par, stats);
  }
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
