/* ncp_local.c: the exact Coulomb problem of one contact, solved by enumerating its cases.
 *
 * Problem: given W (3x3, the contact's diagonal Delassus block, row-major, components
 * (normal, t1, t2)), b (3, the rest of its contact velocity) and mu >= 0, find x with
 *     K_mu ∋ x ⟂ ĉ ∈ K*_mu,   c̄ = W x + b,   ĉ = c̄ + (mu ||c̄_T||, 0, 0).
 * Its solutions are exactly of three kinds (ncp.h: ĉ ∈ K* reduces to c̄_N >= 0, and ĉ ⟂ x on
 * the boundary of K forces c̄_N = 0 with c̄_T along -x_T):
 *  1. take-off: x = 0, valid when b_N >= 0;
 *  2. stick: c̄ = 0, x = -W^-1 b, valid when it lies in K;
 *  3. slide: x = x_N (1, -mu d) with d = (cos θ, sin θ) the slip direction, c̄_N = 0 and
 *     c̄_T = a d with a > 0. The normal row gives x_N = -b_N / s(θ), s = W_NN - mu W_NT d
 *     (valid when s > 0), and c̄_T parallel to d is one scalar equation in θ:
 *         F(θ) = v × d = 0,   v = -b_N (W_TN - mu W_TT d) + s b_T  (= s c̄_T),
 *     with a = v·d / s > 0 (× the 2-D cross product). F is a trigonometric polynomial of
 *     degree 2 in θ (v is linear in d), so it has at most four roots: the same equation
 *     Siconos's one-contact enumerative solver writes as a quartic.
 * The cases are tried in that order. Slide roots: Newton on F from the direction of the start
 * value's friction (or, without one, the slip the contact would have without friction); when
 * that fails or lands on an invalid root, every root is bracketed by sampling F and F' at 48
 * angles (an interval where F' changes sign is split at F's extremum, so that two roots
 * closer than the sampling are bracketed too) and refined by safeguarded Newton, and the
 * valid root nearest the start value is taken.
 * With mu = 0 the problem is the one-variable LCP x_N = max(0, -b_N / W_NN).
 *
 * Several cases can be valid at once (a coupled W with a large mu: ncp.h on uniqueness); the
 * order above then decides. Roots can still be missed where F has two extrema between two
 * samples (all four roots within 2π/48: a near-degenerate contact); if no case holds, projected fixed-point
 * iterations on the De Saxcé map, x <- Proj_K(x - ĉ(x) / W_NN), from the best candidate make
 * the last attempt, and the function reports the failure (its caller counts it).
 */
#include <math.h>
#include <string.h>

#include "cone.h"
#include "ncp.h"

#define LOCAL_SAMPLES 48
#define LOCAL_NEWTON_MAXIT 30
#define LOCAL_PROJ_MAXIT 200

typedef struct {
  const double *W, *b;
  double mu;
} localProblem;

/* F(θ) and F'(θ) (see the opening comment); also s(θ) and v·d, which decide validity */
static void slideEval(const localProblem *lp, double th, double *F, double *dF, double *s, double *vd) {
  const double *W = lp->W, *b = lp->b;
  double mu = lp->mu, d1 = cos(th), d2 = sin(th), e1 = -d2, e2 = d1;
  double sv = W[0] - mu * (W[1] * d1 + W[2] * d2), ds = -mu * (W[1] * e1 + W[2] * e2);
  double u1 = W[3] - mu * (W[4] * d1 + W[5] * d2), u2 = W[6] - mu * (W[7] * d1 + W[8] * d2);
  double du1 = -mu * (W[4] * e1 + W[5] * e2), du2 = -mu * (W[7] * e1 + W[8] * e2);
  double v1 = -b[0] * u1 + sv * b[1], v2 = -b[0] * u2 + sv * b[2];
  double dv1 = -b[0] * du1 + ds * b[1], dv2 = -b[0] * du2 + ds * b[2];
  *F = v1 * d2 - v2 * d1;
  /* (v × d)' = v' × d + v × d', and v × d' = v·d for d' = (-d2, d1) */
  *vd = v1 * d1 + v2 * d2;
  *dF = dv1 * d2 - dv2 * d1 + *vd;
  *s = sv;
}

/* the slide solution of root th when it is valid (s > 0, a > 0); 0 when valid */
static int slideAt(const localProblem *lp, double th, double x[3]) {
  double F, dF, s, vd;
  slideEval(lp, th, &F, &dF, &s, &vd);
  if (!(s > 0.0) || !(vd > 0.0)) return -1;
  double xn = -lp->b[0] / s;
  x[0] = xn;
  x[1] = -lp->mu * xn * cos(th);
  x[2] = -lp->mu * xn * sin(th);
  return isfinite(xn) ? 0 : -1;
}

static double dist2(const double a[3], const double b[3]) {
  double d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
  return d0 * d0 + d1 * d1 + d2 * d2;
}

