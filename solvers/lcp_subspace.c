/* lcp_subspace.c: a subspace-minimisation step for the Anitescu-Hart contact LCP.
 *
 * Problem: the LCP of lcp.h, 0 <= z perp A z + b >= 0 with z = (lambda_N, alpha, beta),
 * seen through the contact impulses lambda_i = (lambda_n, D alpha)_i (N s) and the contact
 * velocities u = G lambda + g (m/s, problem.h). Block Gauss-Seidel (lcp_bgs.c) finds the
 * active set of every contact quickly but converges slowly on what is left: the load
 * carried through a pile or a stack is a near-null mode of the sweeps, damped by a percent
 * a sweep. Fixing the active set turns the LCP into a linear system, and that is solved
 * here by a method that is fast on such modes.
 *
 * Active set, read off the iterate (per contact i), and its unknowns x_i and equations:
 *   separated  lambda_n = 0:                        lambda_i = 0; none;
 *   sticking   lambda_n > 0, friction inside the polygon or on it without slip (beta = 0):
 *              x_i = lambda_i (3);                   u_i = 0 (3);
 *   sliding along two adjacent directions d_a, d_b (beta > 0, e^T alpha = mu lambda_n, alpha
 *              positive on a and b only): x_i = (alpha_a, alpha_b), lambda_i =
 *              ((alpha_a + alpha_b) / mu, alpha_a d_a + alpha_b d_b);
 *              u_n = 0 and (d_a - d_b) . u_T = 0 (the slip opposite their bisector);
 *   sliding otherwise (one direction, or mu = 0): x_i = lambda_n, lambda_i = lambda_n (1, s_i)
 *              with s_i = lambda_T / lambda_n held (mu d_a along one direction);  u_n = 0.
 * With lambda = Q x and the equations R u = 0, u = G lambda + g, the step solves
 *     R G Q x = -R g,
 * a sparse linear system, non-symmetric where contacts slide (their friction follows their
 * normal impulse) and singular where contacts are redundant (a pile is hyperstatic).
 * Method: restarted GMRES (RESTART vectors) from x0 = the iterate, right-preconditioned by
 * the inverse of each contact's block R_i G_ii Q_i, at most max_iter products with G a pass, stopping
 * once ||R u||_2 <= tolerance or a restart gains nothing. GMRES minimises the true residual
 * over its Krylov space, so a singular or inconsistent system (a wrong active set) costs
 * progress but cannot blow the iterate up; each product is one cd_lcpDelassusMul (G, or J M^-1 J^T where cheaper),
 * the work of a third of a sweep, and memory is about (RESTART + 9) 3 ncon + ncon (m + 2)
 * doubles.
 * Active-set passes: the active set read off the iterate can be wrong where the sweeps have
 * not settled (a contact sticking that must slide). After each solve, every contact is
 * checked as in a primal-dual active-set method: a multiplier of the wrong sign leaves the
 * set (lambda_n < 0: separated; alpha_a < 0 on an edge: its other vertex), a violated
 * inequality enters it (a separated contact approaching: it closes; sticking friction outside
 * the polygon: it slides on the edge its sector meets; slip against the friction: it sticks;
 * slip past a vertex: the edge towards the more opposed neighbour). Only the contacts
 * violated by at least UPDATE_SHARE of the worst violation (in the residual's units, m/s:
 * impulses divided by meff_i, so that the same contacts change in any unit of mass) change
 * in a pass: changing every
 * violator at once cycles (one contact's change moves its neighbours' velocities; measured
 * on random problems with one contact's state made wrong: 16 of 23 repaired changing all,
 * 22 of 23 changing the worst half). The solve is repeated on the new set, at most
 * SUBSPACE_PASSES times, and the pass whose projected candidate has the smallest LCP
 * residual is returned.
 * Projection back to the LCP: negative multipliers are set to zero (lambda_n, or alpha_a and
 * alpha_b, with lambda_n = (alpha_a + alpha_b) / mu); a vertex slide has alpha_a = mu
 * lambda_n (a slide with another alpha pattern keeps it, scaled by lambda_n new / old); a
 * sticking contact's tangential impulse is split over its two neighbouring directions
 * (cd_lcpAlphaFromTangent) and shrunk radially onto the polygon mu lambda_n when outside it;
 * beta is zero where the friction is inside the polygon and the slip speed
 * max(0, max_k -d_k . u_T) at the new velocities where it is on it. The result is a
 * candidate: the caller (lcp_bgs.c) judges it by the LCP residual, so the step cannot make a
 * solve worse and the fixed points are unchanged.
 * Reference: Silcowitz, Niebe & Erleben, "Projected Gauss-Seidel subspace minimization
 * method for interactive rigid body dynamics" (GRAPP 2010): sweeps to find the active set,
 * a Krylov solve on it, projection (there for a symmetric box-friction LCP, with CG; the
 * Anitescu-Hart matrix is not symmetric, hence GMRES); Saad, Iterative Methods for Sparse
 * Linear Systems, 2nd ed., section 6.5 (GMRES with Givens rotations) and 9.3.2 (right
 * preconditioning).
 */
