/* ccp_primal.c: the CCP by a primal-dual interior-point method for its conic form.
 *
 * Problem. Seed 001 gives two convex programs with the same KKT conditions: the primal
 *     min_v 1/2 (v - v_f)^T M (v - v_f)  s.t.  J v - c_stab ∈ K*,
 * whose multipliers are the impulses lambda, and the dual over lambda (3 ncon, N s),
 *     min 1/2 lambda^T G lambda + g^T lambda  s.t.  lambda ∈ K = Π K_mu_i,   G = J M^-1 J^T.
 * We solve the primal's equivalent conic form in contact space, i.e. the dual QP, because the
 * backend is handed the contact problem (G, g, mu) and not J and M: M is block diagonal, so
 * v = v_f + M^-1 J^T lambda recovers the velocities exactly from the impulses (the core does
 * that), and the contact space has 3 ncon unknowns instead of 6 nbody + 3 ncon. The KKT
 * conditions of the two programs are identical (seed 001), so the solution is the same.
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
 * A tiny diagonal regularisation keeps the factorisation stable as W^2 degenerates near the
 * solution; the refinement removes its effect.
 *
 * Stopping: the shared natural-map residual of lambda = E x (cone.h), with c̄ computed from G
 * (not from z), is <= tolerance; the best iterate by that residual is returned. The warm start
 * in p->lambda is not used: interior-point iterates must start away from the cone boundary.
 */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "ccp.h"
#include "cone.h"

