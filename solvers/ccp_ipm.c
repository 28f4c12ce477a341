/* ccp_ipm.c: the CCP by a primal-dual interior-point method for its conic form (--solver ipm).
 *
 * Problem. Seed 001 gives two convex programs with the same KKT conditions: the primal
 *     min_v 1/2 (v - v_f)^T M (v - v_f)  s.t.  J v - c_stab ∈ K*,
 * whose multipliers are the impulses lambda, and the dual over lambda (3 ncon, N s),
 *     min 1/2 lambda^T G lambda + g^T lambda  s.t.  lambda ∈ K = Π K_mu_i,   G = J M^-1 J^T.
 * This solver works on the dual QP in contact space (G, g, mu; G built on demand), as an
 * interior-point method for the conic form below; the velocity-space primal is ccp_primal.c.
 * M is block diagonal, so v = v_f + M^-1 J^T lambda recovers the velocities exactly from the
 * impulses (the core does that). The KKT conditions of the two programs are identical (seed
 * 001), so the solution is the same. iterations = interior-point steps (plus the polish's
 * sweeps); factorizations = one a step and one for the start.
 *
 * Standard cones. Each K_mu (mu > 0) is mapped onto the second-order cone
 * Q^3 = {x : x0 >= ||(x1, x2)||} by x = (mu l_N, l_T), i.e. lambda_i = E_i x_i with
 * E_i = diag(1/mu, 1, 1); a frictionless contact (mu = 0, K_0 the ray) becomes a 1-d orthant
 * x_i = l_N >= 0, lambda_i = (x_i, 0, 0). With P = E^T G E and q = E^T g the problem is the
 * symmetric-cone complementarity problem
 *     x ∈ C,  z = P x + q ∈ C,  x^T z = 0,      C = Π (Q^3 or R_+), self-dual,
 * and c̄ = G lambda + g relates to z by z_i = E_i^T c̄_i (so z ∈ C is c̄ ∈ K*).
 *
 * Algorithm: Mehrotra predictor-corrector on the central path x ∘ z = sigma mu e, from an
 * infeasible interior start (ECOS's: the solution of (P + I) x = -q, shifted into the cone),
 * with Nesterov-Todd scaling (Domahidi, Chu & Boyd, "ECOS: an SOCP solver for embedded
 * systems", ECC 2013; Vandenberghe, "The CVXOPT linear and quadratic cone program solvers"):
 * W = Π W_i with W_i x_i = W_i^-1 z_i =: l_i (the scaled point), W_i = beta W̄(w̄) for Q^3,
 * W_i = sqrt(z_i / x_i) for R_+. The Newton system of
 *     P dx - dz = -(P x + q - z),    l ∘ (W dx + W^-1 dz) = r_c
 * eliminates dz = W (l \ r_c) - W^2 dx, leaving
 *     (P + W^2) dx = -(P x + q - z) + W (l \ r_c),
 * a sparse symmetric positive definite matrix with the block pattern of G (W^2 is block
 * diagonal, 3x3 per contact). It is factored with CHOLMOD: analysed once per problem,
 * factorised once per iteration (both the predictor and the corrector use the factor), so an
 * iteration costs about a sparse Cholesky of a matrix shaped like G: near linear for the
 * contact graphs of stacks and piles. A nearly symmetric G (peer problems) is handled by
 * factoring the symmetric part plus W^2 and iterative refinement against the true P + W^2.
 * Near the solution W_i^2 has eigenvalues of order 1/mu_gap, beta^2 and mu_gap along its
 * eigenvectors (1, u)/sqrt2, (0, u_perp), (1, -u)/sqrt2 (u the direction of w̄'s tangential
 * part). Written in contact coordinates those huge eigenvalues fill whole 3x3 blocks, and
 * their round-off can swamp the entries of P along the soft directions. So each cone's step
 * is written in W_i's eigenbasis, dx_i = Q_i y_i: the matrix factored is Q^T P Q + Lambda with
 * Lambda diagonal, whose large entries sit on the diagonal where Cholesky handles them
 * benignly, and P's entries are only rotated; dz = t - Q Lambda y is formed without the
 * cancellation of W^2 dx. (On the random test problems this gave the same iterates as the
 * plain form: their accuracy limit is the one of the next paragraph; the basis is a guard for
 * badly scaled problems.)
 * A tiny diagonal regularisation (only when CHOLMOD reports a loss of definiteness) keeps the
 * factorisation going; the refinement removes its effect.
 *
 * Stopping: the shared natural-map residual of lambda = E x (cone.h), with c̄ computed from G
 * (not from z), is <= tolerance; the best iterate by that residual is returned. The warm start
 * in p->lambda is not used: interior-point iterates must start away from the cone boundary.
 *
 * Accuracy floor and polish. On a sliding contact x and z both approach the cone boundary,
 * and any neighbourhood of the central path that is multiplicative in the gap mu_gap lets x
 * and z be misaligned by O(sqrt(mu_gap)) (x^T z - sqrt(det x det z) grows with the square of
 * the misalignment), so the impulses converge like sqrt(mu_gap); and mu_gap cannot fall below
 * about 1e-16 (x0 - ||x1|| is a cancellation in double precision). Measured: residuals of
 * 1e-9 to 1e-10 in 12-16 iterations on random problems (relative to 1 + ||g||). When the
 * tolerance asks for more, or a breakdown stops the iteration, the best interior-point iterate
 * warm-starts projected block Gauss-Seidel (ccp_pgs.c), which from there converges in a few
 * sweeps; stats->fallbacks = 1 says so and stats->iterations counts both.
 */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "ccp.h"
