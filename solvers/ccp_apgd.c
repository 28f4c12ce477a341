/* ccp_apgd.c: the CCP by Nesterov's accelerated projected gradient (APGD).
 *
 * Problem (seed 001, the dual): unknowns the contact impulses lambda (3 ncon, N s, per contact
 * (normal, t1, t2)),
 *     min f(lambda) = 1/2 lambda^T G lambda + g^T lambda   s.t.  lambda_i ∈ K_mu_i,
 * whose KKT conditions are the CCP  K ∋ lambda ⟂ c̄ = G lambda + g ∈ K*  (c̄ in m/s, the
 * stabilised post-step contact velocity). G = J M^-1 J^T is symmetric PSD, so f is convex.
 *
 * Algorithm (Mazhar, Heyn, Negrut & Tasora, "Using Nesterov's method to accelerate multibody
 * dynamics with friction and contact", ACM TOG 34(3), 2015, Algorithm APGD):
 *   gamma_0 = Proj_K(warm start), y_0 = gamma_0, theta_0 = 1, L_0 from power iterations on G;
 *   repeat:
 *     gamma_{k+1} = Proj_K(y_k - (G y_k + g) / L_k), and while the sufficient decrease test
 *       f(gamma_{k+1}) <= f(y_k) + grad_k^T (gamma_{k+1} - y_k) + L_k/2 ||gamma_{k+1} - y_k||^2
 *     fails, L_k <- 2 L_k and project again;
 *     theta_{k+1} = (-theta_k^2 + theta_k sqrt(theta_k^2 + 4)) / 2,
 *     beta_{k+1} = theta_k (1 - theta_k) / (theta_k^2 + theta_{k+1}),
 *     y_{k+1} = gamma_{k+1} + beta_{k+1} (gamma_{k+1} - gamma_k);
 *     restart (y_{k+1} = gamma_{k+1}, theta_{k+1} = 1) when grad_k^T (gamma_{k+1} - gamma_k) > 0,
 *       i.e. the step runs uphill along the gradient;
 *     L_{k+1} = 0.9 L_k;
 *   return the iterate with the smallest shared residual (cone.h).
 * The sufficient decrease test is evaluated in its exact quadratic form 1/2 d^T G d <=
 * L/2 ||d||^2 (d = gamma_{k+1} - y_k), which needs no value of f.
 * G y is never formed by its own product: y is a linear combination of two iterates whose G
 * products are known, so each trial step costs one product with G (O(nnz G)).
 * The residual here is the natural map of cone.h rather than the paper's projected-gradient
 * measure, so that every CCP solver stops by the same number.
 *
 * What an iteration costs (REVIEW §3.2 measured the full residual every iteration at 26% of the
 * time, and 10 power iterations a step): the full residual (three projections' worth a
 * contact) is evaluated every APGD_CHECK iterations, and in between only when a bound from the
 * iteration's own numbers says the point may have converged. The step d = gamma_{k+1} - y_k is
 * -F_{1/L}(y_k), the natural map of y_k with the step 1/L; the natural map grows with its step
 * and its ratio to the step shrinks, so per contact the shared residual of y_k (step meff_i,
 * divided by meff_i) is at most max(L, 1/meff_i) ||d_i||. When that bound is <= tolerance times
 * ||g||_inf the full residual is checked. Iterations between checks are not candidates for the
 * best iterate. The step size L of a solve starts from the last one of the previous solve (the
 * work object carries it; the doubling and the 0.9 shrink adapt it within a few iterations),
 * and from 10 power iterations only on a work object's first solve.
 * iterations = gradient steps; products = the G products beyond one an iteration (the retries
 * of the sufficient decrease test, the power iterations).
 */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "ccp.h"
#include "cone.h"

#define APGD_CHECK 10 /* full residual every this many iterations */

