/* lcp_lemke.c: Lemke's complementary pivoting method for a dense LCP.
 *
 * Problem. Given A (n x n, column-major) and b (n), find z (n) with
 *     z >= 0,   w = A z + b >= 0,   z^T w = 0.
 * Units are the caller's: in the contact LCP (lcp.c) z holds impulses (N s) and the
 * friction-bound multipliers beta (m/s), w velocities (m/s) and impulses (N s).
 *
 * Algorithm (Cottle, Pang & Stone, "The Linear Complementarity Problem", SIAM 2009,
 * sections 4.4 and 4.9). Add an artificial variable z0 >= 0 with the covering vector e = 1:
 *     w - A z - e z0 = b,
 * a linear system in the 2n + 1 variables (w, z, z0) with column matrix C = [I, -A, -e].
 * Start from the basis {w} (x_B = b); if b >= 0, z = 0 solves. Otherwise z0 enters and
 * w_r leaves for r = argmin b_i, which makes x_B >= 0. From then on the entering variable
 * is always the complement of the one that just left (w_j <-> z_j), and the minimum ratio
 * test picks the leaving one, so the basis stays almost complementary. The run ends when
 * z0 leaves (the basis is complementary: a solution), when the entering column has no
 * positive entry (ray termination: no solution found), or at the pivot limit.
 *
 * Degeneracy: ties in the ratio test are broken lexicographically on the rows of
 * [x_B, B^-1] divided by the pivot column, i.e. Lemke's method on b perturbed by
 * (eps, eps^2, ..., eps^n). Those rows are lexicographically positive after the first
 * pivot (that pivot takes the largest index among the minimal b_i to make this so), the
 * rule never ties, and the method cannot cycle: it ends after finitely many pivots.
 * Termination: for a copositive-plus A (symmetric PSD matrices, P-matrices via the
 * strictly copositive case, and the Anitescu-Hart contact matrix, Anitescu & Potra,
 * Nonlinear Dynamics 14, 1997) ray termination proves the LCP infeasible
 * (CPS Theorem 4.4.13), so a reported ray is never a missed solution there.
 *
 * Implementation: revised form with an explicit basis inverse B^-1 (row-major), updated by
 * one Gauss-Jordan step per pivot: O(n^2) a pivot, n^2 + O(n) doubles of workspace.
 * Scaling: with positive diagonal R, S (powers of two, so exact), the LCP (R A S, R b) in
 * z' = S^-1 z has the same solutions and w' = R w; rows and columns are equilibrated that
 * way (Ruiz iteration) when their magnitudes spread over orders of magnitude, as they do
 * when masses do. Check and refinement: the returned z is checked on the original problem;
 * if the residual misses the tolerance, the final active set S = {j : z_j basic} is solved
 * again, A_SS z_S = -b_S, by an LU factorization with one step of iterative refinement,
 * and the result is kept when its residual is smaller.
 */
#include "lcp_lemke.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "alloc.h"

/* a pivot entry d_i must exceed this fraction of the column's largest entry, and
 * LEMKE_PIVOT_NOISE eps sum_k |B^-1_ik col_k| (the rounding error of the product itself):
 * smaller entries are roundoff of an exact zero, and pivoting on one blows B^-1 up. This
 * matters on degenerate rows (x_B = 0 up to roundoff, ratio 0), where the lexicographic
 * rule would otherwise happily take such an entry: a stack of cubes at rest does that. */
#define LEMKE_PIVOT_REL 1e-9
#define LEMKE_PIVOT_NOISE 64.0
/* two ratios closer than this (relative) are a tie, resolved lexicographically */
#define LEMKE_TIE_REL 1e-11

typedef struct {
  int n;
  const double *A, *r, *c; /* original A (column-major) and the row / column scales */
  double *Binv;            /* (n x n) row-major basis inverse */
  double *xB;              /* (n) values of the basic variables */
  double *d;               /* (n) B^-1 times the entering column */
  double *dnoise;          /* (n) rounding error bound of each d_i */
  double *col;             /* (n) the entering column's non-zeros (rows in cand) */
  int *basis;              /* (n) variable of each row: w_i = i, z_j = n + j, z0 = 2n */
  int *cand;               /* (n) candidate rows of the ratio test */
  int *nzrow;              /* (n) non-zero columns of the pivot row */
} cdLemke;