#include "lcp_subspace.h"

#include <math.h>
#include <string.h>

#include "lcp.h"
#include "vec3.h"

enum { SEPARATED = 0, SLIDING = 1, SLIDING2 = 2, STICKING = 3 };

#define RESTART 30        /* Krylov vectors kept between restarts of GMRES */
#define UPDATE_SHARE 0.5   /* a pass changes the contacts violated by at least this share of
                              the worst violation */
#define SUBSPACE_PASSES 8 /* active-set updates: solves a step at most */

/* the active set of one contact and its parametrisation */
typedef struct {
  int kind;
  int a, b;     /* SLIDING2: the two directions alpha lives on; SLIDING: a, the vertex
                   (-1: frictionless, or the iterate's alpha pattern kept) */
  double s[2];  /* SLIDING: lambda_T = lambda_n s (mu d_a, or the current ratio) */
} cdSubspaceContact;

size_t cd_lcpSubspaceWorkSize(const cdContactProblem *p, int m) {
  /* x, r, w, lambda (3 ncon each), the Krylov basis (RESTART + 1 vectors of 3 ncon), the
   * inverse diagonal blocks (9 ncon); the Hessenberg matrix, its rotations and right-hand
   * side; a candidate z (ncon (m + 2)); the scratch of the products (cd_lcpDelassusMul); the
   * contacts' active sets */
  size_t ncon = (size_t)p->ncon, n3 = 3 * ncon;
  return (4 * n3 + (RESTART + 1) * n3 + 9 * ncon) * sizeof(double) +
         ((RESTART + 1) * RESTART + 3 * (RESTART + 1)) * sizeof(double) + (size_t)cd_lcpSize(p->ncon, m) * sizeof(double) +
         cd_lcpDelassusScratch(p) * sizeof(double) + ncon * sizeof(cdSubspaceContact);
}

/* the impulse lambda_i = Q_i x_i of the free components x_i (3 slots a contact) */
static void expandOne(const cdSubspaceContact *c, double mu, const double *D, const double *xi, double *li) {
  switch (c->kind) {
  case STICKING: li[0] = xi[0], li[1] = xi[1], li[2] = xi[2]; break;
  case SLIDING: li[0] = xi[0], li[1] = xi[0] * c->s[0], li[2] = xi[0] * c->s[1]; break;
  case SLIDING2: {
    const double *da = &D[2 * c->a], *db = &D[2 * c->b];
    li[0] = (xi[1] + xi[2]) / mu;
    li[1] = xi[1] * da[0] + xi[2] * db[0];
    li[2] = xi[1] * da[1] + xi[2] * db[1];
    break;
  }
  default: li[0] = li[1] = li[2] = 0.0;
  }
}

