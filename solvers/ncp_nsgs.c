/* ncp_nsgs.c: the exact Coulomb problem by nonsmooth Gauss-Seidel over contacts (NSGS).
 *
 * Problem (ncp.h): find lambda (3 ncon, N s) with, per contact i,
 *     K ∋ lambda_i ⟂ ĉ_i ∈ K*,   ĉ_i = c̄_i + (mu_i ||c̄_T,i||, 0, 0),   c̄ = G lambda + g.
 *
 * Algorithm (Jean & Moreau's NSGS, as Siconos's fc3d_nsgs): sweep the contacts in order; for
 * contact i hold the others fixed, so lambda_i solves the one-contact problem with W = G_ii
 * and b = c̄_i - G_ii lambda_i, solved exactly (ncp_local.c: take-off, stick or the slide
 * root, the one nearest the current lambda_i). c̄ is kept current incrementally: a change d of
 * lambda_i adds the block column G_{:,i} d, walked through a transpose index so that a
 * nonsymmetric G (peer problems are only nearly symmetric) is exact too; a sweep costs
 * O(nnz G) plus one local solve a contact. One iteration is one sweep. The residual (ncp.h) is
 * evaluated after every sweep from the incremental c̄, and from a fresh c̄ = G lambda + g every
 * 64 sweeps, whenever it meets the tolerance, and at the end (those products are counted in
 * stats->products), so round-off in the running c̄ never decides convergence. The best iterate
 * by residual is returned.
 *
 * Guarantees: none for convergence. Gauss-Seidel on a monotone problem (the CCP, mu = 0)
 * decreases a convex energy; the De Saxcé term makes the problem non-monotone and no merit
 * function is known to decrease, so a sweep can cycle. In practice (Acary, Brémond & Huber
 * 2018; RESEARCH §3.2) it is among the most robust solvers of the FCLIB collection, and it
 * converges linearly, slowly on stiff stacks. Non-convergence: converged = 0, best iterate.
 */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "ncp.h"

int cd_ncpNsgsSolve(cdContactProblem *p, const cdNcpParams *par, cdSolveStats *stats) {
  const cdBlockMatrix *G = &p->G;
  int nc = p->ncon, n = 3 * nc;
  double tol = par && par->tolerance > 0 ? par->tolerance : CD_NCP_TOL;
  int maxit = par && par->max_iterations > 0 ? par->max_iterations : CD_NCP_NSGS_MAXIT;
  memset(stats, 0, sizeof *stats);
  if (nc == 0) {
    stats->converged = 1;
    return CD_OK;
  }
  double *u = cd_malloc((size_t)2 * n * sizeof(double)), *best = u ? u + n : NULL;
  cdBlockColumns cols; /* the u_j a change of lambda_i moves */
  if (!u || cd_blockColumnsMake(G, &cols)) {
    cd_free(u);
    return CD_ERR_NOMEM;
  }

  for (int i = 0; i < nc; i++) cd_coneProject(p->mu[i], &p->lambda[3 * i], &p->lambda[3 * i]);
  double rbest = cd_ncpResidualOf(p, p->lambda, u, NULL);
  int products = 1;
  memcpy(best, p->lambda, (size_t)n * sizeof *best);
  int it = 0, stall = par ? par->stall : 0;
  double rmark = rbest; /* the best residual at the start of the stall window */
  while (rbest > tol && it < maxit) {
    it++;
    for (int i = 0; i < nc; i++) {
      const double *A = &G->val[9 * (size_t)G->diag[i]];
      double *li = &p->lambda[3 * i], *ui = &u[3 * i], x[3] = {li[0], li[1], li[2]}, b[3], d[3];
      for (int r = 0; r < 3; r++) b[r] = ui[r] - (A[3 * r] * li[0] + A[3 * r + 1] * li[1] + A[3 * r + 2] * li[2]);
      cd_ncpLocalSolve(A, b, p->mu[i], x);
      d[0] = x[0] - li[0];
      d[1] = x[1] - li[1];
      d[2] = x[2] - li[2];
      if (d[0] == 0.0 && d[1] == 0.0 && d[2] == 0.0) continue;
      cd_blockColumnAdd(G, &cols, i, d, u);
      li[0] = x[0];
      li[1] = x[1];
      li[2] = x[2];
    }
    double r = cd_ncpResidual(p, p->lambda, u, NULL);
    if (r <= tol || it == maxit || it % 64 == 0) {
      r = cd_ncpResidualOf(p, p->lambda, u, NULL);
      products++;
    }
    if (r < rbest) {
      rbest = r;
      memcpy(best, p->lambda, (size_t)n * sizeof *best);
    }
    if (!isfinite(r)) break;
    if (stall > 0 && it % stall == 0) {
      if (rbest > 0.5 * rmark) break;
      rmark = rbest;
    }
  }
  memcpy(p->lambda, best, (size_t)n * sizeof *best);
  /* the reported residual is exact, not the incrementally kept one */
  rbest = cd_ncpResidualOf(p, p->lambda, u, NULL);
  products++;
  stats->iterations = it;
  stats->products = products;
  stats->residual = rbest;
  stats->converged = rbest <= tol;
  cd_free(u);
  cd_blockColumnsFree(&cols);
  return isfinite(rbest) ? CD_OK : CD_ERR_NUMERIC;
}