size_t cd_lemkeWorkSize(int n) {
  size_t nn = n > 0 ? (size_t)n : 0;
  return (nn * nn + 9 * nn) * sizeof(double) + (3 * nn + 1) * sizeof(int);
}

static double pow2Near(double x) { return ldexp(1.0, (int)lround(log2(x))); }

/* fills the scales r, c (n each; 1 when not scaled); returns 1 when it scaled.
 * rm, cm: (n) scratch */
static int lemkeScale(int n, const double *A, int mode, double *r, double *c, double *rm, double *cm) {
  for (int i = 0; i < n; i++) r[i] = c[i] = 1.0;
  if (mode < 0) return 0;
  for (int it = 0; it < 8; it++) {
    for (int i = 0; i < n; i++) rm[i] = cm[i] = 0.0;
    for (int j = 0; j < n; j++) {
      const double *Aj = &A[(size_t)j * (size_t)n];
      for (int i = 0; i < n; i++) {
        double a = fabs(r[i] * Aj[i] * c[j]);
        if (a > rm[i]) rm[i] = a;
        if (a > cm[j]) cm[j] = a;
      }
    }
    if (it == 0 && mode == 0) {
      /* spread of the non-zero row and column maxima */
      double lo = INFINITY, hi = 0.0;
      for (int i = 0; i < n; i++) {
        if (rm[i] > 0 && rm[i] < lo) lo = rm[i];
        if (rm[i] > hi) hi = rm[i];
        if (cm[i] > 0 && cm[i] < lo) lo = cm[i];
        if (cm[i] > hi) hi = cm[i];
      }
      if (!(hi > CD_LEMKE_SCALE_SPREAD * lo)) return 0;
    }
    /* one Ruiz step: divide each row and column by the square root of its maximum */
    for (int i = 0; i < n; i++)
      if (rm[i] > 0) r[i] *= pow2Near(1.0 / sqrt(rm[i]));
    for (int j = 0; j < n; j++)
      if (cm[j] > 0) c[j] *= pow2Near(1.0 / sqrt(cm[j]));
  }
  return 1;
}

/* w = A z + b (unscaled) into w; returns ||min(z, w)||_inf */
static double residualWith(int n, const double *A, const double *b, const double *z, double *w) {
  memcpy(w, b, (size_t)n * sizeof *w);
  for (int j = 0; j < n; j++) {
    if (z[j] == 0.0) continue;
    const double *Aj = &A[(size_t)j * (size_t)n];
    for (int i = 0; i < n; i++) w[i] += Aj[i] * z[j];
  }
  double res = 0.0;
  for (int i = 0; i < n; i++) {
    double m = fabs(fmin(z[i], w[i]));
    if (!(m <= res)) res = m; /* NaN propagates */
  }
  return res;
}

double cd_lcpResidualDense(int n, const double *A, const double *b, const double *z) {
  double res = 0.0;
  for (int i = 0; i < n; i++) {
    double w = b[i];
    for (int j = 0; j < n; j++) w += A[i + (size_t)j * (size_t)n] * z[j];
    double m = fabs(fmin(z[i], w));
    if (!(m <= res)) res = m;
  }
  return res;
}