#include "ccp_hessian.h"
#include "cone.h"

typedef struct ipmWork {
  const cdContactProblem *p;
  cholmod_common *cc;
  int nc, n;
  int *dim, *off;  /* (nc) cone dimension 3 or 1, offset of each cone in x */
  double *esc;     /* (nc) lambda_N = esc x_0: 1/mu for Q^3, 1 for R_+ */
  double *ws;      /* (nc x 4) scaling: beta, w̄ (Q^3); w (R_+) */
  double *Q;       /* (nc x 9) eigenvectors of W_i^2 as columns, row-major (R_+: Q[0] = 1) */
  double *lam;     /* (nc x 3) eigenvalues of W_i^2 along those columns */
  int nub;         /* blocks (i, j), i <= j, of G's pattern: the upper triangle */
  int *ubi, *ubj;  /* (nub) their block row and column */
  int *ubpos;      /* (nub x 3) position in A->x of entry (0, c) of each block */
  double *ubS;     /* (nub x 9) E_i^T sym(G)_ij E_j, row-major */
  double *l3a, *l3b; /* (3 nc) scratch in lambda space */
  double *res, *cor, *ref; /* (n) refinement scratch */
  cholmod_sparse *A;
  cholmod_factor *L;
  cholmod_dense *B, *X, *Y, *E;
  double delta;    /* diagonal regularisation of the factored matrix */
  int nfact, nprod; /* numeric factorizations and G products done */
} ipmWork;

static void toLambda(const ipmWork *w, const double *x, double *lam) {
  for (int i = 0; i < w->nc; i++) {
    const double *xi = &x[w->off[i]];
    lam[3 * i] = w->esc[i] * xi[0];
    lam[3 * i + 1] = w->dim[i] == 3 ? xi[1] : 0.0;
    lam[3 * i + 2] = w->dim[i] == 3 ? xi[2] : 0.0;
  }
}

/* out = E^T c (lambda space to cone space, the transpose of toLambda) */
static void fromLambda(const ipmWork *w, const double *c, double *out) {
  for (int i = 0; i < w->nc; i++) {
    double *oi = &out[w->off[i]];
    oi[0] = w->esc[i] * c[3 * i];
    if (w->dim[i] == 3) {
      oi[1] = c[3 * i + 1];
      oi[2] = c[3 * i + 2];
    }
  }
}

/* out = P v = E^T G E v */
static void applyP(ipmWork *w, const double *v, double *out) {
  w->nprod++;
  toLambda(w, v, w->l3a);
  cd_blockMatrixMul(&w->p->G, w->l3a, w->l3b);
  fromLambda(w, w->l3b, out);
}

static double dotn(const double *a, const double *b, int n) {
  double s = 0.0;
  for (int k = 0; k < n; k++) s += a[k] * b[k];
  return s;
}

/* W̄ v for the hyperbolic scaling matrix W̄ = [w0 w1^T; w1 I + w1 w1^T / (1 + w0)];
 * sgn = -1 gives J W̄ J v = W̄^-1 v */
