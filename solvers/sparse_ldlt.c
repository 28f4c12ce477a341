/* sparse_ldlt.c: the numeric LDL' of a symmetric positive definite K = P^T L D L^T P and its
 * solves, for the active-set method's K when every active contact sticks (lcp_newton.c).
 *
 * With L unit lower triangular and D diagonal, row k of L and D(k) come from the rows before
 * it (the up-looking, row by row factorization): the sparse triangular solve
 *
 *     L(0:k, 0:k) y = K(0:k, k),   then   L(k, i) = y(i) / D(i),   D(k) = K(k, k) - sum_i L(k, i) y(i)
 *
 * over the columns i that row k's pattern reaches (column i of L taken as it is met: w less
 * L(:, i) y(i) on its rows below i);
 * and A x = b is L y = P b, then L^T (P x) = D^-1 y. The operations are those of CHOLMOD's
 * simplicial factorization (cholmod_rowfac) and solve (cholmod_solve2's ldl_lsolve and
 * ldl_dltsolve), each entry's in the same order, so that the factors and solves are CHOLMOD's
 * bit for bit; what differs is that nothing is searched or copied: the analysis (the
 * caller's, at the contacts' level) hands over L's layout, the order in which each row meets
 * the columns of L, and where each entry of P K P^T's upper triangle sits in the caller's K.
 * A contact's three unknowns are a dense block of K: their columns of L are taken together
 * where they chain (ldltBlock3, the solves' runs of two and three columns). */
#include "sparse_ldlt.h"

#include <string.h>

#include "alloc.h"

typedef double cdPair __attribute__((vector_size(2 * sizeof(double)))); /* two rows a trip */

void cd_sparseLdltFree(cdSparseLdlt *f) {
  cd_free(f->Lp), cd_free(f->Li), cd_free(f->Lnz), cd_free(f->Lx), cd_free(f->Ap), cd_free(f->Ai), cd_free(f->kfrom);
  cd_free(f->no), cd_free(f->nr), cd_free(f->sp), cd_free(f->st), cd_free(f->W);
  memset(f, 0, sizeof *f);
}

/* one column i of L in row k of the LDL' (cholmod_rowfac's step): W's rows below i less
 * L(:, i) y, y = W[i]; L(k, i) = y / D(i) appended to the column, *dk less L(k, i) y. A column's
 * rows below the diagonal in one run (dense blocks: most columns) are taken two lanes a time,
 * the same operations (S3 20's first step: that loop 365k instructions -> 243k) */
static inline void ldltColumn(double *W, const int *Lp, int *Li, int *Lnz, double *Lx, int i, int k, double *dk) {
  double y = W[i];
  W[i] = 0.0;
  int p = Lp[i], pend = p + Lnz[i];
  double di = Lx[p];
  if (pend - p > 2 && Li[pend - 1] - Li[p + 1] == pend - p - 2) {
    double *wr = &W[Li[p + 1]];
    const double *lx = &Lx[p + 1];
    int len = pend - p - 1, m = 0;
    cdPair y2 = {y, y};
    for (; m + 1 < len; m += 2) {
      cdPair wv, lv;
      memcpy(&wv, &wr[m], sizeof wv), memcpy(&lv, &lx[m], sizeof lv);
      wv -= lv * y2;
      memcpy(&wr[m], &wv, sizeof wv);
    }
    if (m < len) wr[m] -= lx[m] * y;
  } else {
    for (p++; p < pend; p++) W[Li[p]] -= Lx[p] * y;
  }
  double l = y / di;
  *dk -= l * y;
  Li[pend] = k, Lx[pend] = l, Lnz[i]++;
}

/* ldltColumn for the three columns c, c + 1, c + 2 of a contact's dense block at once: each
 * column's rows in the block first (the next column's y needs them), then the rows below the
 * block, which the three columns share, each row less the three columns' terms in their order
 * (the same operations on each entry of W, one pass over the rows instead of three) */