/* d = B^-1 (column of variable v in C = [I, -R A S, -e]) */
static void lemkeColumn(cdLemke *L, int v) {
  int n = L->n;
  if (v < n) {
    for (int i = 0; i < n; i++) {
      L->d[i] = L->Binv[(size_t)i * (size_t)n + (size_t)v];
      L->dnoise[i] = 0.0;
    }
    return;
  }
  /* the column's non-zeros (cand is free until the ratio test): contact LCP columns have
   * few, so the product costs n nnz instead of n^2 */
  int nz = 0;
  if (v < 2 * n) {
    int j = v - n;
    const double *Aj = &L->A[(size_t)j * (size_t)n];
    for (int k = 0; k < n; k++)
      if (Aj[k] != 0.0) {
        L->col[nz] = -L->r[k] * Aj[k] * L->c[j];
        L->cand[nz++] = k;
      }
  } else {
    for (int k = 0; k < n; k++) {
      L->col[nz] = -1.0;
      L->cand[nz++] = k;
    }
  }
  for (int i = 0; i < n; i++) {
    const double *Bi = &L->Binv[(size_t)i * (size_t)n];
    double s = 0.0, a = 0.0;
    for (int t = 0; t < nz; t++) {
      double p = Bi[L->cand[t]] * L->col[t];
      s += p;
      a += fabs(p);
    }
    L->d[i] = s;
    L->dnoise[i] = LEMKE_PIVOT_NOISE * DBL_EPSILON * a;
  }
}

/* the leaving row by the lexicographic minimum ratio test, or -1 (ray) */
static int lemkeRatioTest(cdLemke *L) {
  int n = L->n, nc = 0;
  double dmax = 0.0;
  for (int i = 0; i < n; i++) dmax = fmax(dmax, fabs(L->d[i]));
  if (!(dmax > 0.0)) return -1;
  double ptol = LEMKE_PIVOT_REL * dmax, tmin = INFINITY;
  for (int i = 0; i < n; i++) {
    if (L->d[i] > ptol && L->d[i] > L->dnoise[i]) {
      double t = fmax(L->xB[i], 0.0) / L->d[i];
      if (t < tmin) tmin = t;
    }
  }
  if (tmin == INFINITY) return -1;
  for (int i = 0; i < n; i++) {
    if (L->d[i] > ptol && L->d[i] > L->dnoise[i] && fmax(L->xB[i], 0.0) / L->d[i] <= tmin + LEMKE_TIE_REL * (1.0 + tmin)) L->cand[nc++] = i;
  }
  /* z0 leaving ends the run: prefer it among ties */
  for (int k = 0; k < nc; k++)
    if (L->basis[L->cand[k]] == 2 * n) return L->cand[k];
  /* lexicographic: compare the rows of B^-1 / d column by column until one is left */
  for (int col = 0; col < n && nc > 1; col++) {
    double vmin = INFINITY;
    for (int k = 0; k < nc; k++) {
      int i = L->cand[k];
      double v = L->Binv[(size_t)i * (size_t)n + (size_t)col] / L->d[i];
      if (v < vmin) vmin = v;
    }
    int keep = 0;
    for (int k = 0; k < nc; k++) {
      int i = L->cand[k];
      double v = L->Binv[(size_t)i * (size_t)n + (size_t)col] / L->d[i];
      if (v <= vmin + LEMKE_TIE_REL * (1.0 + fabs(vmin))) L->cand[keep++] = i;
    }
    nc = keep;
  }
  return L->cand[0];
}

/* Gauss-Jordan step on row r with the pivot column d */
static void lemkePivot(cdLemke *L, int r) {
  int n = L->n;
  double *Br = &L->Binv[(size_t)r * (size_t)n];
  double inv = 1.0 / L->d[r];
  /* B^-1 of a contact LCP stays sparse: update only the pivot row's non-zeros */
  int nz = 0;
  for (int k = 0; k < n; k++) {
    Br[k] *= inv;
    if (Br[k] != 0.0) L->nzrow[nz++] = k;
  }
  L->xB[r] *= inv;
  for (int i = 0; i < n; i++) {
    double f = L->d[i];
    if (i == r || f == 0.0) continue;
    double *Bi = &L->Binv[(size_t)i * (size_t)n];
    for (int t = 0; t < nz; t++) Bi[L->nzrow[t]] -= f * Br[L->nzrow[t]];
    L->xB[i] -= f * L->xB[r];
  }
}