static void wbarApply(const double *wb, const double *v, double *out, double sgn) {
  double t = wb[1] * v[1] + wb[2] * v[2];
  double o0 = wb[0] * v[0] + sgn * t, f = sgn * v[0] + t / (1.0 + wb[0]);
  out[0] = o0;
  out[1] = v[1] + f * wb[1];
  out[2] = v[2] + f * wb[2];
}

/* out = W v (inv = 0) or W^-1 v (inv = 1), cone by cone */
static void applyW(const ipmWork *w, const double *v, double *out, int inv) {
  for (int i = 0; i < w->nc; i++) {
    const double *s = &w->ws[4 * i], *vi = &v[w->off[i]];
    double *oi = &out[w->off[i]];
    if (w->dim[i] == 1) {
      oi[0] = inv ? vi[0] / s[0] : vi[0] * s[0];
    } else {
      double t[3];
      wbarApply(&s[1], vi, t, inv ? -1.0 : 1.0);
      double b = inv ? 1.0 / s[0] : s[0];
      oi[0] = b * t[0];
      oi[1] = b * t[1];
      oi[2] = b * t[2];
    }
  }
}

/* out = u ∘ v (Jordan product) */
static void jordan(const ipmWork *w, const double *u, const double *v, double *out) {
  for (int i = 0; i < w->nc; i++) {
    const double *a = &u[w->off[i]], *b = &v[w->off[i]];
    double *o = &out[w->off[i]];
    if (w->dim[i] == 1) {
      o[0] = a[0] * b[0];
    } else {
      double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
      o[1] = a[0] * b[1] + b[0] * a[1];
      o[2] = a[0] * b[2] + b[0] * a[2];
      o[0] = d;
    }
  }
}

/* out = l \ r, the solution u of l ∘ u = r (l in the cone interior) */
static void jordanSolve(const ipmWork *w, const double *l, const double *r, double *out) {
  for (int i = 0; i < w->nc; i++) {
    const double *a = &l[w->off[i]], *b = &r[w->off[i]];
    double *o = &out[w->off[i]];
    if (w->dim[i] == 1) {
      o[0] = b[0] / a[0];
    } else {
      double det = a[0] * a[0] - a[1] * a[1] - a[2] * a[2];
      double u0 = (a[0] * b[0] - a[1] * b[1] - a[2] * b[2]) / det;
      o[0] = u0;
      o[1] = (b[1] - u0 * a[1]) / a[0];
      o[2] = (b[2] - u0 * a[2]) / a[0];
    }
  }
}

/* the largest alpha with x + alpha d in the cone (x interior); INFINITY when unbounded */
static double maxStep(const ipmWork *w, const double *x, const double *d) {
  double amax = INFINITY;
  for (int i = 0; i < w->nc; i++) {
    const double *a = &x[w->off[i]], *b = &d[w->off[i]];
    if (w->dim[i] == 1) {
      if (b[0] < 0.0) amax = fmin(amax, -a[0] / b[0]);
      continue;
    }
    /* f(alpha) = (a + alpha b)^T J (a + alpha b) = A alpha^2 + 2 B alpha + C, C > 0 */
    double A = b[0] * b[0] - b[1] * b[1] - b[2] * b[2];
    double Bq = a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    double C = a[0] * a[0] - a[1] * a[1] - a[2] * a[2];
    if (b[0] >= sqrt(b[1] * b[1] + b[2] * b[2])) continue; /* d ∈ Q: never leaves */
    double root = INFINITY;
    if (A == 0.0) {
      if (Bq < 0.0) root = -C / (2.0 * Bq);
    } else {
      double disc = Bq * Bq - A * C;
      if (disc >= 0.0) {
        double qq = -(Bq + copysign(sqrt(disc), Bq));
        double r1 = qq / A, r2 = qq != 0.0 ? C / qq : INFINITY;
        if (r1 > 0.0) root = fmin(root, r1);
        if (r2 > 0.0) root = fmin(root, r2);
      }
    }
    amax = fmin(amax, root);
  }
  return amax;
}

/* W_i^2 = I for every cone: the system (P + I) x = -q of the starting point */
static void identityScaling(ipmWork *w) {
  for (int i = 0; i < w->nc; i++) {
    double *Q = &w->Q[9 * i], *l = &w->lam[3 * i];
    for (int k = 0; k < 9; k++) Q[k] = (k % 4 == 0);
    l[0] = l[1] = l[2] = 1.0;
  }
}