/* Newton on F from th; the root in *th, 0 when it converged */
static int slideNewton(const localProblem *lp, double *th) {
  double t = *th;
  for (int it = 0; it < LOCAL_NEWTON_MAXIT; it++) {
    double F, dF, s, vd;
    slideEval(lp, t, &F, &dF, &s, &vd);
    if (F == 0.0) break;
    if (!(fabs(dF) > 0.0) || !isfinite(dF)) return -1;
    double step = F / dF;
    if (step > 0.5) step = 0.5; /* at most a fraction of the spacing of F's roots */
    if (step < -0.5) step = -0.5;
    t -= step;
    if (fabs(step) <= 1e-15 * (1.0 + fabs(t))) break;
    if (it == LOCAL_NEWTON_MAXIT - 1) return -1;
  }
  *th = t;
  return 0;
}

/* the root of F in [lo, hi] (F(lo) F(hi) <= 0) by Newton safeguarded with bisection */
static double slideBracketed(const localProblem *lp, double lo, double hi, double flo) {
  double t = 0.5 * (lo + hi);
  for (int it = 0; it < 100 && hi - lo > 1e-15 * (1.0 + fabs(t)); it++) {
    double F, dF, s, vd;
    slideEval(lp, t, &F, &dF, &s, &vd);
    if (F == 0.0) return t;
    if ((F < 0.0) == (flo < 0.0)) {
      lo = t;
      flo = F;
    } else {
      hi = t;
    }
    double tn = dF != 0.0 ? t - F / dF : lo;
    t = tn > lo && tn < hi ? tn : 0.5 * (lo + hi);
  }
  return t;
}

/* the extremum of F in [lo, hi] where F' changes sign (dlo = F'(lo)), by bisection on F' */
static double slideExtremum(const localProblem *lp, double lo, double hi, double dlo) {
  for (int it = 0; it < 60; it++) {
    double t = 0.5 * (lo + hi), F, dF, s, vd;
    slideEval(lp, t, &F, &dF, &s, &vd);
    if ((dF < 0.0) == (dlo < 0.0)) {
      lo = t;
      dlo = dF;
    } else {
      hi = t;
    }
  }
  return 0.5 * (lo + hi);
}

/* the slide root bracketed in [a, b] when F changes sign there: kept in x when it is valid
 * and nearer x0 than *best */
static void slideTry(const localProblem *lp, double a, double b, double Fa, double Fb, const double x0[3],
                     double *best, double x[3]) {
  if (Fa != 0.0 && Fb != 0.0 && (Fa < 0.0) == (Fb < 0.0)) return;
  double r = Fa == 0.0 ? a : slideBracketed(lp, a, b, Fa), cand[3];
  if (slideAt(lp, r, cand) == 0 && dist2(cand, x0) < *best) {
    *best = dist2(cand, x0);
    memcpy(x, cand, sizeof cand);
  }
}

/* the one-contact natural map ||x - Proj_K(x - ĉ / W_NN)|| (impulse units) */
static double localResidual(const localProblem *lp, const double x[3]) {
  const double *W = lp->W, *b = lp->b;
  double c[3], a[3], pa[3];
  for (int r = 0; r < 3; r++) c[r] = W[3 * r] * x[0] + W[3 * r + 1] * x[1] + W[3 * r + 2] * x[2] + b[r];
  c[0] += lp->mu * hypot(c[1], c[2]);
  double rho = W[0] > 0.0 ? 1.0 / W[0] : 1.0;
  for (int r = 0; r < 3; r++) a[r] = x[r] - rho * c[r];
  cd_coneProject(lp->mu, a, pa);
  double r = sqrt(dist2(x, pa));
  return isfinite(r) ? r : INFINITY;
}

/* W y = -b by Gaussian elimination with partial pivoting; -1 when W is singular to working
 * precision (a pivot below 1e-13 of the largest entry) */
static int stickSolve(const double W[9], const double b[3], double y[3]) {
  double A[3][4], amax = 0.0;
  for (int r = 0; r < 3; r++) {
    for (int c = 0; c < 3; c++) {
      A[r][c] = W[3 * r + c];
      amax = fmax(amax, fabs(A[r][c]));
    }
    A[r][3] = -b[r];
  }
  if (!(amax > 0.0)) return -1;
  for (int k = 0; k < 3; k++) {
    int piv = k;
    for (int r = k + 1; r < 3; r++)
      if (fabs(A[r][k]) > fabs(A[piv][k])) piv = r;
    if (!(fabs(A[piv][k]) > 1e-13 * amax)) return -1;
    if (piv != k)
      for (int c = 0; c < 4; c++) {
        double t = A[k][c];
        A[k][c] = A[piv][c];
        A[piv][c] = t;
      }
    for (int r = k + 1; r < 3; r++) {
      double f = A[r][k] / A[k][k];
      for (int c = k; c < 4; c++) A[r][c] -= f * A[k][c];
    }
  }
  for (int k = 2; k >= 0; k--) {
    double s = A[k][3];
    for (int c = k + 1; c < 3; c++) s -= A[k][c] * y[c];
    y[k] = s / A[k][k];
  }
  return isfinite(y[0] + y[1] + y[2]) ? 0 : -1;
}