/* LU with partial pivoting of the k x k column-major matrix F in place; piv (k) out.
 * Returns -1 when a pivot is negligible against the largest entry. */
static int luFactor(int k, double *F, int *piv) {
  double amax = 0.0;
  for (size_t t = 0; t < (size_t)k * (size_t)k; t++) amax = fmax(amax, fabs(F[t]));
  if (!(amax > 0.0)) return -1;
  for (int j = 0; j < k; j++) {
    int p = j;
    for (int i = j + 1; i < k; i++)
      if (fabs(F[i + (size_t)j * k]) > fabs(F[p + (size_t)j * k])) p = i;
    piv[j] = p;
    if (!(fabs(F[p + (size_t)j * k]) > 1e-14 * amax)) return -1;
    if (p != j)
      for (int c = 0; c < k; c++) {
        double t = F[j + (size_t)c * k];
        F[j + (size_t)c * k] = F[p + (size_t)c * k];
        F[p + (size_t)c * k] = t;
      }
    double inv = 1.0 / F[j + (size_t)j * k];
    for (int i = j + 1; i < k; i++) F[i + (size_t)j * k] *= inv;
    for (int c = j + 1; c < k; c++) {
      double f = F[j + (size_t)c * k];
      if (f == 0.0) continue;
      for (int i = j + 1; i < k; i++) F[i + (size_t)c * k] -= F[i + (size_t)j * k] * f;
    }
  }
  return 0;
}

static void luSolve(int k, const double *F, const int *piv, double *x) {
  for (int j = 0; j < k; j++) {
    if (piv[j] != j) {
      double t = x[j];
      x[j] = x[piv[j]];
      x[piv[j]] = t;
    }
    for (int i = j + 1; i < k; i++) x[i] -= F[i + (size_t)j * k] * x[j];
  }
  for (int j = k - 1; j >= 0; j--) {
    x[j] /= F[j + (size_t)j * k];
    for (int i = 0; i < j; i++) x[i] -= F[i + (size_t)j * k] * x[j];
  }
}

/* re-solves the final active set (the basic z) of L; writes the candidate into zc and
 * returns its residual, or INFINITY when the active-set matrix is singular.
 * F: (n x n) scratch (the dead B^-1), y, t, w: (n) scratch, S, piv: (n) int scratch */
static double lemkeRefine(cdLemke *L, const double *b, double *zc, double *F, double *y, double *t,
                          double *w, int *S, int *piv) {
  int n = L->n, k = 0;
  for (int i = 0; i < n; i++)
    if (L->basis[i] >= n && L->basis[i] < 2 * n) S[k++] = L->basis[i] - n;
  if (k == 0) return INFINITY;
  /* scaled A_SS (column-major) and the right-hand side -R b on S */
  for (int q = 0; q < k; q++)
    for (int p = 0; p < k; p++) {
      int i = S[p], j = S[q];
      F[p + (size_t)q * k] = L->r[i] * L->A[i + (size_t)j * (size_t)n] * L->c[j];
    }
  if (luFactor(k, F, piv)) return INFINITY;
  for (int p = 0; p < k; p++) y[p] = -L->r[S[p]] * b[S[p]];
  luSolve(k, F, piv, y);
  /* one step of iterative refinement against the unfactored matrix */
  for (int p = 0; p < k; p++) {
    int i = S[p];
    double s = -L->r[i] * b[i];
    for (int q = 0; q < k; q++) s -= L->r[i] * L->A[i + (size_t)S[q] * (size_t)n] * L->c[S[q]] * y[q];
    t[p] = s;
  }
  luSolve(k, F, piv, t);
  memset(zc, 0, (size_t)n * sizeof *zc);
  for (int p = 0; p < k; p++) zc[S[p]] = L->c[S[p]] * fmax(0.0, y[p] + t[p]);
  return residualWith(n, L->A, b, zc, w);
}