static inline void ldltBlock3(double *W, const int *Lp, int *Li, int *Lnz, double *Lx, int c, int k, double *dk) {
  int p0 = Lp[c], p1 = Lp[c + 1], p2 = Lp[c + 2], nb = Lnz[c + 2] - 1; /* (rows below the block) */
  double y0 = W[c];
  W[c] = 0.0;
  W[c + 1] -= Lx[p0 + 1] * y0;
  W[c + 2] -= Lx[p0 + 2] * y0;
  double l0 = y0 / Lx[p0];
  *dk -= l0 * y0;
  double y1 = W[c + 1];
  W[c + 1] = 0.0;
  W[c + 2] -= Lx[p1 + 1] * y1;
  double l1 = y1 / Lx[p1];
  *dk -= l1 * y1;
  double y2 = W[c + 2];
  W[c + 2] = 0.0;
  double l2 = y2 / Lx[p2];
  *dk -= l2 * y2;
  const double *x0 = &Lx[p0 + 3], *x1 = &Lx[p1 + 2], *x2 = &Lx[p2 + 1];
  const int *ri = &Li[p2 + 1];
  int m = 0;
  if (nb > 1 && ri[nb - 1] - ri[0] == nb - 1) {
    double *wr = &W[ri[0]];
    cdPair v0 = {y0, y0}, v1 = {y1, y1}, v2 = {y2, y2};
    for (; m + 1 < nb; m += 2) {
      cdPair wv, a0, a1, a2;
      memcpy(&wv, &wr[m], sizeof wv), memcpy(&a0, &x0[m], sizeof a0), memcpy(&a1, &x1[m], sizeof a1),
          memcpy(&a2, &x2[m], sizeof a2);
      wv = wv - a0 * v0 - a1 * v1 - a2 * v2;
      memcpy(&wr[m], &wv, sizeof wv);
    }
  }
  for (; m < nb; m++) W[ri[m]] = W[ri[m]] - x0[m] * y0 - x1[m] * y1 - x2[m] * y2;
  Li[p0 + 3 + nb] = k, Lx[p0 + 3 + nb] = l0, Lnz[c]++;
  Li[p1 + 2 + nb] = k, Lx[p1 + 2 + nb] = l1, Lnz[c + 1]++;
  Li[p2 + 1 + nb] = k, Lx[p2 + 1 + nb] = l2, Lnz[c + 2]++;
}

/* cholmod_factorize of P K P^T into f's L (analysed by the caller: lcp_newton.c's cholAnalyse): its simplicial
 * LDL' (cholmod_rowfac, row by row) with the same operations on each entry in the same order,
 * each row's columns of L taken in the order the analysis found (st) instead of CHOLMOD's
 * walk up the tree with its flags, K's values read through kfrom (no copy of them in the
 * permuted order). The same L bit for bit (every column's rows and values compared with
 * cholmod_factorize's in the 179 factorizations of make test, many with fill, and all of S3 20,
 * the ten piles and a lattice of spheres, with fill). S3 20's first step: the factorization
 * 824k instructions -> 535k (ldltColumn alone), -> 341k (ldltBlock3), -> 315k (kfrom); the
 * step's wall time 0.45 -> 0.35 ms (medians of 15 runs alternating, shared machine; ldltBlock3
 * and kfrom no change there). 0 ok, 1 a zero pivot (not positive definite: rowfac's test) */
int cd_sparseLdltFactor(cdSparseLdlt *f, const double *Kx) {
  int n = f->n, *Lnz = f->Lnz;
  for (int k = 0; k < n; k++) Lnz[k] = 1;
  const int *Ap = f->Ap, *Ai = f->Ai, *Lp = f->Lp, *no = f->no, *nr = f->nr, *sp = f->sp, *st = f->st;
  const int *kfrom = f->kfrom;
  int *Li = f->Li;
  double *Lx = f->Lx, *W = f->W;
  for (int a = 0; a < f->na; a++) {
    for (int k = no[a], ke = k + nr[a]; k < ke; k++) {
      for (int p = Ap[k]; p < Ap[k + 1]; p++) W[Ai[p]] = Kx[kfrom[p]];
      double dk = W[k] + 0.0; /* (rowfac's beta, 0) */
      W[k] = 0.0;
      /* the contacts of row a's paths, then a's own unknowns before k */
      for (int q = sp[a]; q < sp[a + 1]; q++) {
        int c = no[st[q]], r = nr[st[q]];
        if (r == 3) {
          ldltBlock3(W, Lp, Li, Lnz, Lx, c, k, &dk);
        } else {
          for (int i = c; i < c + r; i++) ldltColumn(W, Lp, Li, Lnz, Lx, i, k, &dk);
        }
      }
      for (int i = no[a]; i < k; i++) ldltColumn(W, Lp, Li, Lnz, Lx, i, k, &dk);
      Li[Lp[k]] = k;
      if (dk == 0.0) { /* (not positive definite: rowfac's test for LDL') */
        memset(W, 0, (size_t)n * sizeof *W);
        return 1;
      }
      Lx[Lp[k]] = dk;
    }
  }
  return 0;
}