int cd_ncpLocalSolve(const double W[9], const double b[3], double mu, double x[3]) {
  const double x0[3] = {x[0], x[1], x[2]};
  localProblem lp = {W, b, mu};
  /* 1. take-off */
  if (b[0] >= 0.0) {
    x[0] = x[1] = x[2] = 0.0;
    return 0;
  }
  if (mu == 0.0) {
    x[1] = x[2] = 0.0;
    x[0] = W[0] > 0.0 ? -b[0] / W[0] : 0.0;
    return W[0] > 0.0 ? 0 : 1;
  }
  /* 2. stick */
  double y[3];
  int haveStick = stickSolve(W, b, y) == 0;
  if (haveStick && y[0] > 0.0 && hypot(y[1], y[2]) <= mu * y[0]) {
    memcpy(x, y, sizeof y);
    return 0;
  }
  /* 3. slide: Newton from the start's friction direction (d = -x_T / ||x_T||), or from the
   * slip without friction, c̄_T at x = (-b_N / W_NN, 0, 0) */
  double th0;
  if (hypot(x0[1], x0[2]) > 0.0) {
    th0 = atan2(-x0[2], -x0[1]);
  } else {
    double xn = W[0] > 0.0 ? -b[0] / W[0] : 0.0;
    th0 = atan2(W[6] * xn + b[2], W[3] * xn + b[1]);
  }
  double th = th0, cand[3];
  if (slideNewton(&lp, &th) == 0 && slideAt(&lp, th, cand) == 0) {
    memcpy(x, cand, sizeof cand);
    return 0;
  }
  /* every root, bracketed by samples of F; a sample interval where F' changes sign holds an
   * extremum of F, which splits it, so two roots in one interval (a near-tangency) are
   * bracketed too; the valid root nearest the start */
  double best = INFINITY, Fs[LOCAL_SAMPLES + 1], dFs[LOCAL_SAMPLES + 1], ths[LOCAL_SAMPLES + 1];
  for (int k = 0; k <= LOCAL_SAMPLES; k++) {
    double s, vd;
    ths[k] = th0 + 2.0 * M_PI * (double)k / LOCAL_SAMPLES;
    slideEval(&lp, ths[k], &Fs[k], &dFs[k], &s, &vd);
  }
  for (int k = 0; k < LOCAL_SAMPLES; k++) {
    if ((dFs[k] < 0.0) != (dFs[k + 1] < 0.0)) {
      double tm = slideExtremum(&lp, ths[k], ths[k + 1], dFs[k]), Fm, dFm, s, vd;
      slideEval(&lp, tm, &Fm, &dFm, &s, &vd);
      slideTry(&lp, ths[k], tm, Fs[k], Fm, x0, &best, x);
      slideTry(&lp, tm, ths[k + 1], Fm, Fs[k + 1], x0, &best, x);
    } else {
      slideTry(&lp, ths[k], ths[k + 1], Fs[k], Fs[k + 1], x0, &best, x);
    }
  }
  if (best < INFINITY) return 0;
  /* no case held: projected fixed point from the best of the start and the stick point */
  double cur[3] = {x0[0], x0[1], x0[2]}, rbest = localResidual(&lp, cur);
  memcpy(x, cur, sizeof cur);
  if (haveStick) {
    cd_coneProject(mu, y, cur);
    double r = localResidual(&lp, cur);
    if (r < rbest) {
      rbest = r;
      memcpy(x, cur, sizeof cur);
    }
  }
  memcpy(cur, x, sizeof cur);
  double rho = W[0] > 0.0 ? 1.0 / W[0] : 1.0;
  for (int it = 0; it < LOCAL_PROJ_MAXIT && rbest > 0.0; it++) {
    double c[3], a[3];
    for (int r = 0; r < 3; r++) c[r] = W[3 * r] * cur[0] + W[3 * r + 1] * cur[1] + W[3 * r + 2] * cur[2] + b[r];
    c[0] += mu * hypot(c[1], c[2]);
    for (int r = 0; r < 3; r++) a[r] = cur[r] - rho * c[r];
    cd_coneProject(mu, a, cur);
    double r = localResidual(&lp, cur);
    if (r < rbest) {
      rbest = r;
      memcpy(x, cur, sizeof cur);
    }
  }
  /* exact to round-off: the residual of the size of the data's last digits */
  double scale = rho * (fabs(b[0]) + fabs(b[1]) + fabs(b[2])) + fabs(x[0]) + fabs(x[1]) + fabs(x[2]);
  return rbest <= 1e-13 * scale ? 0 : 1;
}