/* the equations y_i = R_i u_i of a contact's velocity u_i, in the slots of its unknowns */
static void restrictOne(const cdSubspaceContact *c, const double *D, const double *ui, double *yi) {
  switch (c->kind) {
  case STICKING: yi[0] = ui[0], yi[1] = ui[1], yi[2] = ui[2]; break;
  case SLIDING: yi[0] = ui[0], yi[1] = yi[2] = 0.0; break;
  case SLIDING2: {
    const double *da = &D[2 * c->a], *db = &D[2 * c->b];
    double t = (da[0] - db[0]) * ui[1] + (da[1] - db[1]) * ui[2];
    yi[0] = 0.0, yi[1] = ui[0], yi[2] = t;
    break;
  }
  default: yi[0] = yi[1] = yi[2] = 0.0;
  }
}

/* y = R G Q x (lam: scratch; wb: cd_lcpDelassusMul's) */
static void apply(const cdContactProblem *p, const cdSubspaceContact *con, const double *D, const double *x, double *lam,
                  double *wb, double *y) {
  int nc = p->ncon;
  for (int i = 0; i < nc; i++) expandOne(&con[i], p->mu[i], D, &x[3 * i], &lam[3 * i]);
  cd_lcpDelassusMul(p, lam, y, wb);
  for (int i = 0; i < nc; i++) {
    double u[3] = {y[3 * i], y[3 * i + 1], y[3 * i + 2]};
    restrictOne(&con[i], D, u, &y[3 * i]);
  }
}

/* r = -R (G Q x + g) */
static void residual(const cdContactProblem *p, const cdSubspaceContact *con, const double *D, const double *x,
                     double *lam, double *wb, double *r) {
  apply(p, con, D, x, lam, wb, r);
  for (int i = 0; i < p->ncon; i++) {
    double rg[3];
    restrictOne(&con[i], D, &p->g[3 * i], rg);
    for (int t = 0; t < 3; t++) r[3 * i + t] = -(r[3 * i + t] + rg[t]);
  }
}

/* the inverse of each contact's block R_i G_ii Q_i (row-major 3x3 on its slots, zero
 * elsewhere), formed column by column through expandOne / restrictOne; where the block is
 * singular (or, for a sliding contact, not positive: its friction turns its own normal
 * velocity back) the inverse of the diagonal of G_ii on the same slots */
static void preconditioner(const cdContactProblem *p, const cdSubspaceContact *con, const double *D, double *Pinv) {
  const cdBlockMatrix *G = &p->G;
  for (int i = 0; i < G->nblock; i++) {
    const double *W = &G->val[9 * (size_t)G->diag[i]];
    double *B = &Pinv[9 * (size_t)i], K[9] = {0};
    memset(B, 0, 9 * sizeof *B);
    for (int c = 0; c < 3; c++) {
      double e[3] = {0, 0, 0}, l[3], u[3], y[3];
      e[c] = 1.0;
      expandOne(&con[i], p->mu[i], D, e, l);
      for (int r = 0; r < 3; r++) u[r] = W[3 * r] * l[0] + W[3 * r + 1] * l[1] + W[3 * r + 2] * l[2];
      restrictOne(&con[i], D, u, y);
      for (int r = 0; r < 3; r++) K[3 * r + c] = y[r];
    }
    int kind = con[i].kind;
    double tr = W[0] + W[4] + W[8];
    if (kind == SLIDING) {
      B[0] = K[0] > 0.1 * W[0] ? 1.0 / K[0] : W[0] > 0.0 ? 1.0 / W[0] : 0.0;
    } else if (kind == SLIDING2) {
      double det = K[4] * K[8] - K[5] * K[7], sc = fabs(K[4] * K[8]) + fabs(K[5] * K[7]);
      if (sc > 0.0 && fabs(det) > 1e-12 * sc) {
        B[4] = K[8] / det, B[5] = -K[5] / det, B[7] = -K[7] / det, B[8] = K[4] / det;
      } else {
        B[4] = K[4] != 0.0 ? 1.0 / K[4] : 0.0;
        B[8] = K[8] != 0.0 ? 1.0 / K[8] : 0.0;
      }
    } else if (kind == STICKING) {
      double C[9], det = cd_m3adjugate(C, W);
      if (tr > 0.0 && fabs(det) > 1e-12 * tr * tr * tr) {
        for (int t = 0; t < 9; t++) B[t] = C[t] / det;
      } else {
        for (int t = 0; t < 3; t++) B[4 * t] = W[4 * t] > 0.0 ? 1.0 / W[4 * t] : 0.0;
      }
    }
  }
}

