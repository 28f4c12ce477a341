/* ncp.c: the exact Coulomb backend (--model ncp): seed 001's opening problem
 *     K ∋ lambda ⟂ ĉ ∈ K*,   ĉ = c̄ + (mu ||c̄_T||, 0, 0),   c̄ = G lambda + g,
 * on the contact problem the core builds each step (problem.h), with the guarantees and the
 * residual stated in ncp.h. The unknowns are the impulses lambda (N s, per contact (normal,
 * t1, t2), acting on body b).
 *
 * Solvers (option --solver):
 *   nsgs+fp-apgd (default) nsgs until it converges or stalls, then the fixed point with apgd
 *             from nsgs's best iterate (stats->fallbacks = 1 when it does), and when that
 *             stalls too, nsgs again from the fixed point's best with the sweeps left;
 *   nsgs      nonsmooth Gauss-Seidel with the exact one-contact solver, ncp_nsgs.c;
 *   fp-apgd, fp-pgs, fp-ipm
 *             the fixed point over shifted CCPs, ncp_fp.c, each CCP solved by apgd, pgs or the
 *             interior-point solver (ipm) of ccp.h.
 * The default was chosen by measurement (README "Exact Coulomb", tolerance 1e-8): nsgs is the
 * fastest where it converges (sphere-pile: 92 sweeps a step against 363 apgd steps for
 * fp-apgd; pile-1000's first 100 steps: 1 step missed, where fp-apgd misses 66), but
 * Gauss-Seidel stalls on the hyperstatic cube stack (residual 2e-2 after 2000 sweeps on every
 * step, as the CCP's pgs does) where the fixed point converges; the hybrid converges on every
 * step of the small bundled scenes, misses pile-1000's one step as nsgs does, and solves the
 * most peer problems (58 of the 64 with contacts, against 56 for fp-apgd and 51 for nsgs).
 * Options: tolerance (0: 1e-8) on the residual of ncp.h, max_iterations (0: 2000 sweeps for
 * nsgs and the hybrid's nsgs, 100 CCP solves for the fixed point). A solve that does not
 * converge returns its best iterate (CD_OK, converged 0): the step goes on with it, and the run
 * records the residual.
 */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "backends.h"
#include "ncp.h"

typedef enum {
  NCP_HYBRID = 0,
  NCP_NSGS = 1,
  NCP_FP_APGD = 2,
  NCP_FP_PGS = 3,
  NCP_FP_IPM = 4,
  NCP_NSOLVER = 5
} ncpSolver;

static const char *const ncpNames[NCP_NSOLVER] = {"nsgs+fp-apgd", "nsgs", "fp-apgd", "fp-pgs", "fp-ipm"};

typedef struct ncpState {
  ncpSolver solver;
  cdNcpParams par;
  int cc_started;
  cholmod_common cc; /* the fp-ipm inner solver's CHOLMOD context, owned here */
} ncpState;

static int ncpMake(const cdScene *scene, const cdBackendOptions *opt, void **state, char *err, size_t errlen) {
  (void)scene;
  ncpSolver s = NCP_HYBRID;
  const char *name = opt ? opt->solver : NULL;
  if (name && *name) {
    int k = cd_backendSolverIndex("ncp", name, ncpNames, NCP_NSOLVER, err, errlen);
    if (k < 0) return CD_ERR_USAGE;
    s = (ncpSolver)k;
  }
  if (opt && (opt->tolerance < 0 || opt->max_iterations < 0)) {
    if (err && errlen) snprintf(err, errlen, "ncp: tolerance and max_iterations must not be negative");
    return CD_ERR_USAGE;
  }
  ncpState *st = cd_calloc(1, sizeof *st);
  if (!st) return CD_ERR_NOMEM;
  st->solver = s;
  st->par.tolerance = opt && opt->tolerance > 0 ? opt->tolerance : CD_NCP_TOL;
  st->par.max_iterations =
      opt && opt->max_iterations > 0 ? opt->max_iterations
                                     : (s <= NCP_NSGS ? CD_NCP_NSGS_MAXIT : CD_NCP_FP_MAXIT);
  if (s == NCP_FP_IPM) {
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

static const char *ncpSolverName(const void *state) { return ncpNames[((const ncpState *)state)->solver]; }

/* adds a later stage's work and result to the hybrid's stats */
static void addStage(cdSolveStats *stats, const cdSolveStats *s) {
  stats->iterations += s->iterations;
  stats->products += s->products;
  stats->factorizations += s->factorizations;
  stats->cholmod_warnings += s->cholmod_warnings;
  /* each stage starts from the previous one's best iterate and returns its own best: never
   * worse */
  stats->residual = s->residual;
  stats->converged = s->converged;
}

/* nsgs until it converges or stalls; then the fixed point from its best iterate; then, if the
 * fixed point stalls too, nsgs again from there with the sweeps the first stage left */
static int ncpHybrid(const cdNcpParams *par, cdContactProblem *p, cdSolveStats *stats) {
  cdNcpParams pn = {par->tolerance, par->max_iterations, CD_NCP_NSGS_STALL};
  int rc = cd_ncpNsgsSolve(p, &pn, stats);
  if (rc != CD_OK || stats->converged) return rc;
  int swept = stats->iterations;
  cdNcpParams pf = {par->tolerance, CD_NCP_FP_MAXIT, CD_NCP_FP_STALL};
  cdSolveStats s;
  rc = cd_ncpFixedPointSolve(p, &pf, CD_NCP_INNER_APGD, NULL, &s, NULL);
  addStage(stats, &s);
  stats->fallbacks += 1;
  if (rc != CD_OK || stats->converged || swept >= par->max_iterations) return rc;
  cdNcpParams pr = {par->tolerance, par->max_iterations - swept, 0};
  rc = cd_ncpNsgsSolve(p, &pr, &s);
  addStage(stats, &s);
  return rc;
}

static int ncpSolve(void *state, cdContactProblem *p, cdContactSet *contacts, cdSolveStats *stats) {
  (void)contacts; /* the impulses go back through p->lambda; the core copies them */
  ncpState *st = state;
  if (cd_contactProblemDelassus(p)) return CD_ERR_NOMEM;
  switch (st->solver) {
  case NCP_FP_APGD: return cd_ncpFixedPointSolve(p, &st->par, CD_NCP_INNER_APGD, NULL, stats, NULL);
  case NCP_FP_PGS: return cd_ncpFixedPointSolve(p, &st->par, CD_NCP_INNER_PGS, NULL, stats, NULL);
  case NCP_FP_IPM: return cd_ncpFixedPointSolve(p, &st->par, CD_NCP_INNER_IPM, &st->cc, stats, NULL);
  case NCP_NSGS: return cd_ncpNsgsSolve(p, &st->par, stats);
  default: return ncpHybrid(&st->par, p, stats);
  }
}

static void ncpFree(void *state) {
  ncpState *st = state;
  if (!st) return;
  if (st->cc_started) cholmod_finish(&st->cc);
  cd_free(st);
}

const cdBackend cd_backendNcp = {
    .name = "ncp",
    .kind = CD_BACKEND_IMPULSE,
    .make = ncpMake,
    .solverName = ncpSolverName,
    .solve = ncpSolve,
    .substeps = NULL,
    .forces = NULL,
    .free = ncpFree,
};