struct cdCcpApgdWork {
  double L;    /* the step size of the last solve (0: none yet) */
  double *buf; /* vectors */
  size_t cap;  /* doubles buf holds */
};

static inline double dmax(double a, double b) { return a > b ? a : b; }

cdCcpApgdWork *cd_ccpApgdWorkMake(void) { return cd_calloc(1, sizeof(cdCcpApgdWork)); }

void cd_ccpApgdWorkFree(cdCcpApgdWork *w) {
  if (!w) return;
  cd_free(w->buf);
  cd_free(w);
}

/* the largest eigenvalue of G, estimated from below by a few power iterations from a fixed
 * start (deterministic); the doubling of the line search corrects an underestimate */
static double apgdLipschitz(const cdBlockMatrix *G, double *x, double *y, int n) {
  double L = 0.0;
  for (int k = 0; k < n; k++) x[k] = 1.0 + 0.1 * (k % 7);
  for (int it = 0; it < 10; it++) {
    double nx = 0.0, ny = 0.0;
    for (int k = 0; k < n; k++) nx += x[k] * x[k];
    nx = sqrt(nx);
    if (!(nx > 0.0)) break;
    for (int k = 0; k < n; k++) x[k] /= nx;
    cd_blockMatrixMul(G, x, y);
    for (int k = 0; k < n; k++) ny += y[k] * y[k];
    L = sqrt(ny);
    memcpy(x, y, (size_t)n * sizeof *x);
  }
  return L > 0.0 && isfinite(L) ? L : 1.0;
}

