/* lcp_bgs.c: block Gauss-Seidel for the Anitescu-Hart contact LCP.
 *
 * Problem: 0 <= z perp A z + b >= 0 with z = (lambda_N, alpha, beta) and A, b as in lcp.h
 * (seed 000; Anitescu & Hart, IJNME 2004): per contact i the unknowns are the normal
 * impulse lambda_n (N s), the m friction-direction impulses alpha_k (N s) and the
 * friction-bound multiplier beta (m/s, the sliding speed).
 *
 * Algorithm: sweep the contacts in order. For contact i, fix the other contacts' z_j; its
 * (m + 2) variables then solve the small LCP
 *     0 <= z_i  perp  A_ii z_i + q_i >= 0,    q_i = b_i + sum_{j != i} A_ij z_j,
 *     A_ii = [[G_nn, G_nt D, 0], [D^T G_tn, D^T G_tt D, e], [mu, -e^T, 0]],
 * which is solved exactly by Lemke's method (lcp_lemke.c; the block matrix is
 * copositive-plus for a positive semidefinite G_ii, Anitescu & Potra 1997). An exact block
 * solve is needed: the beta row and column of A_ii have a zero diagonal, so a projected
 * Gauss-Seidel step on single variables is undefined there. The coupling stays implicit:
 * since E and M_mu are block diagonal, A_ij z_j (j != i) only involves G_ij and
 * lambda_j = (lambda_n, D alpha)_j, so
 *     q_i = [c_n; D^T c_T; 0],   c = g_i + sum_{j != i} G_ij lambda_j,
 * one block row of G: a sweep costs O(nnz(G) + ncon (m + 2)^2 pivots) = O(contacts).
 * Stopping rule: ||min(z, A z + b)||_inf <= tolerance (cd_lcpResidual, blockwise) after a
 * sweep, or the sweep limit; the iterate of smallest residual is returned (the method is
 * not monotone for the non-symmetric A).
 * References: NUMERICS.md (block Gauss-Seidel for the Anitescu-Hart LCP); Cottle, Pang &
 * Stone, The Linear Complementarity Problem, ch. 5 (splitting methods).
 */
#include "lcp_bgs.h"

#include <math.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "lcp.h"
#include "lcp_lemke.h"

int cd_bgsSolve(const cdContactProblem *p, int m, const double *D, double *z, const cdBgsOptions *opt,
                cdBgsStats *stats) {
  cdBgsStats st = {0, 0.0, 1, 0};
  int nc = p->ncon, k = m + 2, n = cd_lcpSize(nc, m);
  double tol = opt && opt->tolerance > 0 ? opt->tolerance : 1e-8;
  int maxs = opt && opt->max_sweeps > 0 ? opt->max_sweeps : 1000;
  if (nc <= 0) {
    if (stats) *stats = st;
    return CD_OK;
  }
  size_t kk = (size_t)k * (size_t)k;
  double *Ab = cd_malloc((size_t)nc * kk * sizeof *Ab);   /* (ncon x k x k) diagonal blocks */
  double *lam = cd_malloc(3 * (size_t)nc * sizeof *lam); /* (ncon x 3) current lambda */
  double *work = cd_malloc(6 * (size_t)nc * sizeof *work);
  double *best = cd_malloc((size_t)n * sizeof *best);
  double *qz = cd_malloc(2 * (size_t)k * sizeof *qz);    /* block q and z */
  void *lw = cd_malloc(cd_lemkeWorkSize(k));
  if (!Ab || !lam || !work || !best || !qz || !lw) {
    cd_free(Ab), cd_free(lam), cd_free(work), cd_free(best), cd_free(qz), cd_free(lw);
    return CD_ERR_NOMEM;
  }
  double *q = qz, *zb = qz + k;

  /* the diagonal blocks A_ii, column-major k x k */
  for (int i = 0; i < nc; i++) {
    double *B = &Ab[(size_t)i * kk];
    memset(B, 0, kk * sizeof *B);
    cd_lcpCouplingBlock(&p->G.val[9 * (size_t)p->G.diag[i]], m, D, B, k);
    for (int l = 0; l < m; l++) {
      B[(1 + l) + (size_t)(m + 1) * k] = 1.0;  /* E */
      B[(m + 1) + (size_t)(1 + l) * k] = -1.0; /* -E^T */
    }
    B[m + 1] = p->mu[i]; /* M_mu: row m + 1, column 0 */
  }

  cd_lcpLambdaFromZ(nc, m, D, z, lam);
  double res = cd_lcpResidual(p, m, D, z, work);
  memcpy(best, z, (size_t)n * sizeof *best);
  double bestres = res;
  cdLemkeOptions lo = {.work = lw};
  const cdBlockMatrix *G = &p->G;
  while (!(bestres <= tol) && st.sweeps < maxs) {
    for (int ii = 0; ii < nc; ii++) {
      /* odd sweeps run backwards (symmetric Gauss-Seidel): information then travels both
       * ways along a chain of contacts such as a stack within one pair of sweeps */
      int i = st.sweeps % 2 ? nc - 1 - ii : ii;
      /* c = g_i + sum_{j != i} G_ij lambda_j */
      double c0 = p->g[3 * i], c1 = p->g[3 * i + 1], c2 = p->g[3 * i + 2];
      for (int t = G->rowptr[i]; t < G->rowptr[i + 1]; t++) {
        int j = G->col[t];
        if (j == i) continue;
        const double *Bt = &G->val[9 * (size_t)t], *lj = &lam[3 * j];
        c0 += Bt[0] * lj[0] + Bt[1] * lj[1] + Bt[2] * lj[2];
        c1 += Bt[3] * lj[0] + Bt[4] * lj[1] + Bt[5] * lj[2];
        c2 += Bt[6] * lj[0] + Bt[7] * lj[1] + Bt[8] * lj[2];
      }
      q[0] = c0;
      for (int l = 0; l < m; l++) q[1 + l] = D[2 * l] * c1 + D[2 * l + 1] * c2;
      q[m + 1] = 0.0;
      int s = cd_lemkeSolve(k, &Ab[(size_t)i * kk], q, zb, &lo, NULL);
      if (s != CD_LEMKE_SOLVED && s != CD_LEMKE_INACCURATE) {
        st.block_failures++;
        continue;
      }
      /* write the block back and refresh lambda_i */
      z[i] = zb[0];
      double t1 = 0.0, t2 = 0.0;
      for (int l = 0; l < m; l++) {
        z[nc + m * i + l] = zb[1 + l];
        t1 += D[2 * l] * zb[1 + l];
        t2 += D[2 * l + 1] * zb[1 + l];
      }
      z[nc + nc * m + i] = zb[m + 1];
      lam[3 * i] = zb[0];
      lam[3 * i + 1] = t1;
      lam[3 * i + 2] = t2;
    }
    st.sweeps++;
    res = cd_lcpResidual(p, m, D, z, work);
    if (res < bestres) {
      bestres = res;
      memcpy(best, z, (size_t)n * sizeof *best);
    }
    if (!isfinite(res)) break;
  }
  memcpy(z, best, (size_t)n * sizeof *z);
  st.residual = bestres;
  st.converged = bestres <= tol;
  cd_free(Ab), cd_free(lam), cd_free(work), cd_free(best), cd_free(qz), cd_free(lw);
  if (stats) *stats = st;
  return CD_OK;
}