/* the NT scaling of every cone at (x, z), the scaled point l = W x, and the eigenbasis of
 * W^2: W̄ has eigenvalues w0 + |w1|, 1 / (w0 + |w1|) (w̄^T J w̄ = 1) and 1 along
 * (1, u)/sqrt2, (1, -u)/sqrt2, (0, u_perp), u = w1 / |w1| */
static int ntScaling(ipmWork *w, const double *x, const double *z, double *l) {
  for (int i = 0; i < w->nc; i++) {
    const double *a = &x[w->off[i]], *b = &z[w->off[i]];
    double *s = &w->ws[4 * i], *Q = &w->Q[9 * i], *lm = &w->lam[3 * i];
    if (w->dim[i] == 1) {
      s[0] = sqrt(b[0] / a[0]);
      Q[0] = 1.0;
      lm[0] = b[0] / a[0];
      if (!(s[0] > 0.0) || !isfinite(lm[0])) return -1;
      continue;
    }
    double nx = a[0] * a[0] - a[1] * a[1] - a[2] * a[2], nz = b[0] * b[0] - b[1] * b[1] - b[2] * b[2];
    if (!(nx > 0.0) || !(nz > 0.0)) return -1;
    nx = sqrt(nx);
    nz = sqrt(nz);
    double xb[3] = {a[0] / nx, a[1] / nx, a[2] / nx}, zb[3] = {b[0] / nz, b[1] / nz, b[2] / nz};
    double gam = sqrt(0.5 * (1.0 + xb[0] * zb[0] + xb[1] * zb[1] + xb[2] * zb[2]));
    /* w̄ = (z̄ + J x̄) / (2 gamma), beta = (z^T J z / x^T J x)^(1/4): then W x = W^-1 z */
    s[0] = sqrt(nz / nx);
    s[1] = (zb[0] + xb[0]) / (2.0 * gam);
    s[2] = (zb[1] - xb[1]) / (2.0 * gam);
    s[3] = (zb[2] - xb[2]) / (2.0 * gam);
    double t = hypot(s[2], s[3]), u1 = 1.0, u2 = 0.0, r2 = sqrt(0.5);
    if (t > 0.0) {
      u1 = s[2] / t;
      u2 = s[3] / t;
    }
    double big = s[1] + t, b2 = s[0] * s[0];
    Q[0] = r2, Q[1] = r2, Q[2] = 0.0;
    Q[3] = r2 * u1, Q[4] = -r2 * u1, Q[5] = -u2;
    Q[6] = r2 * u2, Q[7] = -r2 * u2, Q[8] = u1;
    lm[0] = b2 * big * big;
    lm[1] = b2 / (big * big);
    lm[2] = b2;
    if (!isfinite(lm[0]) || !(lm[1] > 0.0)) return -1;
  }
  applyW(w, x, l, 0);
  return 0;
}

/* out = Q v (transpose = 0) or Q^T v (transpose = 1), cone by cone */
static void applyQ(const ipmWork *w, const double *v, double *out, int transpose) {
  for (int i = 0; i < w->nc; i++) {
    const double *Q = &w->Q[9 * i], *vi = &v[w->off[i]];
    double *oi = &out[w->off[i]];
    if (w->dim[i] == 1) {
      oi[0] = Q[0] * vi[0];
      continue;
    }
    double o[3];
    for (int r = 0; r < 3; r++)
      o[r] = transpose ? Q[r] * vi[0] + Q[3 + r] * vi[1] + Q[6 + r] * vi[2]
                       : Q[3 * r] * vi[0] + Q[3 * r + 1] * vi[1] + Q[3 * r + 2] * vi[2];
    oi[0] = o[0];
    oi[1] = o[1];
    oi[2] = o[2];
  }
}

/* builds the pattern of the Newton matrix (upper triangle, CSC, the block pattern of G), the
 * E-scaled symmetric part of every upper block, and analyses the pattern */