int cd_ccpApgdSolve(cdContactProblem *p, const cdCcpParams *par, cdCcpApgdWork *work, cdSolveStats *stats) {
  int nc = p->ncon, n = 3 * nc;
  double tol = par && par->tolerance > 0 ? par->tolerance : CD_CCP_ITER_TOL;
  int maxit = par && par->max_iterations > 0 ? par->max_iterations : CD_CCP_ITER_MAXIT;
  memset(stats, 0, sizeof *stats);
  if (nc == 0) {
    stats->converged = 1;
    return CD_OK;
  }
  cdCcpApgdWork *own = NULL;
  if (!work) {
    own = work = cd_ccpApgdWorkMake();
    if (!work) return CD_ERR_NOMEM;
  }
  if (cd_contactProblemDelassus(p)) {
    cd_ccpApgdWorkFree(own);
    return CD_ERR_NOMEM;
  }
  /* gamma, G gamma, y, G y, trial, G trial, c̄ / scratch, best (3 nc each), 1/meff^2 (nc) */
  size_t need = (size_t)8 * n + (size_t)nc;
  if (need > work->cap || !work->buf) {
    double *b = cd_realloc(work->buf, need * sizeof(double));
    if (!b) {
      cd_ccpApgdWorkFree(own);
      return CD_ERR_NOMEM;
    }
    work->buf = b;
    work->cap = need;
  }
  double *buf = work->buf;
  double *ga = buf, *Gga = buf + n, *y = buf + 2 * n, *Gy = buf + 3 * n, *gn = buf + 4 * n, *Ggn = buf + 5 * n,
         *cb = buf + 6 * n, *best = buf + 7 * n, *im2 = buf + 8 * n;
  double vscale = cd_contactProblemVelocityScale(p), tv2 = tol * vscale * tol * vscale;
  for (int i = 0; i < nc; i++) {
    double m = cd_contactProblemMeff(p, i);
    im2[i] = 1.0 / (m * m);
  }

  for (int i = 0; i < nc; i++) cd_coneProject(p->mu[i], &p->lambda[3 * i], &ga[3 * i]);
  cd_blockMatrixMul(&p->G, ga, Gga);
  for (int k = 0; k < n; k++) cb[k] = Gga[k] + p->g[k];
  double rbest = cd_coneResidual(p, ga, cb, NULL);
  memcpy(best, ga, (size_t)n * sizeof *best);
  double L = work->L;
  if (!(L > 0.0) || !isfinite(L)) {
    L = apgdLipschitz(&p->G, y, Gy, n);
    stats->products += 10;
  }
  memcpy(y, ga, (size_t)n * sizeof *y);
  memcpy(Gy, Gga, (size_t)n * sizeof *Gy);
  double theta = 1.0;
  int it = 0, ok = 1;

  while (rbest > tol && it < maxit && ok) {
    it++;
    double bound2 = 0.0, up = 0.0;
    for (int trial = 0;; trial++) {
      /* the gradient at y, Gy + g, into cb (the restart test below reads it) */
      double iL = 1.0 / L;
      for (int i = 0; i < nc; i++) {
        double a[3];
        for (int c = 0; c < 3; c++) {
          int k = 3 * i + c;
          cb[k] = Gy[k] + p->g[k];
          a[c] = y[k] - cb[k] * iL;
        }
        cd_coneProject(p->mu[i], a, &gn[3 * i]);
      }
      cd_blockMatrixMul(&p->G, gn, Ggn);
      if (trial > 0) stats->products++;
      /* for the quadratic f the test is exactly 1/2 d^T G d <= L/2 ||d||^2, d = gamma - y;
       * d^T G d = d^T (G gamma - G y) avoids the cancellation of evaluating f itself (f can
       * be 1e5 times larger than its change near the optimum). The same pass sums the
       * restart test's grad^T (gamma_{k+1} - gamma_k). */
      double dGd = 0.0, d2 = 0.0;
      bound2 = 0.0;
      up = 0.0;
      for (int i = 0; i < nc; i++) {
        double di2 = 0.0;
        for (int c = 0; c < 3; c++) {
          int k = 3 * i + c;
          double d = gn[k] - y[k];
          dGd += d * (Ggn[k] - Gy[k]);
          di2 += d * d;
          up += cb[k] * (gn[k] - ga[k]);
        }
        d2 += di2;
        bound2 = dmax(bound2, di2 * dmax(L * L, im2[i]));
      }
      if (dGd <= L * d2) break;
      if (!isfinite(dGd) || trial >= 60) {
        ok = 0;
        break;
      }
      L *= 2.0;
    }
    if (!ok) break;
    double thn = 0.5 * (-theta * theta + theta * sqrt(theta * theta + 4.0));
    double beta = theta * (1.0 - theta) / (theta * theta + thn);
    /* restart when the step gamma_{k+1} - gamma_k runs uphill along the gradient at y_k */
    if (up > 0.0) {
      memcpy(y, gn, (size_t)n * sizeof *y);
      memcpy(Gy, Ggn, (size_t)n * sizeof *Gy);
      thn = 1.0;
    } else {
      for (int k = 0; k < n; k++) {
        y[k] = gn[k] + beta * (gn[k] - ga[k]);
        Gy[k] = Ggn[k] + beta * (Ggn[k] - Gga[k]);
      }
    }
    /* gamma_{k+1} becomes gamma_k: the buffers trade places */
    double *t = ga;
    ga = gn;
    gn = t;
    t = Gga;
    Gga = Ggn;
    Ggn = t;
    theta = thn;
    if (it % APGD_CHECK == 0 || bound2 <= tv2 || it == maxit) {
      for (int k = 0; k < n; k++) cb[k] = Gga[k] + p->g[k];
      double r = cd_coneResidual(p, ga, cb, NULL);
      if (r < rbest) {
        rbest = r;
        memcpy(best, ga, (size_t)n * sizeof *best);
      }
    }
    L *= 0.9;
  }
  work->L = L;
  memcpy(p->lambda, best, (size_t)n * sizeof *best);
  stats->iterations = it;
  stats->residual = rbest;
  stats->converged = rbest <= tol;
  cd_ccpApgdWorkFree(own);
  return isfinite(rbest) ? CD_OK : CD_ERR_NUMERIC;
}
