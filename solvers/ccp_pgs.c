/* ccp_pgs.c: the CCP by projected block Gauss-Seidel over contacts.
 *
 * Problem (seed 001): find lambda (3 ncon, N s) with
 *     K ∋ lambda ⟂ c̄ = G lambda + g ∈ K*,
 * the KKT conditions of min 1/2 lambda^T G lambda + g^T lambda over lambda ∈ K = Π K_mu_i.
 *
 * Algorithm: sweep the contacts in order; for contact i hold the others fixed, so lambda_i
 * solves the local cone problem
 *     min 1/2 x^T G_ii x + b_i^T x,  x ∈ K_mu_i,   b_i = (G lambda + g)_i - G_ii lambda_i,
 * solved by projected gradient steps x <- Proj_K(x - omega_i (G_ii x + b_i)) with
 * omega_i = 1 / lambda_max(G_ii) (the step that makes each local step a descent step), repeated
 * until it stops moving (at most PGS_INNER times; each costs a 3x3 product). The first local
 * step is exactly the classic update lambda_i <- Proj_K(lambda_i - omega_i (G lambda + g)_i);
 * the repeats make the block solve (nearly) exact, which is what makes the sweep a block
 * Gauss-Seidel step with the monotone decrease of f. c̄ = G lambda + g is kept current
 * incrementally: a change d of lambda_i adds the block column G_{:,i} d, so a sweep costs
 * O(nnz G). The column is walked through a transpose index, so a nonsymmetric G (peer
 * problems are only nearly symmetric) is handled exactly too. c̄ is recomputed from scratch
 * before the final residual so incremental round-off never decides convergence.
 * References: Jean & Moreau's NSGS; Tasora & Anitescu's projected SOR for the CCP (2011).
 * iterations = sweeps (each O(nnz G)); products = the full G products of the exact residuals.
 */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "ccp.h"
#include "cone.h"

#define PGS_INNER 50

/* largest eigenvalue of the symmetric part of a 3x3 block (closed form, trigonometric) */
static double symMaxEig(const double *B) {
  double a = B[0], d = B[4], f = B[8];
  double b = 0.5 * (B[1] + B[3]), c = 0.5 * (B[2] + B[6]), e = 0.5 * (B[5] + B[7]);
  double q = (a + d + f) / 3.0;
  double p1 = b * b + c * c + e * e;
  double p2 = (a - q) * (a - q) + (d - q) * (d - q) + (f - q) * (f - q) + 2.0 * p1;
  if (p2 <= 1e-300) return q;
  double pp = sqrt(p2 / 6.0);
  double A = (a - q) / pp, D = (d - q) / pp, F = (f - q) / pp, Bb = b / pp, C = c / pp, E = e / pp;
  double det = A * (D * F - E * E) - Bb * (Bb * F - E * C) + C * (Bb * E - D * C);
  double r = fmax(-1.0, fmin(1.0, det / 2.0));
  return q + 2.0 * pp * cos(acos(r) / 3.0);
}

int cd_ccpPgsSolve(cdContactProblem *p, const cdCcpParams *par, cdSolveStats *stats) {
  const cdBlockMatrix *G = &p->G;
  int nc = p->ncon, n = 3 * nc;
  double tol = par && par->tolerance > 0 ? par->tolerance : CD_CCP_ITER_TOL;
  int maxit = par && par->max_iterations > 0 ? par->max_iterations : CD_CCP_ITER_MAXIT;
  memset(stats, 0, sizeof *stats);
  if (nc == 0) {
    stats->converged = 1;
    return CD_OK;
  }
  if (cd_contactProblemDelassus(p)) return CD_ERR_NOMEM;
  double *u = cd_malloc((size_t)(2 * n + nc) * sizeof(double));
  double *best = u ? u + n : NULL, *omega = u ? u + 2 * n : NULL;
  cdBlockColumns cols; /* the u_j a change of lambda_i touches */
  if (!u || cd_blockColumnsMake(G, &cols)) {
    cd_free(u);
    return CD_ERR_NOMEM;
  }
  for (int i = 0; i < nc; i++) {
    double lmax = symMaxEig(&G->val[9 * (size_t)G->diag[i]]);
    omega[i] = lmax > 0.0 && isfinite(lmax) ? 1.0 / lmax : 0.0;
  }

  for (int i = 0; i < nc; i++) cd_coneProject(p->mu[i], &p->lambda[3 * i], &p->lambda[3 * i]);
  double rbest = cd_coneResidualOf(p, p->lambda, u, NULL);
  memcpy(best, p->lambda, (size_t)n * sizeof *best);
  int it = 0;
  while (rbest > tol && it < maxit) {
    it++;
    for (int i = 0; i < nc; i++) {
      const double *A = &G->val[9 * (size_t)G->diag[i]];
      double *li = &p->lambda[3 * i], *ui = &u[3 * i], x[3] = {li[0], li[1], li[2]}, d[3];
      if (omega[i] == 0.0) {
        /* G_ii = 0: lambda_i does not move c̄_i; the local minimum is 0 when b_i ∈ K* and
         * unbounded otherwise, so 0 is the only bounded choice */
        x[0] = x[1] = x[2] = 0.0;
      } else {
        for (int t = 0; t < PGS_INNER; t++) {
          /* local c̄_i at x: u_i + G_ii (x - lambda_i) */
          double dx[3] = {x[0] - li[0], x[1] - li[1], x[2] - li[2]}, a[3], xn[3];
          for (int r = 0; r < 3; r++)
            a[r] = x[r] - omega[i] * (ui[r] + A[3 * r] * dx[0] + A[3 * r + 1] * dx[1] + A[3 * r + 2] * dx[2]);
          cd_coneProject(p->mu[i], a, xn);
          double ch = fabs(xn[0] - x[0]) + fabs(xn[1] - x[1]) + fabs(xn[2] - x[2]);
          double sz = fabs(xn[0]) + fabs(xn[1]) + fabs(xn[2]);
          x[0] = xn[0];
          x[1] = xn[1];
          x[2] = xn[2];
          if (ch <= 1e-10 * sz || ch == 0.0) break;
        }
      }
      d[0] = x[0] - li[0];
      d[1] = x[1] - li[1];
      d[2] = x[2] - li[2];
      if (d[0] == 0.0 && d[1] == 0.0 && d[2] == 0.0) continue;
      cd_blockColumnAdd(G, &cols, i, d, u);
      li[0] = x[0];
      li[1] = x[1];
      li[2] = x[2];
    }
    double r = cd_coneResidual(p, p->lambda, u, NULL);
    if (r <= tol || it == maxit || it % 64 == 0) {
      r = cd_coneResidualOf(p, p->lambda, u, NULL);
      stats->products++;
    }
    if (r < rbest) {
      rbest = r;
      memcpy(best, p->lambda, (size_t)n * sizeof *best);
    }
    if (!isfinite(r)) break;
  }
  memcpy(p->lambda, best, (size_t)n * sizeof *best);
  /* the reported residual is exact, not the incrementally kept one */
  rbest = cd_coneResidualOf(p, p->lambda, u, NULL);
  stats->products += 2; /* the first residual and this one */
  stats->iterations = it;
  stats->residual = rbest;
  stats->converged = rbest <= tol;
  cd_free(u);
  cd_blockColumnsFree(&cols);
  return isfinite(rbest) ? CD_OK : CD_ERR_NUMERIC;
}