typedef struct ipmWork {
  const cdContactProblem *p;
  cholmod_common *cc;
  int nc, n;
  int *dim, *off;  /* (nc) cone dimension 3 or 1, offset of each cone in x */
  double *esc;     /* (nc) lambda_N = esc x_0: 1/mu for Q^3, 1 for R_+ */
  double *ws;      /* (nc x 4) scaling: beta, w̄ (Q^3); w (R_+) */
  double *H;       /* (nc x 9) W_i^2, row-major (R_+ uses H[0]) */
  double *l3a, *l3b; /* (3 nc) scratch in lambda space */
  double *res, *cor; /* (n) refinement scratch */
  cholmod_sparse *A;
  double *Pval;    /* (nnz A) the symmetric part of P on A's pattern */
  cholmod_factor *L;
  cholmod_dense *B, *X, *Y, *E;
  double delta;    /* diagonal regularisation of the factored matrix */
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

/* the NT scaling of every cone at (x, z), the scaled point l = W x, and W^2 */
static int ntScaling(ipmWork *w, const double *x, const double *z, double *l) {
  for (int i = 0; i < w->nc; i++) {
    const double *a = &x[w->off[i]], *b = &z[w->off[i]];
    double *s = &w->ws[4 * i], *H = &w->H[9 * i];
    if (w->dim[i] == 1) {
      s[0] = sqrt(b[0] / a[0]);
      H[0] = b[0] / a[0];
      if (!(s[0] > 0.0) || !isfinite(s[0])) return -1;
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
    double Wb[9], e[3];
    for (int c = 0; c < 3; c++) {
      double u[3] = {c == 0, c == 1, c == 2};
      wbarApply(&s[1], u, e, 1.0);
      Wb[c] = e[0];
      Wb[3 + c] = e[1];
      Wb[6 + c] = e[2];
    }
    double b2 = s[0] * s[0];
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++)
        H[3 * r + c] = b2 * (Wb[3 * r] * Wb[c] + Wb[3 * r + 1] * Wb[3 + c] + Wb[3 * r + 2] * Wb[6 + c]);
    if (!isfinite(H[0] + H[4] + H[8])) return -1;
  }
  applyW(w, x, l, 0);
  return 0;
}

/* builds the pattern of P + W^2 (upper triangle, CSC, the block pattern of G) and the values
 * of the symmetric part of P on it, then analyses it */
static int buildMatrix(ipmWork *w) {
  const cdBlockMatrix *G = &w->p->G;
  size_t nnz = 0;
  for (int j = 0; j < w->nc; j++)
    for (int c = 0; c < w->dim[j]; c++)
      for (int k = G->rowptr[j]; k < G->rowptr[j + 1] && G->col[k] <= j; k++)
        nnz += G->col[k] == j ? (size_t)c + 1 : (size_t)w->dim[G->col[k]];
  w->A = cholmod_allocate_sparse((size_t)w->n, (size_t)w->n, nnz, 1, 1, 1, CHOLMOD_REAL, w->cc);
  w->Pval = cd_malloc((nnz > 0 ? nnz : 1) * sizeof(double));
  if (!w->A || !w->Pval) return CD_ERR_NOMEM;
  int *Ap = w->A->p, *Ai = w->A->i;
  size_t pos = 0;
  for (int j = 0; j < w->nc; j++)
    for (int c = 0; c < w->dim[j]; c++) {
      Ap[w->off[j] + c] = (int)pos;
      double ec = c == 0 ? w->esc[j] : 1.0;
      for (int k = G->rowptr[j]; k < G->rowptr[j + 1] && G->col[k] <= j; k++) {
        int i = G->col[k], rmax = i == j ? c + 1 : w->dim[i];
        const double *Bji = &G->val[9 * (size_t)k], *Bij = NULL;
        /* block (i, j) lives in row i: find it (columns ascending) */
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
        for (int r = 0; r < rmax; r++) {
          double er = r == 0 ? w->esc[i] : 1.0;
          double sym = 0.5 * ((Bij ? Bij[3 * r + c] : 0.0) + Bji[3 * c + r]);
          Ai[pos] = w->off[i] + r;
          w->Pval[pos] = er * ec * sym;
          pos++;
        }
      }
    }
  Ap[w->n] = (int)pos;
  w->L = cholmod_analyze(w->A, w->cc);
  if (!w->L || w->cc->status < CHOLMOD_OK) return w->cc->status == CHOLMOD_OUT_OF_MEMORY ? CD_ERR_NOMEM : CD_ERR_NUMERIC;
  return CD_OK;
}

/* A = P_sym + Hs + delta I, where Hs is W^2 (scaled = 1) or the identity (scaled = 0);
 * factorises it, raising delta on a loss of positive definiteness */
static int factorMatrix(ipmWork *w, int scaled) {
  int *Ap = w->A->p;
  double *Ax = w->A->x;
  for (int attempt = 0; attempt < 6; attempt++) {
    memcpy(Ax, w->Pval, (size_t)Ap[w->n] * sizeof(double));
    for (int j = 0; j < w->nc; j++)
      for (int c = 0; c < w->dim[j]; c++) {
        int base = Ap[w->off[j] + c + 1] - (c + 1); /* the diagonal block closes the column */
        for (int r = 0; r <= c; r++) {
          double h = scaled ? w->H[9 * j + 3 * r + c] : (r == c);
          Ax[base + r] += h + (r == c ? w->delta : 0.0);
        }
      }
    w->cc->status = CHOLMOD_OK;
    if (!cholmod_factorize(w->A, w->L, w->cc)) return CD_ERR_NOMEM;
    if (w->cc->status == CHOLMOD_OK) return CD_OK;
    if (w->cc->status == CHOLMOD_OUT_OF_MEMORY) return CD_ERR_NOMEM;
    if (w->cc->status != CHOLMOD_NOT_POSDEF) return CD_ERR_NUMERIC;
    w->delta = w->delta > 0.0 ? 1e3 * w->delta : 1e-12;
  }
  return CD_ERR_NUMERIC;
}

/* out = (P + Hs) v, Hs as in factorMatrix */
static void applyK(ipmWork *w, const double *v, double *out, int scaled) {
  applyP(w, v, out);
  for (int i = 0; i < w->nc; i++) {
    const double *vi = &v[w->off[i]], *H = &w->H[9 * i];
    double *oi = &out[w->off[i]];
    if (!scaled) {
      for (int r = 0; r < w->dim[i]; r++) oi[r] += vi[r];
    } else if (w->dim[i] == 1) {
      oi[0] += H[0] * vi[0];
    } else {
      for (int r = 0; r < 3; r++) oi[r] += H[3 * r] * vi[0] + H[3 * r + 1] * vi[1] + H[3 * r + 2] * vi[2];
    }
  }
}

/* out = (P + Hs)^-1 rhs: the factor of the regularised symmetric part, then iterative
 * refinement against the true matrix */
static int solveK(ipmWork *w, const double *rhs, double *out, int scaled) {
  int n = w->n;
  double nr = 0.0;
  for (int k = 0; k < n; k++) nr = fmax(nr, fabs(rhs[k]));
  memset(out, 0, (size_t)n * sizeof *out);
  memcpy(w->res, rhs, (size_t)n * sizeof *rhs);
  for (int ref = 0; ref < 20; ref++) {
    memcpy(w->B->x, w->res, (size_t)n * sizeof(double));
    if (!cholmod_solve2(CHOLMOD_A, w->L, w->B, NULL, &w->X, NULL, &w->Y, &w->E, w->cc)) return CD_ERR_NOMEM;
    const double *xs = w->X->x;
    for (int k = 0; k < n; k++) out[k] += xs[k];
    applyK(w, out, w->cor, scaled);
    double rr = 0.0;
    for (int k = 0; k < n; k++) {
      w->res[k] = rhs[k] - w->cor[k];
      rr = fmax(rr, fabs(w->res[k]));
    }
    if (!isfinite(rr)) return CD_ERR_NUMERIC;
    if (rr <= 1e-14 * nr || rr == 0.0) break;
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
  cd_free(w->Pval);
  cd_free(w->dim);
  cd_free(w->off);
  cd_free(w->esc);
  cd_free(w->ws);
  cd_free(w->H);
  cd_free(w->l3a);
}

int cd_ccpPrimalSolve(cdContactProblem *p, const cdCcpParams *par, cholmod_common *cc, cdSolveStats *stats) {
  int nc = p->ncon;
  double tol = par && par->tolerance > 0 ? par->tolerance : CD_CCP_PRIMAL_TOL;
  int maxit = par && par->max_iterations > 0 ? par->max_iterations : CD_CCP_PRIMAL_MAXIT;
  memset(stats, 0, sizeof *stats);
  if (nc == 0) {
    stats->converged = 1;
    return CD_OK;
  }
  ipmWork w;
  memset(&w, 0, sizeof w);
  w.p = p;
  w.cc = cc;
  w.nc = nc;
  w.dim = cd_malloc((size_t)nc * sizeof(int));
  w.off = cd_malloc((size_t)nc * sizeof(int));
  w.esc = cd_malloc((size_t)nc * sizeof(double));
  w.ws = cd_malloc((size_t)nc * 4 * sizeof(double));
  w.H = cd_calloc((size_t)nc * 9, sizeof(double));
  if (!w.dim || !w.off || !w.esc || !w.ws || !w.H) {
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
  /* lambda-space scratch (2 x 3nc), lambda / c̄ / best (3 x 3nc), and the cone-space
   * vectors x z dx dz dxa dza rd l rc u rhs t res cor (14 x n) */
  size_t nl = 3 * (size_t)nc;
  w.l3a = cd_malloc((5 * nl + 14 * (size_t)n) * sizeof(double));
  if (!w.l3a) {
    ipmFree(&w);
    return CD_ERR_NOMEM;
  }
  w.l3b = w.l3a + nl;
  double *lam = w.l3a + 2 * nl, *cb = w.l3a + 3 * nl, *best = w.l3a + 4 * nl, *v = w.l3a + 5 * nl;
  double *x = v, *z = v + n, *dx = v + 2 * n, *dz = v + 3 * n, *dxa = v + 4 * n, *dza = v + 5 * n, *rd = v + 6 * n,
         *l = v + 7 * n, *rc = v + 8 * n, *u = v + 9 * n, *rhs = v + 10 * n, *t = v + 11 * n;
  w.res = v + 12 * n;
  w.cor = v + 13 * n;
  w.B = cholmod_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, cc);
  int rc_ = w.B ? buildMatrix(&w) : CD_ERR_NOMEM;
  double rbest = INFINITY;
  int it = 0;

  /* start: (P + I) x = -q, z = P x + q = -x, both shifted into the cone interior */
  if (rc_ == CD_OK) rc_ = factorMatrix(&w, 0);
  if (rc_ == CD_OK) {
    fromLambda(&w, p->g, rhs);
    for (int k = 0; k < n; k++) rhs[k] = -rhs[k];
    rc_ = solveK(&w, rhs, x, 0);
  }
  if (rc_ == CD_OK) {
    for (int k = 0; k < n; k++) z[k] = -x[k];
    shiftIn(&w, x);
    shiftIn(&w, z);
  }
  for (; rc_ == CD_OK; it++) {
    toLambda(&w, x, lam);
    double r = cd_coneResidualOf(p, lam, cb, NULL);
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
    rc_ = factorMatrix(&w, 1);
    if (rc_ != CD_OK) break;
    /* predictor: r_c = -l ∘ l */
    jordan(&w, l, l, rc);
    for (int k = 0; k < n; k++) rc[k] = -rc[k];
    for (int pass = 0; pass < 2 && rc_ == CD_OK; pass++) {
      double *ddx = pass ? dx : dxa, *ddz = pass ? dz : dza;
      jordanSolve(&w, l, rc, u);
      applyW(&w, u, t, 0); /* t = W (l \ r_c) */
      for (int k = 0; k < n; k++) rhs[k] = -rd[k] + t[k];
      rc_ = solveK(&w, rhs, ddx, 1);
      if (rc_ != CD_OK) break;
      /* dz = W (l \ r_c) - W^2 dx */
      applyW(&w, ddx, u, 0);
      applyW(&w, u, ddz, 0);
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
  stats->iterations = it;
  stats->residual = rbest;
  stats->converged = rbest <= tol;
  ipmFree(&w);
  if (rc_ == CD_ERR_NOMEM) return CD_ERR_NOMEM;
  return isfinite(rbest) ? CD_OK : CD_ERR_NUMERIC;
}