/* X = (L D L^T)^-1 X in place, as cholmod_solve2 solves it
 * (its ldl_lsolve, then ldl_dltsolve): the same operations in the same order, a column of L
 * at a time or two or three together where their patterns chain as its solves take them
 * (the same answers bit for bit, compared with cholmod_solve2's in every solve of make test,
 * S3 20, the ten piles and a lattice of spheres). Without cholmod_solve2's workspace and
 * copies: S3 20, a solve 55.4k instructions -> 47.5k (its loops are the same), the first
 * step 1.62M -> 1.60M, its 200 steps 95.4M -> 94.0M */
void cd_sparseLdltSolve(const cdSparseLdlt *f, double *X) {
  const double *Lx = f->Lx;
  const int *Li = f->Li, *Lp = f->Lp, *Lnz = f->Lnz;
  int n = f->n;
  for (int j = 0; j < n;) {
    int p = Lp[j], lnz = Lnz[j], pend = p + lnz;
    if (lnz < 4 || lnz != Lnz[j + 1] + 1 || Li[p + 1] != j + 1) {
      double y = X[j];
      for (p++; p < pend; p++) X[Li[p]] -= Lx[p] * y;
      j++;
    } else if (lnz != Lnz[j + 2] + 2 || Li[p + 2] != j + 2) {
      int q = Lp[j + 1];
      double y0 = X[j], y1 = X[j + 1] - Lx[p + 1] * y0;
      X[j + 1] = y1;
      for (p += 2, q++; p < pend; p++, q++) X[Li[p]] -= Lx[p] * y0 + Lx[q] * y1;
      j += 2;
    } else {
      int q = Lp[j + 1], r = Lp[j + 2];
      double y0 = X[j], y1 = X[j + 1] - Lx[p + 1] * y0, y2 = X[j + 2] - Lx[p + 2] * y0 - Lx[q + 1] * y1;
      X[j + 1] = y1, X[j + 2] = y2;
      for (p += 3, q += 2, r++; p < pend; p++, q++, r++) X[Li[p]] -= Lx[p] * y0 + Lx[q] * y1 + Lx[r] * y2;
      j += 3;
    }
  }
  for (int j = n - 1; j >= 0;) {
    int p = Lp[j], lnz = Lnz[j], pend = p + lnz;
    if (j < 4 || lnz != Lnz[j - 1] - 1 || Li[Lp[j - 1] + 1] != j) {
      double y = X[j] / Lx[p];
      for (p++; p < pend; p++) y -= Lx[p] * X[Li[p]];
      X[j] = y;
      j--;
    } else if (lnz != Lnz[j - 2] - 2 || Li[Lp[j - 2] + 2] != j) {
      int q = Lp[j - 1];
      double t = Lx[q + 1], y0 = X[j] / Lx[p], y1 = X[j - 1] / Lx[q];
      for (p++, q += 2; p < pend; p++, q++) {
        double xi = X[Li[p]];
        y0 -= Lx[p] * xi, y1 -= Lx[q] * xi;
      }
      y1 -= t * y0;
      X[j] = y0, X[j - 1] = y1;
      j -= 2;
    } else {
      int q = Lp[j - 1], r = Lp[j - 2];
      double t0 = Lx[q + 1], t1 = Lx[r + 1], t2 = Lx[r + 2];
      double y0 = X[j] / Lx[p], y1 = X[j - 1] / Lx[q], y2 = X[j - 2] / Lx[r];
      for (p++, q += 2, r += 3; p < pend; p++, q++, r++) {
        double xi = X[Li[p]];
        y0 -= Lx[p] * xi, y1 -= Lx[q] * xi, y2 -= Lx[r] * xi;
      }
      y1 -= t0 * y0;
      y2 -= t2 * y0 + t1 * y1;
      X[j - 2] = y2, X[j - 1] = y1, X[j] = y0;
      j -= 3;
    }
  }
}