static int buildMatrix(ipmWork *w) {
  const cdBlockMatrix *G = &w->p->G;
  size_t nnz = 0;
  int nub = 0;
  for (int j = 0; j < w->nc; j++)
    for (int k = G->rowptr[j]; k < G->rowptr[j + 1] && G->col[k] <= j; k++) {
      int i = G->col[k];
      nub++;
      nnz += i == j ? (size_t)(w->dim[j] * (w->dim[j] + 1) / 2) : (size_t)(w->dim[i] * w->dim[j]);
    }
  w->nub = nub;
  w->A = cholmod_allocate_sparse((size_t)w->n, (size_t)w->n, nnz, 1, 1, 1, CHOLMOD_REAL, w->cc);
  w->ubi = cd_malloc((size_t)(nub > 0 ? nub : 1) * 2 * sizeof(int));
  w->ubpos = cd_malloc((size_t)(nub > 0 ? nub : 1) * 3 * sizeof(int));
  w->ubS = cd_malloc((size_t)(nub > 0 ? nub : 1) * 9 * sizeof(double));
  if (!w->A || !w->ubi || !w->ubpos || !w->ubS) return CD_ERR_NOMEM;
  w->ubj = w->ubi + nub;
  int *Ap = w->A->p, *Ai = w->A->i;
  /* the upper blocks of block column j are the blocks (j, i), i <= j, of row j (G's pattern
   * is symmetric); sym(G)_ij = (G_ij + G_ji^T) / 2 with G_ij looked up in row i */
  int kk = 0;
  for (int j = 0; j < w->nc; j++) {
    int first = kk;
    for (int k = G->rowptr[j]; k < G->rowptr[j + 1] && G->col[k] <= j; k++, kk++) {
      int i = G->col[k];
      const double *Bji = &G->val[9 * (size_t)k], *Bij = NULL;
      int lo = G->rowptr[i], hi = G->rowptr[i + 1] - 1;
      while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (G->col[mid] == j) {
          Bij = &G->val[9 * (size_t)mid];
          break;
        }
        if (G->col[mid] < j) lo = mid + 1;
        else hi = mid - 1;
      }
      w->ubi[kk] = i;
      w->ubj[kk] = j;
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
          double er = r == 0 ? w->esc[i] : 1.0, ec = c == 0 ? w->esc[j] : 1.0;
          w->ubS[9 * kk + 3 * r + c] = er * ec * 0.5 * ((Bij ? Bij[3 * r + c] : 0.0) + Bji[3 * c + r]);
        }
    }
    /* column o_j + c holds, block by block (i ascending), d_i rows (c + 1 for i = j) */
    size_t pos = j == 0 ? 0 : (size_t)Ap[w->off[j]];
    for (int c = 0; c < w->dim[j]; c++) {
      Ap[w->off[j] + c] = (int)pos;
      for (int q = first; q < kk; q++) {
        int i = w->ubi[q], rmax = i == j ? c + 1 : w->dim[i];
        w->ubpos[3 * q + c] = (int)pos;
        for (int r = 0; r < rmax; r++) Ai[pos++] = w->off[i] + r;
      }
    }
    Ap[w->off[j] + w->dim[j]] = (int)pos;
  }
  w->L = cholmod_analyze(w->A, w->cc);
  if (!w->L || w->cc->status < CHOLMOD_OK) return w->cc->status == CHOLMOD_OUT_OF_MEMORY ? CD_ERR_NOMEM : CD_ERR_NUMERIC;
  return CD_OK;
}

/* A = Q^T P_sym Q + Lambda + delta I in the eigenbases of the current scaling; factorises it,
 * raising delta on a loss of positive definiteness */
