/* test_ccp_peer.c: the CCP solvers on the public friction-contact collections (peer-data
 * folders fc-dat (.dat) and fclib (.hdf5), read by tests/peer_data.h).
 *
 * Every problem is treated as a CCP with the same data: G = W, g = q, mu as read, no De
 * Saxcé term (so these are not the Coulomb problems the files pose, but CCPs with their
 * matrices, and the residual is the CCP's own, cone.h). The problems have no velocity-space
 * form, so primal runs its contact-space Newton (ccp_primal.c). Every solver runs from
 * lambda = 0 with the production settings (ccp.h: tolerance 1e-8 for primal and ipm, with 200
 * Newton and 100 interior-point steps; 1e-6 and 2000 iterations for apgd and pgs). One line per problem and one summary line
 * per solver are printed. All 65 readable problems are run (the rolling-friction Chute file is
 * not a CCP and the reader rejects it).
 *
 * What is asserted:
 *  - the second-order solvers, primal and ipm, solve every problem to their tolerance;
 *  - a first-order solver either converges, or stops at its iteration limit (no breakdown,
 *    residual finite and below the start's): stacks, piles and tightly coupled assemblies are
 *    where projected gradients and Gauss-Seidel converge linearly and slowly; which problems
 *    those are is printed, not listed in advance;
 *  - every converged answer agrees with primal's: two answers a, b of one CCP satisfy, by
 *    Moreau's decomposition of l - c̄ per contact (test_ccp_physics.c, (R3)), with
 *    l_i = lambda_i / meff_i, r_i = l_i - Proj_K(l_i - c̄_i) and p_i = l_i - r_i,
 *        (lambda_a - lambda_b)^T sym(G) (lambda_a - lambda_b) = (c̄_a - c̄_b)^T (lambda_a - lambda_b)
 *          <= sum_i meff_i (r_a,i - r_b,i)^T (c̄_a,i + p_a,i - c̄_b,i - p_b,i)
 *    (the skew part of a nonsymmetric G drops out of the quadratic form), checked up to the
 *    round-off of the sums.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "ccp.h"
#include "cone.h"
#include "peer_data.h"
#include "test.h"

enum { PS_PRIMAL = 0, PS_IPM = 1, PS_APGD = 2, PS_PGS = 3, PS_N = 4 };

/* the (R3) excess of answer a over b: left side minus bound minus round-off (<= 0 holds). Per
 * contact the impulses are taken as velocities l = lambda / meff_i (the shared residual's
 * scaling, cone.h), so that the natural map and the round-off estimate compare like units */
static double agreementExcess(cdContactProblem *p, const double *la, const double *lb, double *work) {
  int n = 3 * p->ncon;
  double *ca = work, *cb = work + n, *dl = work + 2 * n, *Gd = work + 3 * n;
  cd_coneResidualOf(p, la, ca, NULL);
  cd_coneResidualOf(p, lb, cb, NULL);
  for (int k = 0; k < n; k++) dl[k] = la[k] - lb[k];
  cd_blockMatrixMul(&p->G, dl, Gd);
  double lhs = 0.0, bound = 0.0, mag = 0.0;
  for (int k = 0; k < n; k++) lhs += dl[k] * Gd[k];
  for (int i = 0; i < p->ncon; i++) {
    double s = cd_contactProblemMeff(p, i), xa[3], xb[3], za[3], zb[3], pa[3], pb[3], t = 0.0;
    for (int c = 0; c < 3; c++) {
      xa[c] = la[3 * i + c] / s;
      xb[c] = lb[3 * i + c] / s;
      za[c] = xa[c] - ca[3 * i + c];
      zb[c] = xb[c] - cb[3 * i + c];
    }
    cd_coneProject(p->mu[i], za, pa);
    cd_coneProject(p->mu[i], zb, pb);
    for (int c = 0; c < 3; c++) {
      double ra = xa[c] - pa[c], rb = xb[c] - pb[c], m = fabs(xa[c]) + fabs(xb[c]) + fabs(ca[3 * i + c]) + fabs(cb[3 * i + c]);
      t += (ra - rb) * (ca[3 * i + c] + pa[c] - cb[3 * i + c] - pb[c]);
      mag += s * m * m;
    }
    bound += s * t;
  }
  return lhs - bound - 1e-13 * mag;
}