static void precondition(const double *Pinv, int nc, const double *v, double *out) {
  for (int i = 0; i < nc; i++) {
    const double *B = &Pinv[9 * (size_t)i], *vi = &v[3 * i];
    double *oi = &out[3 * i];
    oi[0] = B[0] * vi[0] + B[1] * vi[1] + B[2] * vi[2];
    oi[1] = B[3] * vi[0] + B[4] * vi[1] + B[5] * vi[2];
    oi[2] = B[6] * vi[0] + B[7] * vi[1] + B[8] * vi[2];
  }
}

/* zout = the LCP iterate of x projected onto the LCP's cones: lambda_n >= 0, friction in
 * the polygon; beta the slip speed where the friction is on it (lam, w: scratch) */
static void project(const cdContactProblem *p, int m, const double *D, const cdSubspaceContact *con, const double *z,
                    const double *x, double *zout, double *lam, double *wb, double *w) {
  int nc = p->ncon;
  memset(zout, 0, (size_t)cd_lcpSize(nc, m) * sizeof *zout);
  for (int i = 0; i < nc; i++) {
    const cdSubspaceContact *c = &con[i];
    const double *xi = &x[3 * i];
    double *alpha = &zout[nc + m * i], mu = p->mu[i];
    if (c->kind == SLIDING2) {
      alpha[c->a] = fmax(0.0, xi[1]);
      alpha[c->b] = fmax(0.0, xi[2]);
      zout[i] = (alpha[c->a] + alpha[c->b]) / mu;
      continue;
    }
    double ln = fmax(0.0, xi[0]);
    if (!(ln > 0.0) || c->kind == SEPARATED) continue;
    zout[i] = ln;
    if (c->kind == SLIDING) { /* at vertex a, or with the iterate's alpha pattern scaled */
      if (c->a >= 0) {
        alpha[c->a] = mu * ln;
      } else {
        double scale = ln / z[i];
        for (int l = 0; l < m; l++) alpha[l] = scale * z[nc + m * i + l];
      }
      continue;
    }
    cd_lcpAlphaFromTangent(m, D, &xi[1], alpha);
    double sum = 0.0, cap = mu * ln;
    for (int l = 0; l < m; l++) sum += alpha[l];
    if (sum > cap)
      for (int l = 0; l < m; l++) alpha[l] *= cap / sum;
  }
  /* beta: zero where the friction is inside the polygon (complementary to mu lambda_n -
   * e^T alpha > 0), else the slip speed at the new velocities */
  cd_lcpLambdaFromZ(nc, m, D, zout, lam);
  cd_lcpDelassusMul(p, lam, w, wb);
  for (int i = 0; i < nc; i++) {
    double u1 = w[3 * i + 1] + p->g[3 * i + 1], u2 = w[3 * i + 2] + p->g[3 * i + 2], beta = 0.0, sum = 0.0;
    for (int l = 0; l < m; l++) sum += zout[nc + m * i + l];
    if (zout[i] > 0.0 && sum < p->mu[i] * zout[i] * (1.0 - 1e-9)) {
      zout[nc + nc * m + i] = 0.0;
      continue;
    }
    for (int l = 0; l < m; l++) beta = fmax(beta, -(D[2 * l] * u1 + D[2 * l + 1] * u2));
    zout[nc + nc * m + i] = beta;
  }
}