static int factorMatrix(ipmWork *w) {
  double *Ax = w->A->x;
  for (int attempt = 0; attempt < 6; attempt++) {
    for (int q = 0; q < w->nub; q++) {
      int i = w->ubi[q], j = w->ubj[q], di = w->dim[i], dj = w->dim[j];
      const double *S = &w->ubS[9 * q], *Qi = &w->Q[9 * i], *Qj = &w->Q[9 * j];
      double SQ[9], M[9];
      for (int a = 0; a < di; a++)
        for (int c = 0; c < dj; c++) {
          double s = 0.0;
          for (int b = 0; b < dj; b++) s += S[3 * a + b] * Qj[3 * b + c];
          SQ[3 * a + c] = s;
        }
      for (int r = 0; r < di; r++)
        for (int c = 0; c < dj; c++) {
          double s = 0.0;
          for (int a = 0; a < di; a++) s += Qi[3 * a + r] * SQ[3 * a + c];
          M[3 * r + c] = s;
        }
      for (int c = 0; c < dj; c++) {
        int rmax = i == j ? c + 1 : di;
        for (int r = 0; r < rmax; r++) {
          double v = M[3 * r + c];
          if (i == j && r == c) v += w->lam[3 * j + c] + w->delta;
          Ax[w->ubpos[3 * q + c] + r] = v;
        }
      }
    }
    w->cc->status = CHOLMOD_OK;
    w->nfact++;
    if (!cholmod_factorize(w->A, w->L, w->cc)) return CD_ERR_NOMEM;
    if (w->cc->status == CHOLMOD_OK) return CD_OK;
    if (w->cc->status == CHOLMOD_OUT_OF_MEMORY) return CD_ERR_NOMEM;
    if (w->cc->status != CHOLMOD_NOT_POSDEF) return CD_ERR_NUMERIC;
    w->delta = w->delta > 0.0 ? 1e3 * w->delta : 1e-12;
  }
  return CD_ERR_NUMERIC;
}

/* out = (Q^T P Q + Lambda) y, the true (possibly nonsymmetric) matrix in the eigenbases;
 * uses w->cor as scratch, so out must be another array */
static void applyK(ipmWork *w, const double *y, double *out) {
  applyQ(w, y, out, 0);
  applyP(w, out, w->cor);
  applyQ(w, w->cor, out, 1);
  for (int i = 0; i < w->nc; i++)
    for (int r = 0; r < w->dim[i]; r++) out[w->off[i] + r] += w->lam[3 * i + r] * y[w->off[i] + r];
}

/* y = (Q^T P Q + Lambda)^-1 Q^T rhs: the factor of the regularised symmetric part, then
 * iterative refinement against the true matrix. Uses w->res, w->cor, w->ref as scratch. */
static int solveK(ipmWork *w, const double *rhs, double *y) {
  int n = w->n;
  double *rb = w->ref, nr = 0.0, prev = INFINITY;
  applyQ(w, rhs, rb, 1);
  for (int k = 0; k < n; k++) nr = fmax(nr, fabs(rb[k]));
  memset(y, 0, (size_t)n * sizeof *y);
  memcpy(w->res, rb, (size_t)n * sizeof *rb);
  for (int ref = 0; ref < 10; ref++) {
    memcpy(w->B->x, w->res, (size_t)n * sizeof(double));
    int st = cd_ccpCholmodSolve(w->L, w->B, &w->X, &w->Y, &w->E, w->cc);
    if (st) return st;
    const double *xs = w->X->x;
    for (int k = 0; k < n; k++) y[k] += xs[k];
    applyK(w, y, w->res);
    double rr = 0.0;
    for (int k = 0; k < n; k++) {
      w->res[k] = rb[k] - w->res[k];
      rr = fmax(rr, fabs(w->res[k]));
    }
    if (!isfinite(rr)) return CD_ERR_NUMERIC;
    /* stop at round-off level or when refinement stops helping */
    if (rr <= 1e-15 * nr || rr > 0.5 * prev) break;
    prev = rr;
  }
  return CD_OK;
}

/* the cone's "smallest eigenvalue" x0 - ||x1|| of each cone, min over cones */
static double minEig(const ipmWork *w, const double *x) {
  double m = INFINITY;
  for (int i = 0; i < w->nc; i++) {
    const double *a = &x[w->off[i]];
    m = fmin(m, w->dim[i] == 1 ? a[0] : a[0] - sqrt(a[1] * a[1] + a[2] * a[2]));
  }
  return m;
}

static void shiftIn(const ipmWork *w, double *x) {
  double m = minEig(w, x);
  if (m > 0.0) return;
  for (int i = 0; i < w->nc; i++) x[w->off[i]] += 1.0 - m;
}

static void ipmFree(ipmWork *w) {
  cholmod_free_sparse(&w->A, w->cc);
  cholmod_free_factor(&w->L, w->cc);
  cholmod_free_dense(&w->B, w->cc);
  cholmod_free_dense(&w->X, w->cc);
  cholmod_free_dense(&w->Y, w->cc);
  cholmod_free_dense(&w->E, w->cc);
  cd_free(w->ubi);
  cd_free(w->ubpos);
  cd_free(w->ubS);
  cd_free(w->Q);
  cd_free(w->lam);
  cd_free(w->dim);
  cd_free(w->off);
  cd_free(w->esc);
  cd_free(w->ws);
  cd_free(w->l3a);
}