CD_TEST(ccpSolversPassThePeerFrictionContactCollections) {
  const char *dir = cd_peerDir();
  if (!dir) CD_SKIP("peer data folder absent (CDSIM_PEER_DATA unset or not a directory)");
  static cdPeerFile files[256];
  int nf = cd_peerFrictionFiles(dir, files, 256);
  CHECK(nf > 0);
  cholmod_common cc;
  cholmod_start(&cc);
  cc.print = 0;
  const double tol[PS_N] = {CD_CCP_NEWTON_TOL, CD_CCP_NEWTON_TOL, CD_CCP_ITER_TOL, CD_CCP_ITER_TOL};
  const int maxit[PS_N] = {CD_CCP_PRIMAL_MAXIT, CD_CCP_NEWTON_MAXIT, CD_CCP_ITER_MAXIT, CD_CCP_ITER_MAXIT};
  const char *names[PS_N] = {"primal", "ipm", "apgd", "pgs"};
  int passed[PS_N] = {0}, tried = 0, polished = 0, maxIt[PS_N] = {0};
  long itsum[PS_N] = {0};
  double secs[PS_N] = {0}, worstAgree = -INFINITY;
  for (int f = 0; f < nf; f++) {
    char err[512];
    cdContactProblem p;
    int rc = cd_frictionFileRead(files[f].path, &p, err, sizeof err);
    if (rc != 0) {
      printf("    %-44s not read: %s\n", files[f].name, err);
      continue;
    }
    tried++;
    printf("    %-44s nc %4d", files[f].name, p.ncon);
    size_t n = 3 * (size_t)(p.ncon > 0 ? p.ncon : 1);
    double *sol = cd_malloc(PS_N * n * sizeof(double)), *work = cd_malloc(4 * n * sizeof(double));
    if (!sol || !work) {
      CHECK(0);
      cd_free(sol);
      cd_free(work);
      cd_contactProblemFree(&p);
      break;
    }
    int conv[PS_N];
    memset(sol, 0, PS_N * n * sizeof(double));
    double r0 = p.ncon > 0 ? cd_coneResidualOf(&p, sol, work, NULL) : 0.0; /* of lambda = 0 */
    for (int s = 0; s < PS_N; s++) {
      memset(p.lambda, 0, 3 * (size_t)p.ncon * sizeof(double));
      cdCcpParams par = {0, 0, 0, 0.0, 0.0, 1, 1}; /* the production defaults (apgd as the backend runs it) */
      cdSolveStats st;
      clock_t t0 = clock();
      int r = s == PS_PRIMAL ? cd_ccpPrimalSolve(&p, &par, NULL, &st)
              : s == PS_IPM  ? cd_ccpIpmSolve(&p, &par, &cc, &st)
              : s == PS_APGD ? cd_ccpApgdSolve(&p, &par, NULL, &st)
                             : cd_ccpPgsSolve(&p, &par, &st);
      secs[s] += (double)(clock() - t0) / CLOCKS_PER_SEC;
      memcpy(&sol[s * n], p.lambda, 3 * (size_t)p.ncon * sizeof(double));
      conv[s] = r == CD_OK && st.converged && st.residual <= tol[s];
      passed[s] += conv[s];
      if (s <= PS_IPM)
        CHECK_MSG(conv[s], "%s: %s residual %.3g after %d iterations (target %.0e)", files[f].name, names[s],
                  st.residual, st.iterations, tol[s]);
      else
        CHECK_MSG(conv[s] || (r == CD_OK && st.iterations == maxit[s] && st.residual < r0),
                  "%s: %s stopped at residual %.3g after %d of %d iterations (start %.3g)", files[f].name, names[s],
                  st.residual, st.iterations, maxit[s], r0);
      itsum[s] += st.iterations;
      if (st.iterations > maxIt[s]) maxIt[s] = st.iterations;
      polished += s == PS_IPM && st.fallbacks;
      printf("  %s %s%5d %.1e", names[s], conv[s] ? "ok" : "NO", st.iterations, st.residual);
    }
    printf("\n");
    for (int s = 1; s < PS_N && p.ncon > 0; s++) {
      if (!conv[s] || !conv[PS_PRIMAL]) continue;
      double ex = agreementExcess(&p, &sol[s * n], &sol[PS_PRIMAL * n], work);
      worstAgree = fmax(worstAgree, ex);
      CHECK_MSG(ex <= 0.0, "%s: %s and primal differ beyond the residuals' bound (excess %.3g)", files[f].name,
                names[s], ex);
    }
    cd_free(sol);
    cd_free(work);
    cd_contactProblemFree(&p);
  }
  cholmod_finish(&cc);
  CHECK_MSG(tried >= 65, "only %d peer problems could be read", tried);
  for (int s = 0; s < PS_N; s++)
    printf("    %s: %d of %d peer problems to %.0e (%ld iterations in all, at most %d, %.2f s)\n", names[s], passed[s],
           tried, tol[s], itsum[s], maxIt[s], secs[s]);
  printf("    ipm: the Gauss-Seidel polish was needed on %d of %d; every converged answer within (R3) of primal's\n"
         "    (largest left side minus bound: %.2g)\n",
         polished, tried, worstAgree);
}