/* a . b in four partial sums: independent chains of adds, which the Gram-Schmidt of GMRES
 * (most of a subspace step on the 55-cube pyramid, callgrind) runs at several times the speed
 * of one chain */
static double dot(const double *a, const double *b, int n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    s0 += a[k] * b[k], s1 += a[k + 1] * b[k + 1];
    s2 += a[k + 2] * b[k + 2], s3 += a[k + 3] * b[k + 3];
  }
  for (; k < n; k++) s0 += a[k] * b[k];
  return (s0 + s1) + (s2 + s3);
}

/* y -= c x, four entries a pass (the other half of the Gram-Schmidt) */
static void subScaled(double *restrict y, double c, const double *restrict x, int n) {
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    y[k] -= c * x[k], y[k + 1] -= c * x[k + 1];
    y[k + 2] -= c * x[k + 2], y[k + 3] -= c * x[k + 3];
  }
  for (; k < n; k++) y[k] -= c * x[k];
}

/* GMRES workspace: the Krylov basis, the Hessenberg matrix, its rotations and right-hand
 * side, and three vectors of 3 ncon */
typedef struct {
  double *r, *w, *lam, *V, *H, *cs, *sn, *gv, *wb;
} cdGmresWork;

/* restarted GMRES on R G Q x = -R g from x, right-preconditioned by Pinv (the residual it
 * minimises is the true one): at most max_iter products, stopping at ||r||_2 <= tolerance
 * or when a restart gains nothing. Returns the products taken. */
static int gmres(const cdContactProblem *p, const cdSubspaceContact *con, const double *D, const double *Pinv,
                 double *x, int max_iter, double tolerance, const cdGmresWork *g) {
  int nc = p->ncon, n3 = 3 * nc, iters = 0;
  double *r = g->r, *w = g->w, *lam = g->lam, *V = g->V, *H = g->H, *cs = g->cs, *sn = g->sn, *gv = g->gv, *wb = g->wb;
  residual(p, con, D, x, lam, wb, r);
  double rn = sqrt(dot(r, r, n3));
  while (iters < max_iter && rn > tolerance) {
    for (int k = 0; k < n3; k++) V[k] = r[k] / rn;
    memset(gv, 0, (RESTART + 1) * sizeof *gv);
    gv[0] = rn;
    int j = 0;
    for (; j < RESTART && iters < max_iter; j++) {
      double *vj = &V[(size_t)j * (size_t)n3], *vn = vj + n3, *h = &H[(size_t)j * (RESTART + 1)];
      precondition(Pinv, nc, vj, w);
      apply(p, con, D, w, lam, wb, vn);
      iters++;
      for (int i = 0; i <= j; i++) { /* modified Gram-Schmidt */
        const double *vi = &V[(size_t)i * (size_t)n3];
        h[i] = dot(vn, vi, n3);
        subScaled(vn, h[i], vi, n3);
      }
      h[j + 1] = sqrt(dot(vn, vn, n3));
      if (h[j + 1] > 0.0)
        for (int k = 0; k < n3; k++) vn[k] /= h[j + 1];
      for (int i = 0; i < j; i++) { /* the earlier rotations, then a new one for row j + 1 */
        double t = cs[i] * h[i] + sn[i] * h[i + 1];
        h[i + 1] = -sn[i] * h[i] + cs[i] * h[i + 1];
        h[i] = t;
      }
      double den = hypot(h[j], h[j + 1]);
      cs[j] = den > 0.0 ? h[j] / den : 1.0;
      sn[j] = den > 0.0 ? h[j + 1] / den : 0.0;
      h[j] = den;
      h[j + 1] = 0.0;
      gv[j + 1] = -sn[j] * gv[j];
      gv[j] *= cs[j];
      if (!(den > 0.0) || fabs(gv[j + 1]) <= tolerance) {
        j++;
        break;
      }
    }
    /* y = H^-1 g (upper triangular j x j), x += M^-1 V y */
    for (int i = j - 1; i >= 0; i--) {
      double t = gv[i];
      for (int l = i + 1; l < j; l++) t -= H[(size_t)l * (RESTART + 1) + i] * gv[l];
      double hii = H[(size_t)i * (RESTART + 1) + i];
      gv[i] = hii != 0.0 ? t / hii : 0.0;
    }
    memset(r, 0, (size_t)n3 * sizeof *r);
    for (int i = 0; i < j; i++) {
      const double *vi = &V[(size_t)i * (size_t)n3];
      for (int k = 0; k < n3; k++) r[k] += gv[i] * vi[k];
    }
    precondition(Pinv, nc, r, w);
    for (int k = 0; k < n3; k++) x[k] += w[k];
    residual(p, con, D, x, lam, wb, r);
    double rnew = sqrt(dot(r, r, n3));
    if (!(rnew < rn)) break; /* stagnation (or a NaN): no further progress to expect */
    rn = rnew;
  }
  return iters;
}