int cd_ccpIpmSolve(cdContactProblem *p, const cdCcpParams *par, cholmod_common *cc, cdSolveStats *stats) {
  int nc = p->ncon;
  double tol = par && par->tolerance > 0 ? par->tolerance : CD_CCP_NEWTON_TOL;
  int maxit = par && par->max_iterations > 0 ? par->max_iterations : CD_CCP_NEWTON_MAXIT;
  memset(stats, 0, sizeof *stats);
  if (nc == 0) {
    stats->converged = 1;
    return CD_OK;
  }
  if (cd_contactProblemDelassus(p)) return CD_ERR_NOMEM;
  ipmWork w;
  memset(&w, 0, sizeof w);
  w.p = p;
  w.cc = cc;
  w.nc = nc;
  w.dim = cd_malloc((size_t)nc * sizeof(int));
  w.off = cd_malloc((size_t)nc * sizeof(int));
  w.esc = cd_malloc((size_t)nc * sizeof(double));
  w.ws = cd_malloc((size_t)nc * 4 * sizeof(double));
  w.Q = cd_calloc((size_t)nc * 9, sizeof(double));
  w.lam = cd_calloc((size_t)nc * 3, sizeof(double));
  if (!w.dim || !w.off || !w.esc || !w.ws || !w.Q || !w.lam) {
    ipmFree(&w);
    return CD_ERR_NOMEM;
  }
  for (int i = 0; i < nc; i++) {
    w.off[i] = w.n;
    w.dim[i] = p->mu[i] > 0.0 ? 3 : 1;
    w.esc[i] = p->mu[i] > 0.0 ? 1.0 / p->mu[i] : 1.0;
    w.n += w.dim[i];
  }
  int n = w.n;
  /* best lambda outlives the work arrays (the polish needs it) */
  double *best = cd_malloc(3 * (size_t)nc * sizeof(double));
  if (!best) {
    ipmFree(&w);
    return CD_ERR_NOMEM;
  }
  /* lambda-space scratch (2 x 3nc), lambda / c̄ / best (3 x 3nc), and the cone-space
   * vectors x z dx dz dxa dza rd l rc u rhs t res cor ref y (16 x n) */
  size_t nl = 3 * (size_t)nc;
  w.l3a = cd_malloc((5 * nl + 16 * (size_t)n) * sizeof(double));
  if (!w.l3a) {
    ipmFree(&w);
    cd_free(best);
    return CD_ERR_NOMEM;
  }
  w.l3b = w.l3a + nl;
  double *lam = w.l3a + 2 * nl, *cb = w.l3a + 3 * nl, *v = w.l3a + 5 * nl;
  double *x = v, *z = v + n, *dx = v + 2 * n, *dz = v + 3 * n, *dxa = v + 4 * n, *dza = v + 5 * n, *rd = v + 6 * n,
         *l = v + 7 * n, *rc = v + 8 * n, *u = v + 9 * n, *rhs = v + 10 * n, *t = v + 11 * n;
  w.res = v + 12 * n;
  w.cor = v + 13 * n;
  w.ref = v + 14 * n;
  double *y = v + 15 * n;
  w.B = cholmod_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, cc);
  int rc_ = w.B ? buildMatrix(&w) : CD_ERR_NOMEM;
  double rbest = INFINITY;
  int it = 0;

  /* start: (P + I) x = -q, z = P x + q = -x, both shifted into the cone interior */
  identityScaling(&w);
  if (rc_ == CD_OK) rc_ = factorMatrix(&w);
  if (rc_ == CD_OK) {
    fromLambda(&w, p->g, rhs);
    for (int k = 0; k < n; k++) rhs[k] = -rhs[k];
    rc_ = solveK(&w, rhs, x); /* Q = I: y is x */
  }
  if (rc_ == CD_OK) {
    for (int k = 0; k < n; k++) z[k] = -x[k];
    shiftIn(&w, x);
    shiftIn(&w, z);
  }
  for (; rc_ == CD_OK; it++) {
    toLambda(&w, x, lam);
    double r = cd_coneResidualOf(p, lam, cb, NULL);
    w.nprod++;
    if (r < rbest) {
      rbest = r;
      memcpy(best, lam, nl * sizeof *lam);
    }
    if (rbest <= tol || it >= maxit || !isfinite(r)) break;
    /* rd = P x + q - z = E^T c̄ - z */
    fromLambda(&w, cb, rd);
    for (int k = 0; k < n; k++) rd[k] -= z[k];
    double mu = dotn(x, z, n) / nc;
    if (ntScaling(&w, x, z, l) != 0) {
      rc_ = CD_ERR_NUMERIC;
      break;
    }
    rc_ = factorMatrix(&w);
    if (rc_ != CD_OK) break;
    /* predictor: r_c = -l ∘ l */
    jordan(&w, l, l, rc);
    for (int k = 0; k < n; k++) rc[k] = -rc[k];
    for (int pass = 0; pass < 2 && rc_ == CD_OK; pass++) {
      double *ddx = pass ? dx : dxa, *ddz = pass ? dz : dza;
      jordanSolve(&w, l, rc, u);
      applyW(&w, u, t, 0); /* t = W (l \ r_c) */
      for (int k = 0; k < n; k++) rhs[k] = -rd[k] + t[k];
      rc_ = solveK(&w, rhs, y);
      if (rc_ != CD_OK) break;
      /* dx = Q y, dz = W (l \ r_c) - W^2 dx = t - Q Lambda y (no cancellation in W^2 dx) */
      applyQ(&w, y, ddx, 0);
      for (int i = 0; i < nc; i++)
        for (int c = 0; c < w.dim[i]; c++) y[w.off[i] + c] *= w.lam[3 * i + c];
      applyQ(&w, y, ddz, 0);
      for (int k = 0; k < n; k++) ddz[k] = t[k] - ddz[k];
      if (pass == 0) {
        double aa = fmin(1.0, fmin(maxStep(&w, x, dxa), maxStep(&w, z, dza)));
        double sigma = (1.0 - aa) * (1.0 - aa) * (1.0 - aa);
        /* corrector: r_c = -l ∘ l - (W^-1 dz_a) ∘ (W dx_a) + sigma mu e */
        applyW(&w, dza, u, 1);
        applyW(&w, dxa, t, 0);
        jordan(&w, u, t, rhs);
        jordan(&w, l, l, rc);
        for (int k = 0; k < n; k++) rc[k] = -rc[k] - rhs[k];
        for (int i = 0; i < nc; i++) rc[w.off[i]] += sigma * mu;
      }
    }
    if (rc_ != CD_OK) break;
    double a = fmin(1.0, 0.99 * fmin(maxStep(&w, x, dx), maxStep(&w, z, dz)));
    if (!(a > 1e-14)) break; /* stalled: keep the best iterate */
    for (int k = 0; k < n; k++) {
      x[k] += a * dx[k];
      z[k] += a * dz[k];
    }
  }
  if (isfinite(rbest)) memcpy(p->lambda, best, nl * sizeof *best);
  ipmFree(&w);
  stats->iterations = it;
  stats->factorizations = w.nfact;
  stats->products = w.nprod;
  stats->residual = rbest;
  stats->converged = rbest <= tol;
  if (rc_ == CD_ERR_NOMEM) {
    cd_free(best);
    return CD_ERR_NOMEM;
  }
  if (!stats->converged && isfinite(rbest)) {
    /* polish (see the opening comment); keep whichever is better */
    cdCcpParams pp = {tol, CD_CCP_IPM_POLISH, 0, 0.0, 0.0, 0, 0};
    cdSolveStats ps;
    int prc = cd_ccpPgsSolve(p, &pp, &ps);
    if (prc == CD_ERR_NOMEM) {
      cd_free(best);
      return CD_ERR_NOMEM;
    }
    stats->fallbacks = 1;
    stats->iterations += ps.iterations;
    stats->products += ps.products;
    if (prc == CD_OK && ps.residual < rbest) {
      stats->residual = ps.residual;
      stats->converged = ps.converged;
    } else {
      memcpy(p->lambda, best, nl * sizeof *best);
    }
  }
  cd_free(best);
  return isfinite(stats->residual) ? CD_OK : CD_ERR_NUMERIC;
}
