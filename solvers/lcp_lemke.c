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
 * strictly copositive case) ray termination proves the LCP infeasible (CPS Theorem
 * 4.4.13), so a reported ray is never a missed solution there. The Anitescu-Hart contact
 * matrix is copositive but not copositive-plus (z = (0, 0, beta) has z^T A z = 0 and
 * (A + A^T) z = (mu beta, 0, 0)); Lemke solves it when b . z^h >= 0 on its homogeneous
 * solutions z^h (Anitescu & Potra, Nonlinear Dynamics 14, 1997), which holds for a physical
 * b = (J v + phi/dt) with phi >= 0; a random b with a singular G can end on a true ray.
 *
 * Largest-pivot rule (opt->ties = CD_LEMKE_TIES_LARGEST_PIVOT, used by the contact
 * backend): ties go to the largest pivot entry instead, and entries below 1e-6 of the
 * column's largest are not pivots. Redundant contacts (a cube pyramid: four coplanar points
 * a face, G singular) make most pivots degenerate; there the lexicographic rule keeps
 * choosing entries that are zeros up to roundoff, B^-1 grows to 1e12 and the run ends on a
 * false ray or an inaccurate basis (299 of the pyramid's 300 steps). Any ratio-test tie rule
 * is still Lemke's method (the path is one of the exact almost-complementary paths of the
 * degenerate problem); finiteness is kept by hashing the bases: a basis seen within the
 * last n pivots switches to the lexicographic rule against the current basis (Lemke on b
 * perturbed by B_cur (eps, .., eps^n), which cannot cycle) until the path leaves the
 * degenerate vertex, and half the pivot budget spent switches to it for good.
 * Warm start (opt->start, Cottle-Pang-Stone 4.4 with a general covering vector d): the
 * complementary basis B_0 = {z_j : start_j > 0, w_i : the others} is factored; if its
 * x_B = B_0^-1 b is feasible it is the solution (no pivot: a resting scene's steps); else
 * Lemke runs from B_0 with d = B_0 1 (so x_B(z0) = B_0^-1 b + z0 1 is feasible at
 * z0 = -min x_B). With d not positive, ray termination no longer proves infeasibility, so a
 * warm run that does not solve is followed by the standard run from {w} with d = e.
 * Implementation: revised form with an explicit basis inverse B^-1 (row-major), updated by
 * one Gauss-Jordan step per pivot: O(n^2) a pivot, n^2 + O(n) doubles of workspace.
 * Scaling: with positive diagonal R, S (powers of two, so exact), the LCP (R A S, R b) in
 * z' = S^-1 z has the same solutions and w' = R w; rows and columns are equilibrated that
 * way (Ruiz iteration) when their magnitudes spread over orders of magnitude, as they do
 * when masses do.
 * Restarts: a run that ends on a complementary basis whose z misses the tolerance is
 * restarted from that basis (at most LEMKE_RESTARTS times, maxp pivots in all): the basis
 * is factored afresh like a warm start, which removes the drift of the updated B^-1 and
 * x_B, and if the fresh x_B is infeasible Lemke runs again from it with d = B 1. On
 * redundant contacts (a cube stack: four coplanar points a face) many rows are degenerate
 * (x_B = 0 in exact arithmetic, +-1e-11 here) with pivot entries of 1e-11 .. 1e-10 that
 * the pivot tolerance rightly refuses; stepping past them leaves the final x_B infeasible
 * by ~1e-10, just above the tolerance (76 of the stack's 300 steps); the restarts solve
 * those from the nearby basis. Every answer is still a complementary basis's exact
 * solution checked against the tolerance.
 * Check and refinement: the returned z is checked on the original problem;
 * if the residual misses the tolerance, the final active set S = {j : z_j basic} is solved
 * again, A_SS z_S = -b_S, by an LU factorization with one step of iterative refinement,
 * and the result is kept when its residual is smaller.
 */
#include "lcp_lemke.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "lcp.h"

/* a pivot entry d_i must exceed this fraction of the column's largest entry, and
 * LEMKE_PIVOT_NOISE eps sum_k |B^-1_ik col_k| (the rounding error of the product itself):
 * smaller entries are roundoff of an exact zero, and pivoting on one blows B^-1 up. This
 * matters on degenerate rows (x_B = 0 up to roundoff, ratio 0), where the lexicographic
 * rule would otherwise happily take such an entry: a stack of cubes at rest does that. */
#define LEMKE_PIVOT_REL 1e-9
/* the same fraction under the largest-pivot rule: the rule is meant for near-singular
 * problems (redundant contacts, whose dependent columns leave entries that are exact zeros
 * up to the drift of B^-1); on the cube pyramid 1e-9 lets such entries in and B^-1 grows
 * to 1e12, 1e-6 solves 265 of its 300 step LCPs */
#define LEMKE_PIVOT_REL_STABLE 1e-6
#define LEMKE_PIVOT_NOISE 64.0
/* two ratios closer than this (relative) are a tie, resolved lexicographically */
#define LEMKE_TIE_REL 1e-11
/* restarts from a run's final basis when its z misses the tolerance (lemkeRestart) */
#define LEMKE_RESTARTS 4
/* a warm-start basis whose A_SS has a pivot below this fraction of its largest entry is
 * treated as singular (the cold start is used instead) */
#define LEMKE_WARM_PIVOT 1e-12

typedef struct {
  int n;
  const double *A, *r, *c; /* original A (column-major) and the row / column scales */
  double *Binv;            /* (n x n) row-major basis inverse */
  double *xB;              /* (n) values of the basic variables */
  double *d;               /* (n) B^-1 times the entering column */
  double *dnoise;          /* (n) rounding error bound of each d_i */
  double *col;             /* (n) the entering column's non-zeros (rows in cand) */
  double *cover;           /* (n) covering vector (scaled): z0's column of C is -cover */
  uint64_t *seen;          /* (n) hashes of the last n bases (cycle detection) */
  int *basis;              /* (n) variable of each row: w_i = i, z_j = n + j, z0 = 2n */
  int *cand;               /* (n) candidate rows of the ratio test */
  int *nzrow;              /* (n) non-zero columns of the pivot row */
  int *ref;                /* (n) the lexicographic reference basis (lex mode) */
  int lex;                 /* 1: ties broken lexicographically against ref */
  double prel;             /* LEMKE_PIVOT_REL or LEMKE_PIVOT_REL_STABLE */
  double step;             /* the last ratio test's minimum ratio (0: a degenerate pivot) */
} cdLemke;

size_t cd_lemkeWorkSize(int n) {
  size_t nn = n > 0 ? (size_t)n : 0;
  return (nn * nn + 10 * nn) * sizeof(double) + nn * sizeof(uint64_t) + (4 * nn + 1) * sizeof(int);
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
    double m = cd_lcpPairResidual(z[i], w[i]);
    if (!(m <= res)) res = m; /* NaN propagates */
  }
  return res;
}

double cd_lcpResidualDense(int n, const double *A, const double *b, const double *z) {
  double res = 0.0;
  for (int i = 0; i < n; i++) {
    double w = b[i];
    for (int j = 0; j < n; j++) w += A[i + (size_t)j * (size_t)n] * z[j];
    double m = cd_lcpPairResidual(z[i], w);
    if (!(m <= res)) res = m;
  }
  return res;
}

/* the non-zeros of column v of C = [I, -R A S, -cover] into (vals, rows); returns the count */
static int lemkeColumnEntries(const cdLemke *L, int v, double *vals, int *rows) {
  int n = L->n, nz = 0;
  if (v < n) {
    vals[0] = 1.0;
    rows[0] = v;
    return 1;
  }
  if (v < 2 * n) {
    int j = v - n;
    const double *Aj = &L->A[(size_t)j * (size_t)n];
    for (int k = 0; k < n; k++)
      if (Aj[k] != 0.0) {
        vals[nz] = -L->r[k] * Aj[k] * L->c[j];
        rows[nz++] = k;
      }
    return nz;
  }
  for (int k = 0; k < n; k++)
    if (L->cover[k] != 0.0) {
      vals[nz] = -L->cover[k];
      rows[nz++] = k;
    }
  return nz;
}

/* d = B^-1 (column of variable v in C) */
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
  int nz = lemkeColumnEntries(L, v, L->col, L->cand);
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

/* lexicographic choice among the nc tied rows in cand: compares the rows of
 * [B^-1 B_ref] / d column by column (B_ref: the basis L->ref), i.e. Lemke's method on b
 * perturbed by B_ref (eps, eps^2, ..., eps^n). Uses col and nzrow as scratch. */
static int lemkeLexChoice(cdLemke *L, int nc) {
  int n = L->n;
  double *vals = L->col;
  int *rows = L->nzrow;
  for (int t = 0; t < n && nc > 1; t++) {
    int nz = lemkeColumnEntries(L, L->ref[t], vals, rows);
    double vmin = INFINITY;
    /* (B^-1 C_ref[t])_i / d_i of each tied row i, kept in dnoise (free after the test) */
    for (int k = 0; k < nc; k++) {
      int i = L->cand[k];
      const double *Bi = &L->Binv[(size_t)i * (size_t)n];
      double s = 0.0;
      for (int q = 0; q < nz; q++) s += Bi[rows[q]] * vals[q];
      L->dnoise[i] = s / L->d[i];
      if (L->dnoise[i] < vmin) vmin = L->dnoise[i];
    }
    int keep = 0;
    for (int k = 0; k < nc; k++) {
      int i = L->cand[k];
      if (L->dnoise[i] <= vmin + LEMKE_TIE_REL * (1.0 + fabs(vmin))) L->cand[keep++] = i;
    }
    nc = keep;
  }
  return L->cand[0];
}

/* the leaving row by the minimum ratio test, or -1 (ray). Ties: z0 first (it ends the
 * run), then the largest pivot entry, or lexicographically in lex mode. */
static int lemkeRatioTest(cdLemke *L) {
  int n = L->n, nc = 0;
  double dmax = 0.0;
  for (int i = 0; i < n; i++) dmax = fmax(dmax, fabs(L->d[i]));
  if (!(dmax > 0.0)) return -1;
  double ptol = L->prel * dmax, tmin = INFINITY;
  for (int i = 0; i < n; i++) {
    if (L->d[i] > ptol && L->d[i] > L->dnoise[i]) {
      double t = fmax(L->xB[i], 0.0) / L->d[i];
      if (t < tmin) tmin = t;
    }
  }
  if (tmin == INFINITY) return -1;
  L->step = tmin;
  for (int i = 0; i < n; i++) {
    if (L->d[i] > ptol && L->d[i] > L->dnoise[i] && fmax(L->xB[i], 0.0) / L->d[i] <= tmin + LEMKE_TIE_REL * (1.0 + tmin)) L->cand[nc++] = i;
  }
  for (int k = 0; k < nc; k++)
    if (L->basis[L->cand[k]] == 2 * n) return L->cand[k];
  if (L->lex) return lemkeLexChoice(L, nc);
  int best = L->cand[0];
  for (int k = 1; k < nc; k++)
    if (L->d[L->cand[k]] > L->d[best]) best = L->cand[k];
  return best;
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

/* a fixed pseudo-random 64-bit key of variable v (splitmix64): a basis hashes to the XOR
 * of its variables' keys, updated in O(1) a pivot */
static uint64_t varKey(int v) {
  uint64_t x = (uint64_t)v * 0x9E3779B97F4A7C15u + 0x632BE59BD9B4E019u;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
  return x ^ (x >> 31);
}

/* the starting basis of the standard method: {w}, B^-1 = I, covering vector e */
static void lemkeColdBasis(cdLemke *L) {
  size_t nn = (size_t)L->n;
  memset(L->Binv, 0, nn * nn * sizeof *L->Binv);
  for (size_t i = 0; i < nn; i++) {
    L->Binv[i * nn + i] = 1.0;
    L->basis[i] = (int)i;
    L->cover[i] = 1.0;
  }
}

/* the complementary basis {z_j : start_j > 0} and {w_i : the others} with its inverse
 * and the covering vector cover = B 1 (the sum of the basic columns, so B^-1 cover = 1).
 * With S the basic z, B = [[-A_SS, 0], [-A_NS, I]] (rows and columns S, then the rest N),
 * B^-1 = [[-A_SS^-1, 0], [-A_NS A_SS^-1, I]]: A_SS is inverted by Gauss-Jordan with
 * partial pivoting in place (O(|S|^3)). Returns -1 when S is empty or A_SS is numerically
 * singular (a pivot below LEMKE_WARM_PIVOT of the largest entry). piv: (n) int scratch */
static int lemkeWarmBasis(cdLemke *L, const double *start, int *piv) {
  int n = L->n, k = 0;
  size_t nn = (size_t)n;
  int *S = L->cand;
  for (int i = 0; i < n; i++) {
    int in = start[i] > 0.0;
    L->basis[i] = in ? n + i : i;
    if (in) S[k++] = i;
  }
  if (k == 0) return -1;
  size_t kk = (size_t)k;
  double *M = L->Binv; /* k x k row-major at the start of the buffer, expanded below */
  double amax = 0.0;
  for (int p = 0; p < k; p++)
    for (int q = 0; q < k; q++) {
      int i = S[p], j = S[q];
      M[(size_t)p * kk + (size_t)q] = L->r[i] * L->A[i + (size_t)j * nn] * L->c[j];
      amax = fmax(amax, fabs(M[(size_t)p * kk + (size_t)q]));
    }
  if (!(amax > 0.0)) return -1;
  for (int j = 0; j < k; j++) {
    int pr = j;
    for (int i = j + 1; i < k; i++)
      if (fabs(M[(size_t)i * kk + (size_t)j]) > fabs(M[(size_t)pr * kk + (size_t)j])) pr = i;
    piv[j] = pr;
    if (!(fabs(M[(size_t)pr * kk + (size_t)j]) > LEMKE_WARM_PIVOT * amax)) return -1;
    if (pr != j)
      for (int q = 0; q < k; q++) {
        double t = M[(size_t)pr * kk + (size_t)q];
        M[(size_t)pr * kk + (size_t)q] = M[(size_t)j * kk + (size_t)q];
        M[(size_t)j * kk + (size_t)q] = t;
      }
    double *Mj = &M[(size_t)j * kk], inv = 1.0 / Mj[j];
    Mj[j] = 1.0;
    for (int q = 0; q < k; q++) Mj[q] *= inv;
    for (int i = 0; i < k; i++) {
      double *Mi = &M[(size_t)i * kk], f = Mi[j];
      if (i == j || f == 0.0) continue;
      Mi[j] = 0.0;
      for (int q = 0; q < k; q++) Mi[q] -= f * Mj[q];
    }
  }
  /* the row interchanges of P A_SS undo as column interchanges in reverse order */
  for (int j = k - 1; j >= 0; j--)
    if (piv[j] != j)
      for (int i = 0; i < k; i++) {
        double t = M[(size_t)i * kk + (size_t)j];
        M[(size_t)i * kk + (size_t)j] = M[(size_t)i * kk + (size_t)piv[j]];
        M[(size_t)i * kk + (size_t)piv[j]] = t;
      }
  /* expand -A_SS^-1 into rows and columns S of the n x n B^-1: backwards, each target index
   * S_p n + S_q is at or after its source p k + q, so no unread entry is overwritten */
  for (int p = k - 1; p >= 0; p--)
    for (int q = k - 1; q >= 0; q--) M[(size_t)S[p] * nn + (size_t)S[q]] = -M[(size_t)p * kk + (size_t)q];
  for (int p = 0; p < k; p++) {
    double *Bi = &L->Binv[(size_t)S[p] * nn];
    for (int j = 0; j < n; j++)
      if (L->basis[j] < n) Bi[j] = 0.0;
  }
  /* rows N: -A_NS A_SS^-1 = A_NS (rows S of B^-1), and the identity */
  for (int i = 0; i < n; i++) {
    if (L->basis[i] >= n) continue;
    double *Bi = &L->Binv[(size_t)i * nn];
    for (int j = 0; j < n; j++) Bi[j] = 0.0;
    for (int q = 0; q < k; q++) {
      double a = L->r[i] * L->A[i + (size_t)S[q] * nn] * L->c[S[q]];
      if (a == 0.0) continue;
      const double *Bq = &L->Binv[(size_t)S[q] * nn];
      for (int p = 0; p < k; p++) Bi[S[p]] += a * Bq[S[p]];
    }
    Bi[i] = 1.0;
  }
  for (int i = 0; i < n; i++) L->cover[i] = L->basis[i] < n ? 1.0 : 0.0;
  for (int q = 0; q < k; q++) {
    int j = S[q];
    const double *Aj = &L->A[(size_t)j * nn];
    for (int i = 0; i < n; i++) L->cover[i] -= L->r[i] * Aj[i] * L->c[j];
  }
  return 0;
}

/* x_B = B^-1 (R b) */
static void lemkeBasicValues(cdLemke *L, const double *b) {
  int n = L->n;
  for (int i = 0; i < n; i++) {
    const double *Bi = &L->Binv[(size_t)i * (size_t)n];
    double s = 0.0;
    for (int j = 0; j < n; j++) s += Bi[j] * L->r[j] * b[j];
    L->xB[i] = s;
  }
}

/* z from the basic z of L (unscaled; negative roundoff clipped) */
static void lemkeExtract(const cdLemke *L, double *z) {
  int n = L->n;
  memset(z, 0, (size_t)n * sizeof *z);
  for (int i = 0; i < n; i++) {
    int v = L->basis[i];
    if (v >= n && v < 2 * n) z[v - n] = L->c[v - n] * fmax(0.0, L->xB[i]);
  }
}

/* the complementary pivots from the basis in L (B^-1, x_B and cover set, x_B not all >= 0):
 * z0 enters at the most negative x_B (ties: the largest index, which makes the rows of
 * [x_B, B^-1] lexicographically positive), then complements enter until z0 leaves.
 * Adds this run's pivots after the first (at most maxp) to *pivots. Returns a CD_LEMKE_ code. */
static int lemkeRun(cdLemke *L, int maxp, int ties, int *pivots) {
  int n = L->n, rr = 0;
  for (int i = 0; i < n; i++)
    if (L->xB[i] <= L->xB[rr]) rr = i;
  /* the lexicographic rule compares against the starting basis B_0 (B^-1 itself when B_0 = I) */
  L->lex = ties == CD_LEMKE_TIES_LEXICOGRAPHIC;
  memcpy(L->ref, L->basis, (size_t)n * sizeof *L->ref);
  lemkeColumn(L, 2 * n);
  int leaving0 = L->basis[rr];
  lemkePivot(L, rr);
  L->basis[rr] = 2 * n;
  uint64_t hash = 0;
  for (int i = 0; i < n; i++) hash ^= varKey(L->basis[i]);
  int nseen = 0, count = 0, permanent = 0, status, entering = leaving0 < n ? leaving0 + n : leaving0 - n;
  for (;;) {
    if (count >= maxp) {
      status = CD_LEMKE_PIVOT_LIMIT;
      break;
    }
    lemkeColumn(L, entering);
    int row = lemkeRatioTest(L);
    if (row < 0) {
      status = CD_LEMKE_RAY;
      break;
    }
    int leaving = L->basis[row];
    lemkePivot(L, row);
    L->basis[row] = entering;
    count++;
    if (leaving == 2 * n) {
      status = CD_LEMKE_SOLVED;
      break;
    }
    hash ^= varKey(leaving) ^ varKey(entering);
    entering = leaving < n ? leaving + n : leaving - n;
    if (ties == CD_LEMKE_TIES_LARGEST_PIVOT) {
      /* the largest-pivot rule can cycle on a degenerate vertex: a basis seen within the
       * last n pivots switches to the lexicographic rule against the current basis until
       * the path leaves the vertex (a pivot with a positive step), which cannot cycle
       * there; half the pivot budget spent switches to it for the rest of the run */
      if (L->lex && !permanent && L->step > LEMKE_TIE_REL) L->lex = 0;
      int again = 0;
      for (int t = 0; t < nseen && t < n && !again; t++) again = L->seen[t] == hash;
      L->seen[nseen++ % n] = hash;
      if (!L->lex && (again || 2 * count >= maxp)) {
        L->lex = 1;
        permanent = 2 * count >= maxp;
        memcpy(L->ref, L->basis, (size_t)n * sizeof *L->ref);
      }
    }
  }
  *pivots += count;
  return status;
}

/* restarts from the complementary basis a run ended on when its z (residual *res) misses
 * check: the basis is factored afresh (lemkeWarmBasis on the mask of its basic z), which
 * removes the drift of the updated B^-1 and x_B; if the fresh x_B is still infeasible (a
 * degenerate row whose pivot entry was too small to be taken, see the opening comment), Lemke
 * runs again from that basis with the covering vector B 1, at most maxp pivots in all
 * (added to *pivots). z and *res keep the best iterate. Returns 1 when z meets check. mask, zc, w: (n) scratch; piv: (n) int
 * scratch */
static int lemkeRestart(cdLemke *L, const double *b, double *z, double *res, double check, int maxp, int ties,
                        int *pivots, double *mask, double *zc, double *w, int *piv) {
  int n = L->n, used = 0;
  for (int k = 0; k < LEMKE_RESTARTS && used < maxp; k++) {
    for (int i = 0; i < n; i++) mask[i] = 0.0;
    for (int i = 0; i < n; i++)
      if (L->basis[i] >= n && L->basis[i] < 2 * n) mask[L->basis[i] - n] = 1.0;
    if (lemkeWarmBasis(L, mask, piv)) return 0;
    lemkeBasicValues(L, b);
    double xmin = INFINITY;
    for (int i = 0; i < n; i++) xmin = fmin(xmin, L->xB[i]);
    lemkeExtract(L, zc);
    double rc = residualWith(n, L->A, b, zc, w);
    if (rc < *res) {
      memcpy(z, zc, (size_t)n * sizeof *z);
      *res = rc;
    }
    if (*res <= check) break;
    /* a feasible fresh x_B whose z still misses check is as good as this basis gets */
    if (!(xmin < 0.0) || lemkeRun(L, maxp - used, ties, &used) != CD_LEMKE_SOLVED) break;
    lemkeExtract(L, zc);
    rc = residualWith(n, L->A, b, zc, w);
    if (rc < *res) {
      memcpy(z, zc, (size_t)n * sizeof *z);
      *res = rc;
    }
    if (*res <= check) break;
  }
  *pivots += used;
  return *res <= check;
}

int cd_lemkeSolve(int n, const double *A, const double *b, double *z, const cdLemkeOptions *opt,
                  cdLemkeStats *stats) {
  cdLemkeStats st = {0, 0.0, 0, 0, 0};
  if (n <= 0) {
    if (stats) *stats = st;
    return CD_LEMKE_SOLVED;
  }
  int maxp = opt && opt->max_pivots > 0 ? opt->max_pivots : 20 * n + 1000;
  double tol = opt && opt->tolerance > 0 ? opt->tolerance : 1e-10;
  int scale = opt ? opt->scale : 0;
  const double *start = opt ? opt->start : NULL;
  int ties = opt ? opt->ties : CD_LEMKE_TIES_LEXICOGRAPHIC;
  void *mem = opt && opt->work ? opt->work : cd_malloc(cd_lemkeWorkSize(n));
  if (!mem) return CD_LEMKE_NOMEM;

  /* carve the workspace: doubles first, then the hashes, then ints */
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
  L.cover = L.dnoise + nn;
  double *r = L.cover + nn, *c = r + nn, *zc = c + nn, *t1 = zc + nn, *t2 = t1 + nn;
  L.r = r;
  L.c = c;
  L.seen = (uint64_t *)(void *)(t2 + nn);
  int *iw = (int *)(void *)(L.seen + nn);
  L.basis = iw;
  L.cand = iw + nn;
  L.ref = L.cand + nn;
  int *piv = L.ref + nn; /* (n + 1): the refinement's LU pivots */
  L.nzrow = piv;
  L.lex = 0;
  L.step = 0.0;
  L.prel = ties == CD_LEMKE_TIES_LARGEST_PIVOT ? LEMKE_PIVOT_REL_STABLE : LEMKE_PIVOT_REL;

  st.scaled = lemkeScale(n, A, scale, r, c, t1, t2);
  double bnorm = 0.0;
  for (int i = 0; i < n; i++) bnorm = fmax(bnorm, fabs(b[i]));
  double check = tol * fmax(1.0, bnorm);

  int status = -1, pivoted = 0;
  if (start && lemkeWarmBasis(&L, start, piv) == 0) {
    /* the guessed basis: a solution when its x_B is feasible, else the start of the pivots */
    lemkeBasicValues(&L, b);
    lemkeExtract(&L, z);
    st.residual = residualWith(n, A, b, z, t1);
    if (st.residual <= check) {
      status = CD_LEMKE_SOLVED;
    } else {
      pivoted = 1;
      status = lemkeRun(&L, maxp, ties, &st.pivots);
      lemkeExtract(&L, z);
      st.residual = residualWith(n, A, b, z, t1);
      if (status == CD_LEMKE_SOLVED && !(st.residual <= check) &&
          !lemkeRestart(&L, b, z, &st.residual, check, maxp, ties, &st.pivots, t2, zc, t1, piv))
        status = CD_LEMKE_INACCURATE;
    }
    st.warm = status == CD_LEMKE_SOLVED;
  }
  if (status != CD_LEMKE_SOLVED) {
    /* the standard method: basis {w}, covering vector e */
    pivoted = 0;
    for (int i = 0; i < n; i++) pivoted |= r[i] * b[i] < 0.0;
    if (!pivoted) {
      memset(z, 0, nn * sizeof *z);
      status = CD_LEMKE_SOLVED;
    } else {
      lemkeColdBasis(&L);
      for (int i = 0; i < n; i++) L.xB[i] = r[i] * b[i];
      status = lemkeRun(&L, maxp, ties, &st.pivots);
      lemkeExtract(&L, z);
      st.residual = residualWith(n, A, b, z, t1);
      if (status == CD_LEMKE_SOLVED && !(st.residual <= check))
        lemkeRestart(&L, b, z, &st.residual, check, maxp, ties, &st.pivots, t2, zc, t1, piv);
    }
    st.residual = residualWith(n, A, b, z, t1);
  }
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