/* the vertex contact i slides at: friction mu lambda_n d_a */
static void setVertex(cdSubspaceContact *c, double mu, const double *D, int a) {
  c->kind = SLIDING;
  c->a = a;
  c->s[0] = mu * D[2 * a];
  c->s[1] = mu * D[2 * a + 1];
}

/* one active-set update of contact i from the solution x_i of its equations, its impulse
 * li = Q_i x_i and velocity ui (a primal-dual active-set step: a multiplier of the wrong
 * sign leaves the set, a violated inequality enters it); x_i is carried over to the new
 * parametrisation. The violation *viol is in the residual's units (m/s: impulses times
 * wi = 1 / meff_i), and a velocity counts as nonzero beyond veps (m/s), so that the same
 * contacts change in any unit of mass. alpha: (m) scratch. Returns 1 when the active set
 * changed. */
static int updateContact(cdSubspaceContact *c, double mu, int m, const double *D, double wi, double veps, double *xi,
                         const double *li, const double *ui, double *alpha, double *viol) {
  const double eps = 1e-12;
  switch (c->kind) {
  case SEPARATED:
    if (!(ui[0] < -veps)) return 0; /* approaching: the contact closes */
    *viol = -ui[0];
    if (mu == 0.0) {
      c->kind = SLIDING, c->a = -1, c->s[0] = c->s[1] = 0.0;
    } else {
      c->kind = STICKING;
    }
    xi[0] = xi[1] = xi[2] = 0.0;
    return 1;
  case STICKING: {
    if (!(li[0] > 0.0)) {
      *viol = -wi * li[0];
      c->kind = SEPARATED;
      xi[0] = xi[1] = xi[2] = 0.0;
      return 1;
    }
    double sum = 0.0;
    cd_lcpAlphaFromTangent(m, D, &li[1], alpha);
    int a = -1, b = -1;
    for (int l = 0; l < m; l++) {
      sum += alpha[l];
      if (alpha[l] > 0.0) {
        if (a < 0) a = l; else b = l;
      }
    }
    if (!(sum > mu * li[0] * (1.0 + eps))) return 0;
    *viol = wi * (sum - mu * li[0]);
    /* friction outside the polygon: it slides on the edge (or vertex) its sector meets */
    double f = mu * li[0] / sum;
    if (b < 0) {
      setVertex(c, mu, D, a);
      xi[0] = li[0], xi[1] = xi[2] = 0.0;
    } else {
      if (b != a + 1) { /* the sector (m - 1, 0) */
        int t = a;
        a = b, b = t;
      }
      c->kind = SLIDING2, c->a = a, c->b = b;
      xi[0] = 0.0, xi[1] = f * alpha[a], xi[2] = f * alpha[b];
    }
    return 1;
  }
  case SLIDING2: {
    const double *da = &D[2 * c->a];
    double beta = -(da[0] * ui[1] + da[1] * ui[2]);
    if (!(xi[1] + xi[2] > 0.0)) {
      *viol = -wi * (xi[1] + xi[2]) / mu;
      c->kind = SEPARATED;
      xi[0] = xi[1] = xi[2] = 0.0;
      return 1;
    }
    if (beta < -veps) { /* the slip turned against the friction: it sticks */
      *viol = -beta;
      c->kind = STICKING;
      xi[0] = li[0], xi[1] = li[1], xi[2] = li[2];
      return 1;
    }
    if (xi[1] < 0.0 || xi[2] < 0.0) { /* past a vertex of the edge */
      *viol = -wi * fmin(xi[1], xi[2]);
      int v = xi[1] < 0.0 ? c->b : c->a;
      setVertex(c, mu, D, v);
      xi[0] = (xi[1] + xi[2]) / mu, xi[1] = xi[2] = 0.0;
      return 1;
    }
    return 0;
  }
  case SLIDING: {
    if (!(xi[0] > 0.0)) {
      *viol = -wi * xi[0];
      c->kind = SEPARATED;
      xi[0] = xi[1] = xi[2] = 0.0;
      return 1;
    }
    if (c->a < 0) return 0; /* frictionless, or a pattern the sweeps left: kept */
    double best = -INFINITY, here = 0.0;
    int k = c->a;
    for (int l = 0; l < m; l++) {
      double v = -(D[2 * l] * ui[1] + D[2 * l + 1] * ui[2]);
      if (l == c->a) here = v;
      if (v > best) best = v, k = l;
    }
    if (best <= 0.0) { /* no slip opposes any direction: it sticks */
      *viol = -here;
      c->kind = STICKING;
      xi[0] = li[0], xi[1] = li[1], xi[2] = li[2];
      return 1;
    }
    if (!(best > here + veps)) return 0;
    *viol = best - here;
    /* the slip points past the vertex: it slides on the edge towards the more opposed
     * neighbour (or, further round, at that vertex) */
    int a = c->a, up = (a + 1) % m, down = (a + m - 1) % m;
    if (k != up && k != down) {
      setVertex(c, mu, D, k);
      return 1;
    }
    double fa = mu * xi[0];
    c->kind = SLIDING2;
    if (k == up) {
      c->a = a, c->b = up;
      xi[0] = 0.0, xi[1] = fa, xi[2] = 0.0;
    } else {
      c->a = down, c->b = a;
      xi[0] = 0.0, xi[1] = 0.0, xi[2] = fa;
    }
    return 1;
  }
  }
  return 0;
}

