/* ncp_fp.c: the exact Coulomb problem as a fixed point over convex CCPs (Acary, Cadoux,
 * Lemaréchal & Malick, "A formulation of the linear discrete Coulomb friction problem via
 * convex optimization", ZAMM 91(2), 2011).
 *
 * Problem (ncp.h): K ∋ lambda ⟂ ĉ ∈ K*, ĉ_i = c̄_i + (mu_i ||c̄_T,i||, 0, 0), c̄ = G lambda + g.
 * For a fixed shift s (ncon, m/s) the problem
 *     CCP(s):  K ∋ lambda ⟂ G lambda + g + (s_i, 0, 0)_i ∈ K*
 * is the CCP of ccp.h with g shifted: convex (the KKT system of a cone-constrained QP), solved
 * by any CCP solver. A lambda solves the NCP exactly when it solves CCP(s) with
 * s_i = mu_i ||c̄_T,i(lambda)||: the fixed point of s -> mu ||c̄_T(lambda(s))||. ACLM prove
 * that this map has a fixed point when some velocity separates every contact (existence,
 * ncp.h), not that the iteration reaches it; it contracts for small mu.
 *
 * Algorithm: from the warm start, s^k = mu ||c̄_T(lambda^k)||; lambda^{k+1} solves CCP(s^k)
 * warm-started from lambda^k; stop when the NCP residual (ncp.h) of lambda^{k+1} meets the
 * tolerance. The shifted CCP's residual bounds the NCP's: Proj_K is nonexpansive, so
 *     res_NCP(lambda) <= res_CCP(s)(lambda) + max_i mu_i | ||c̄_T,i(lambda)|| - s_i | / vscale,
 * hence each CCP is solved only as accurately as the shift is settled: to
 * max(tol / 2, res_NCP(lambda^k) / 10) (an inexact fixed point; the last CCPs are solved to
 * tol / 2). The CCPs are posed in contact space on the same G (nbody = 0: the solver sees
 * exactly (G, g + s e_N, mu)) and share p's meff and vscale, so their residuals are on the
 * NCP's scale. One outer iteration is one CCP solve; stats->iterations adds up the CCP
 * solvers' iterations (gradient steps, sweeps or interior-point steps: ccp.h), stats->products
 * and ->factorizations theirs plus the residual products here, and *outer counts the CCPs.
 * The best iterate by NCP residual is returned; a limit or a stalled CCP solver leaves
 * converged = 0. FP_STALLED_CCPS CCP solves in a row that stopped short of their tolerance
 * (at the solver's own limit) and left the best no better end the fixed point: the CCPs after
 * them differ only by the shift's change. A run of stalled solves that still lowers the best
 * is not ended: pgs on a cube pyramid pushed sideways by gravity stalls at 2000 sweeps in
 * every CCP, and the fixed point's best still falls ~1% a CCP, between runs of up to 12
 * CCPs no better, and meets 1e-8 after 45 of them. Measured: a 10-cube pyramid under a 5.2 m
 * cube (a fuzzer's input), fp-pgs with --max-iterations 100: 200,000 -> 46,000 sweeps on its
 * stalled step for the same best residual (1.2e-5).
 */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "ccp.h"
#include "ncp.h"

#define FP_STALLED_CCPS 20 /* CCP solves in a row that stalled and brought nothing: the fixed point ends */

/* one CCP with the shifted g, to tolerance tol, from view->lambda */
static int solveShifted(cdContactProblem *view, cdNcpInner inner, double tol, cholmod_common *cc,
                        cdSolveStats *st) {
  cdCcpParams par = {.tolerance = tol};
  switch (inner) {
  case CD_NCP_INNER_PGS: return cd_ccpPgsSolve(view, &par, st);
  case CD_NCP_INNER_IPM: return cd_ccpIpmSolve(view, &par, cc, st);
  default: return cd_ccpApgdSolve(view, &par, NULL, st);
  }
}

int cd_ncpFixedPointSolve(cdContactProblem *p, const cdNcpParams *par, cdNcpInner inner, cholmod_common *cc,
                          cdSolveStats *stats, int *outer) {
  int nc = p->ncon, n = 3 * nc;
  double tol = par && par->tolerance > 0 ? par->tolerance : CD_NCP_TOL;
  int maxit = par && par->max_iterations > 0 ? par->max_iterations : CD_NCP_FP_MAXIT;
  memset(stats, 0, sizeof *stats);
  if (outer) *outer = 0;
  if (nc == 0) {
    stats->converged = 1;
    return CD_OK;
  }
  double *cb = cd_malloc((size_t)3 * n * sizeof(double)), *gs = cb ? cb + n : NULL, *best = cb ? cb + 2 * n : NULL;
  if (!cb) return CD_ERR_NOMEM;
  /* the shifted problem: p's G, meff and scale, g + s e_N, no velocity-space form */
  cdContactProblem view = *p;
  view.g = gs;
  view.vscale = cd_contactProblemVelocityScale(p);
  view.nbody = 0;
  view.delassus_pending = 0;

  for (int i = 0; i < nc; i++) cd_coneProject(p->mu[i], &p->lambda[3 * i], &p->lambda[3 * i]);
  double r = cd_ncpResidualOf(p, p->lambda, cb, NULL), rbest = r;
  stats->products = 1;
  memcpy(best, p->lambda, (size_t)n * sizeof *best);
  int k = 0, rc = CD_OK, stall = par ? par->stall : 0, stalled = 0;
  double rmark = rbest; /* the best residual at the start of the stall window */
  while (rbest > tol && k < maxit) {
    k++;
    memcpy(gs, p->g, (size_t)n * sizeof *gs);
    for (int i = 0; i < nc; i++) gs[3 * i] += p->mu[i] * hypot(cb[3 * i + 1], cb[3 * i + 2]);
    cdSolveStats in;
    rc = solveShifted(&view, inner, fmax(0.5 * tol, 0.1 * r), cc, &in);
    stats->iterations += in.iterations;
    stats->products += in.products;
    stats->factorizations += in.factorizations;
    stats->fallbacks += in.fallbacks;
    stats->cholmod_warnings += in.cholmod_warnings;
    if (rc == CD_ERR_NOMEM) break;
    rc = CD_OK; /* a breakdown leaves its best finite iterate: judged by the NCP residual */
    r = cd_ncpResidualOf(p, p->lambda, cb, NULL);
    stats->products++;
    int better = r < rbest;
    if (better) {
      rbest = r;
      memcpy(best, p->lambda, (size_t)n * sizeof *best);
    }
    if (!isfinite(r)) break;
    /* FP_STALLED_CCPS CCP solves in a row that stopped at their solver's limit and left the
     * best no better: the next CCPs differ from these only by the shift's change, and their
     * solver stalls the same */
    stalled = !in.converged && !better ? stalled + 1 : 0;
    if (stalled >= FP_STALLED_CCPS) break;
    if (stall > 0 && k % stall == 0) {
      if (rbest > 0.5 * rmark) break;
      rmark = rbest;
    }
  }
  memcpy(p->lambda, best, (size_t)n * sizeof *best);
  if (outer) *outer = k;
  stats->residual = rbest;
  stats->converged = rbest <= tol;
  cd_free(cb);
  if (rc == CD_ERR_NOMEM) return rc;
  return isfinite(rbest) ? CD_OK : CD_ERR_NUMERIC;
}