int cd_lemkeSolve(int n, const double *A, const double *b, double *z, const cdLemkeOptions *opt,
                  cdLemkeStats *stats) {
  cdLemkeStats st = {0, 0.0, 0, 0};
  if (n <= 0) {
    if (stats) *stats = st;
    return CD_LEMKE_SOLVED;
  }
  int maxp = opt && opt->max_pivots > 0 ? opt->max_pivots : 20 * n + 1000;
  double tol = opt && opt->tolerance > 0 ? opt->tolerance : 1e-10;
  int scale = opt ? opt->scale : 0;
  void *mem = opt && opt->work ? opt->work : cd_malloc(cd_lemkeWorkSize(n));
  if (!mem) return CD_LEMKE_NOMEM;

  /* carve the workspace: doubles first, then ints */
  size_t nn = (size_t)n;
  double *dw = mem;
  cdLemke L;
  L.n = n;
  L.A = A;
  L.Binv = dw;
  L.xB = dw + nn * nn;
  L.d = L.xB + nn;
  L.col = L.d + nn;
  L.dnoise = L.col + nn;
  double *r = L.dnoise + nn, *c = r + nn, *zc = c + nn, *t1 = zc + nn, *t2 = t1 + nn;
  L.r = r;
  L.c = c;
  int *iw = (int *)(void *)(t2 + nn);
  L.basis = iw;
  L.cand = iw + nn;
  int *piv = L.cand + nn; /* (n + 1): the refinement's LU pivots */
  L.nzrow = piv;

  st.scaled = lemkeScale(n, A, scale, r, c, t1, t2);
  double bnorm = 0.0;
  for (int i = 0; i < n; i++) bnorm = fmax(bnorm, fabs(b[i]));
  double check = tol * fmax(1.0, bnorm);

  /* the first pivot: z0 enters, w_r leaves; among ties the largest index (lexicographic) */
  int rr = 0;
  for (int i = 0; i < n; i++) {
    L.xB[i] = r[i] * b[i];
    if (L.xB[i] <= L.xB[rr]) rr = i;
  }
  int status, pivoted = L.xB[rr] < 0.0;
  if (!pivoted) {
    memset(z, 0, nn * sizeof *z);
    status = CD_LEMKE_SOLVED;
  } else {
    memset(L.Binv, 0, nn * nn * sizeof *L.Binv);
    for (int i = 0; i < n; i++) {
      L.Binv[(size_t)i * nn + (size_t)i] = 1.0;
      L.basis[i] = i;
    }
    lemkeColumn(&L, 2 * n);
    lemkePivot(&L, rr);
    L.basis[rr] = 2 * n;
    int entering = n + rr;
    for (;;) {
      if (st.pivots >= maxp) {
        status = CD_LEMKE_PIVOT_LIMIT;
        break;
      }
      lemkeColumn(&L, entering);
      int row = lemkeRatioTest(&L);
      if (row < 0) {
        status = CD_LEMKE_RAY;
        break;
      }
      int leaving = L.basis[row];
      lemkePivot(&L, row);
      L.basis[row] = entering;
      st.pivots++;
      if (leaving == 2 * n) {
        status = CD_LEMKE_SOLVED;
        break;
      }
      entering = leaving < n ? leaving + n : leaving - n;
    }
    memset(z, 0, nn * sizeof *z);
    for (int i = 0; i < n; i++) {
      int v = L.basis[i];
      if (v >= n && v < 2 * n) z[v - n] = c[v - n] * fmax(0.0, L.xB[i]);
    }
  }

  st.residual = residualWith(n, A, b, z, t1);
  if (status == CD_LEMKE_SOLVED && !(st.residual <= check) && pivoted) {
    /* B^-1 is no longer needed: its storage holds the active-set factorization */
    double res = lemkeRefine(&L, b, zc, L.Binv, L.d, L.col, t1, L.cand, piv);
    if (res < st.residual) {
      memcpy(z, zc, nn * sizeof *z);
      st.residual = res;
      st.refined = 1;
    }
    if (!(st.residual <= check)) status = CD_LEMKE_INACCURATE;
  }
  if (!(opt && opt->work)) cd_free(mem);
  if (stats) *stats = st;
  return status;
}