void cd_lcpSubspaceStep(const cdContactProblem *p, int m, const double *D, const double *z, double *zout,
                        int max_iter, double tolerance, void *work, cdLcpSubspaceStats *stats) {
  int nc = p->ncon, n3 = 3 * nc, n = cd_lcpSize(nc, m);
  double *x = work, *r = x + n3, *w = r + n3, *lam = w + n3, *V = lam + n3;
  double *Pinv = V + (size_t)(RESTART + 1) * (size_t)n3;
  double *H = Pinv + 9 * (size_t)nc, *cs = H + (RESTART + 1) * RESTART, *sn = cs + RESTART + 1, *gv = sn + RESTART + 1;
  double *zc = gv + RESTART + 1, *wb = cd_lcpDelassusScratch(p) ? zc + n : NULL;
  cdSubspaceContact *con = (cdSubspaceContact *)(zc + n + cd_lcpDelassusScratch(p));
  cdGmresWork gw = {r, w, lam, V, H, cs, sn, gv, wb};
  cdLcpSubspaceStats st = {0};

  /* the active set, and x = the free components of the iterate */
  cd_lcpLambdaFromZ(nc, m, D, z, lam);
  for (int i = 0; i < nc; i++) {
    double ln = z[i], sum = 0.0, beta = z[nc + nc * m + i], mu = p->mu[i];
    const double *alpha = &z[nc + m * i];
    cdSubspaceContact *c = &con[i];
    double *xi = &x[3 * i];
    int npos = 0, first = -1, second = -1;
    for (int l = 0; l < m; l++) {
      sum += alpha[l];
      if (alpha[l] > 0.0) {
        npos++;
        if (first < 0) first = l; else second = l;
      }
    }
    xi[0] = xi[1] = xi[2] = 0.0;
    c->kind = !(ln > 0.0) ? SEPARATED : (mu == 0.0 || (sum >= mu * ln * (1.0 - 1e-9) && beta > 0.0)) ? SLIDING : STICKING;
    if (c->kind == SLIDING && npos == 2 && (second == first + 1 || (first == 0 && second == m - 1))) {
      c->kind = SLIDING2;
      c->a = second == first + 1 ? first : second;
      c->b = (c->a + 1) % m;
      xi[1] = alpha[c->a], xi[2] = alpha[c->b];
    } else if (c->kind == SLIDING) {
      c->a = npos == 1 && mu > 0.0 ? first : -1;
      c->s[0] = lam[3 * i + 1] / ln, c->s[1] = lam[3 * i + 2] / ln;
      xi[0] = ln;
    } else if (c->kind == STICKING) {
      xi[0] = lam[3 * i], xi[1] = lam[3 * i + 1], xi[2] = lam[3 * i + 2];
    }
    st.sticking += c->kind == STICKING;
    st.sliding += c->kind == SLIDING || c->kind == SLIDING2;
  }

  /* passes: solve on the active set, keep the best projected candidate, update the set */
  double best = INFINITY;
  for (int pass = 0; pass < SUBSPACE_PASSES; pass++) {
    preconditioner(p, con, D, Pinv);
    st.iterations += gmres(p, con, D, Pinv, x, max_iter, tolerance, &gw);
    st.passes++;
    project(p, m, D, con, z, x, zc, lam, wb, w);
    double res = cd_lcpResidual(p, m, D, zc, V);
    if (res < best) { /* (a NaN is never kept) */
      memcpy(zout, zc, (size_t)n * sizeof *zout);
      best = res;
    }
    if (pass + 1 == SUBSPACE_PASSES) break;
    for (int i = 0; i < nc; i++) expandOne(&con[i], p->mu[i], D, &x[3 * i], &lam[3 * i]);
    cd_lcpDelassusMul(p, lam, w, wb);
    /* the violations first (on copies), then the update of the contacts within a factor
     * UPDATE_SHARE of the largest: changing every violator at once cycles, since one
     * contact's change moves its neighbours' velocities */
    double *viol = zc, *alpha = zc + nc, vmax = 0.0, veps = 1e-12 * cd_contactProblemVelocityScale(p);
    for (int i = 0; i < nc; i++) {
      double u[3] = {w[3 * i] + p->g[3 * i], w[3 * i + 1] + p->g[3 * i + 1], w[3 * i + 2] + p->g[3 * i + 2]};
      double wi = 1.0 / cd_contactProblemMeff(p, i);
      cdSubspaceContact c = con[i];
      double xc[3] = {x[3 * i], x[3 * i + 1], x[3 * i + 2]};
      viol[i] = 0.0;
      if (updateContact(&c, p->mu[i], m, D, wi, veps, xc, &lam[3 * i], u, alpha, &viol[i])) vmax = fmax(vmax, viol[i]);
    }
    if (!(vmax > 0.0)) break;
    for (int i = 0; i < nc; i++) {
      if (!(viol[i] >= UPDATE_SHARE * vmax)) continue;
      double u[3] = {w[3 * i] + p->g[3 * i], w[3 * i + 1] + p->g[3 * i + 1], w[3 * i + 2] + p->g[3 * i + 2]}, v;
      double wi = 1.0 / cd_contactProblemMeff(p, i);
      updateContact(&con[i], p->mu[i], m, D, wi, veps, &x[3 * i], &lam[3 * i], u, alpha, &v);
    }
  }
  if (best == INFINITY) memcpy(zout, z, (size_t)n * sizeof *zout);
  st.residual = best == INFINITY ? cd_lcpResidual(p, m, D, zout, V) : best;
  if (stats) *stats = st;
}
