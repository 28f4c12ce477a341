/* ccp_apgd.c: the CCP by Nesterov's accelerated projected gradient (APGD).
 *
 * Problem (seed 001, the dual): unknowns the contact impulses lambda (3 ncon, N s, per contact
 * (normal, t1, t2)),
 *     min f(lambda) = 1/2 lambda^T G lambda + g^T lambda   s.t.  lambda_i ∈ K_mu_i,
 * whose KKT conditions are the CCP  K ∋ lambda ⟂ c̄ = G lambda + g ∈ K*  (c̄ in m/s, the
 * stabilised post-step contact velocity). G = J M^-1 J^T is symmetric PSD, so f is convex.
 *
 * Algorithm (Mazhar, Heyn, Negrut & Tasora, "Using Nesterov's method to accelerate multibody
 * dynamics with friction and contact", ACM TOG 34(3), 2015, Algorithm APGD), in the metric of
 * a per-contact diagonal P = diag(P_i), P_i = diag(G_ii,nn, t, t) with t = (G_ii,t1t1 +
 * G_ii,t2t2) / 2 (G's own diagonal, normal and mean tangential):
 *   gamma_0 = Proj_K(warm start), y_0 = gamma_0, theta_0 = 1, L_0 from power iterations on
 *   P^-1 G;
 *   repeat:
 *     gamma_{k+1} = Proj^P_K(y_k - P^-1 (G y_k + g) / L_k), and while the sufficient decrease
 *       test f(gamma_{k+1}) <= f(y_k) + grad_k^T (gamma_{k+1} - y_k) + L_k/2 ||gamma_{k+1} - y_k||_P^2
 *       fails, L_k <- 2 L_k and project again;
 *     theta_{k+1} = (-theta_k^2 + theta_k sqrt(theta_k^2 + 4)) / 2,
 *     beta_{k+1} = theta_k (1 - theta_k) / (theta_k^2 + theta_{k+1}),
 *     y_{k+1} = gamma_{k+1} + beta_{k+1} (gamma_{k+1} - gamma_k);
 *     restart (y_{k+1} = gamma_{k+1}, theta_{k+1} = 1) when grad_k^T (gamma_{k+1} - gamma_k) > 0,
 *       i.e. the step runs uphill along the gradient;
 *     L_{k+1} = 0.9 L_k;
 *   return the iterate with the smallest shared residual (cone.h).
 * Proj^P_K, the projection on K in the metric of P, is exact and costs one Euclidean cone
 * projection (cd_coneProjectScaled, cone.h, with s_i = sqrt(t / G_ii,nn)). P is what makes the scaled problem's Hessian P^-1/2 G P^-1/2
 * better conditioned than G: a sphere's rolling contact has a tangential G_ii 3.5 times its
 * normal one, and a contact with the ground half the G_ii of one between two spheres.
 * Measured (1000-sphere pile, 400 steps, mean iterations a step): 160 with P = I (the
 * paper's method), 145 with P_i a multiple of I (tr G_ii / 3), 179 with Gershgorin row sums,
 * 100 with the P above; the peer collection (tests/test_ccp_peer.c): 58 of 65 problems within
 * 2000 iterations (21194 in all) with P = I, 60 of 65 (16699) with P. The metric is
 * cdCcpParams.apgd_metric: the ccp backend sets it; the NCP's fixed point over shifted CCPs
 * (ncp_fp.c) runs with P = I, bit for bit the method its measured figures were taken with.
 * The sufficient decrease test is evaluated in its exact quadratic form 1/2 d^T G d <=
 * L/2 ||d||_P^2 (d = gamma_{k+1} - y_k), which needs no value of f.
 * G y is never formed by its own product: y is a linear combination of two iterates whose G
 * products are known, so each trial step costs one product with G (O(nnz G)).
 * The residual here is the natural map of cone.h rather than the paper's projected-gradient
 * measure, so that every CCP solver stops by the same number.
 *
 * What an iteration costs (REVIEW §3.2 measured the full residual every iteration at 26% of the
 * time, and 10 power iterations a step): the full residual (three projections' worth a
 * contact) is evaluated every APGD_CHECK iterations, and in between only when a bound from the
 * iteration's own numbers says the point may have converged. The step d = gamma_{k+1} - y_k is
 * minus the natural map of y_k in the metric P with the step 1/L; for P = I the natural map
 * grows with its step and its ratio to the step shrinks, so per contact the shared residual of
 * y_k (step meff_i, divided by meff_i) is at most max(L, 1/meff_i) ||d_i||; with P_i the step
 * is between 1/(L max P_i) and 1/(L min P_i), and the bound is taken with L max P_i times
 * sqrt(max P_i / min P_i) for L (a trigger for the full check, which alone decides). When that
 * bound is <= tolerance times ||g||_inf the full residual is checked. Iterations between checks
 * are not candidates for the best iterate. The step size L of a solve starts from the last one
 * of the previous solve (the work object carries it; the doubling and the 0.9 shrink adapt it
 * within a few iterations), and from 10 power iterations only on a work object's first solve.
 *
 * The sweeps first (cdCcpParams.apgd_relax, with apgd_metric; a simulation step's problem, whose
 * G is symmetric by construction). Before the first gradient step the warm start goes through
 * over-relaxed block Gauss-Seidel sweeps over the contacts whose residual is above
 * APGD_RELAX_THR times the tolerance (ccp_relax.c: worklists, omega 1.6, the metric P), for at
 * most APGD_RELAX_BUDGET block updates a contact; c̄ is then computed anew (one product), and the
 * gradient steps go on from there only when that residual is still above the tolerance. Why:
 * on a sphere pile apgd's residual is a max over contacts whose excess shrinks to a few contacts
 * long before it falls below the tolerance (the 1000-sphere pile, step 250: 392 of 2000 contacts
 * above the tolerance at iteration 45, 50 at 75, 1 at 95, done at 100), and a gradient step costs
 * a product with all of G; the sweeps move only the contacts still above it and their
 * neighbours. Measured (1000-sphere pile, 400 steps, mean a step): 100.0 gradient steps and 15.3
 * extra products before, 14.3 sweep-equivalents and 1.1 products after, every step converged;
 * the solve's instructions (callgrind) about a third. omega: 1.5, 1.6, 1.7 gave 17.8, 16.7,
 * 18.1 (budget 50); 1.85 was worse; sweeps run after 10 gradient steps rather than before cost
 * about the same. Budget 50 left a tenth of the 4096-sphere pile's steps to apgd (49.5 a step
 * over its first 100 steps), 100 none (35.2). The threshold 0.3, 0.5, 0.8 of the tolerance:
 * 16.1, 15.0, 14.3 (the residuals after the sweeps at most 3.0e-7, 5.0e-7, 8.0e-7; the shared
 * residual recomputed decides, against the tolerance). On problems read from files (nbody 0)
 * and in the NCP's fixed point the gradient steps run alone, as measured above.
 * The sweeps leave out the idle contacts (ccp_relax.c: no impulse, c̄ inside K* by more than
 * APGD_RELAX_IDLE vscale), whose c̄ they do not keep; when the residual recomputed after them is
 * above the tolerance (an idle contact pushed out of K*, or the incremental c̄'s round-off), the
 * sweeps run again from there, up to APGD_RELAX_ROUNDS calls within the same budget. Measured on
 * the first 100 steps (callgrind, cd_worldStep): the 1000-sphere pile 4.35G -> 4.00G
 * instructions (the sweeps 2.77G -> 2.41G), the 4096-sphere pile 33.1G -> 29.8G (25.2G ->
 * 21.7G); sweep-equivalents a step 20.3 -> 20.4 and 29.6 -> 30.4, every step converged. The
 * idle margin 0.05, 0.1, 0.2, 0.3 of vscale: 4.24G, 4.00G, 4.13G, 4.24G (1000 spheres; with
 * 0.1 the sweeps ran again 9 times in the 91 solves, 29 on 4096 spheres); 0.01 and 0.001 left
 * so many contacts idle that they ran again 112 and 189 times, and the sweeps grew to 28 and 38
 * a step.
 *
 * iterations = gradient steps plus the sweeps' block updates divided by the contacts (rounded
 * up: sweep-equivalents, each about a gradient step's work), both within the iteration limit;
 * products = the G products beyond one an iteration (the retries of the sufficient decrease
 * test, the power iterations, c̄ after each call of the sweeps).
 */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "ccp.h"
#include "ccp_relax.h"
#include "cone.h"

#define APGD_CHECK 10 /* full residual every this many iterations */
#define APGD_SHRINK 0.9 /* the step size's shrink after each iteration */
#define APGD_RELAX_BUDGET 100 /* the sweeps' block updates, times the contacts, before apgd goes on */
#define APGD_RELAX_THR 0.8   /* the sweeps move contacts above this times the tolerance */
#define APGD_RELAX_IDLE 0.1  /* the sweeps leave out contacts without impulse whose c̄ is inside K* by this times vscale */
#define APGD_RELAX_ROUNDS 4  /* the sweeps' calls, each after c̄ anew, while the residual is above the tolerance */

struct cdCcpApgdWork {
  double L;    /* the step size of the last solve (0: none yet) */
  double *buf; /* vectors */
  size_t cap;  /* doubles buf holds */
  cdCcpRelaxWork relax; /* the sweeps' workspace */
};

static inline double dmax(double a, double b) { return a > b ? a : b; }

cdCcpApgdWork *cd_ccpApgdWorkMake(void) { return cd_calloc(1, sizeof(cdCcpApgdWork)); }

void cd_ccpApgdWorkFree(cdCcpApgdWork *w) {
  if (!w) return;
  cd_free(w->buf);
  cd_ccpRelaxWorkFree(&w->relax);
  cd_free(w);
}

/* y = G x: by columns over the contacts that carry an impulse where G is symmetric by
 * construction (sym 1: a step's G = J M^-1 J^T; at apgd's iterates the contacts that separate,
 * 40% of a sphere pile's listed contacts, carry none), by rows for problems read from files,
 * which are only nearly symmetric (sym 0) */
static void gMul(const cdBlockMatrix *G, int sym, const double *x, double *y) {
  if (sym)
    cd_blockMatrixMulSymmetric(G, x, y);
  else
    cd_blockMatrixMul(G, x, y);
}

/* the largest eigenvalue of P^-1 G (P: pn, pt a contact), estimated from below by a few power iterations from a fixed
 * start (deterministic); the doubling of the line search corrects an underestimate */
static double apgdLipschitz(const cdBlockMatrix *G, int sym, const double *pn, const double *pt, double *x, double *y, int n) {
  double L = 0.0;
  for (int k = 0; k < n; k++) x[k] = 1.0 + 0.1 * (k % 7);
  for (int it = 0; it < 10; it++) {
    double nx = 0.0, ny = 0.0;
    for (int k = 0; k < n; k++) nx += x[k] * x[k];
    nx = sqrt(nx);
    if (!(nx > 0.0)) break;
    for (int k = 0; k < n; k++) x[k] /= nx;
    gMul(G, sym, x, y);
    for (int k = 0; k < n; k++) {
      y[k] /= k % 3 ? pt[k / 3] : pn[k / 3];
      ny += y[k] * y[k];
    }
    L = sqrt(ny);
    memcpy(x, y, (size_t)n * sizeof *x);
  }
  return L > 0.0 && isfinite(L) ? L : 1.0;
}

int cd_ccpApgdSolve(cdContactProblem *p, const cdCcpParams *par, cdCcpApgdWork *work, cdSolveStats *stats) {
  int nc = p->ncon, n = 3 * nc;
  double tol = par && par->tolerance > 0 ? par->tolerance : CD_CCP_ITER_TOL;
  int metric = par && par->apgd_metric;
  int relax = metric && par->apgd_relax && p->nbody > 0; /* the sweeps read G as symmetric */
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
  /* gamma, G gamma, y, G y, trial, G trial, c̄ / scratch, best (3 nc each), 1/meff^2, pn, pt,
   * 1/pn, 1/pt, s, bound weight, and the sweeps' 1/meff, 1/(s pn), 1/(s pt) (nc) */
  size_t need = (size_t)8 * n + (size_t)10 * nc;
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
         *cb = buf + 6 * n, *best = buf + 7 * n, *im2 = buf + 8 * n, *pn = im2 + nc, *pt = pn + nc, *ipn = pt + nc, *ipt = ipn + nc, *sr = ipt + nc, *bw = sr + nc,
         *riw = bw + nc, *rpn = riw + nc, *rpt = rpn + nc;
  int sym = p->nbody > 0; /* G = J M^-1 J^T built symmetric (gMul) */
  double vscale = cd_contactProblemVelocityScale(p), tv2 = tol * vscale * tol * vscale;
  for (int i = 0; i < nc; i++) {
    double m = cd_contactProblemMeff(p, i);
    im2[i] = 1.0 / (m * m);
    const double *B = &p->G.val[9 * (size_t)p->G.diag[i]];
    double dn = B[0], dt = 0.5 * (B[4] + B[8]);
    if (!(dn > 0.0) || !isfinite(dn)) dn = 1.0;
    if (!(dt > 0.0) || !isfinite(dt)) dt = dn;
    if (!metric) dn = dt = 1.0; /* P = I */
    pn[i] = dn;
    pt[i] = dt;
    ipn[i] = 1.0 / dn;
    ipt[i] = 1.0 / dt;
    sr[i] = sqrt(dt / dn);
    double pmax = dmax(dn, dt), pmin = dn + dt - pmax;
    bw[i] = pmax * sqrt(pmax / pmin);
    if (relax) { /* the sweeps' step: 1 / (s_i P_i), s_i a bound on G_ii's curvature in P_i */
      double si = cd_ccpRelaxCurvature(B, dn, dt);
      if (!(si > 0.0) || !isfinite(si)) si = 1.0;
      riw[i] = 1.0 / m;
      rpn[i] = 1.0 / (si * dn);
      rpt[i] = 1.0 / (si * dt);
    }
  }

  for (int i = 0; i < nc; i++) cd_coneProject(p->mu[i], &p->lambda[3 * i], &ga[3 * i]);
  gMul(&p->G, sym, ga, Gga);
  for (int k = 0; k < n; k++) cb[k] = Gga[k] + p->g[k];
  double rbest = cd_coneResidual(p, ga, cb, NULL);
  memcpy(best, ga, (size_t)n * sizeof *best);
  int sweeps = 0;
  if (relax && rbest > tol) {
    /* the sweeps over the contacts above the tolerance (ccp_relax.c), then c̄ anew */
    cdCcpRelaxMetric rm = {sr, rpn, rpt, riw};
    long upd = 0;
    long budget = (long)(maxit < APGD_RELAX_BUDGET ? maxit : APGD_RELAX_BUDGET) * nc;
    for (int round = 0; round < APGD_RELAX_ROUNDS && upd < budget; round++) {
      long u1 = 0;
      if (cd_ccpRelax(p, &rm, APGD_RELAX_THR * tol * vscale, APGD_RELAX_IDLE * vscale, budget - upd, ga, cb,
                      &work->relax, &u1) < 0) {
        cd_ccpApgdWorkFree(own);
        return CD_ERR_NOMEM;
      }
      upd += u1;
      gMul(&p->G, sym, ga, Gga);
      stats->products++;
      for (int k = 0; k < n; k++) cb[k] = Gga[k] + p->g[k];
      double r = cd_coneResidual(p, ga, cb, NULL);
      if (r < rbest || !isfinite(rbest)) {
        rbest = r;
        memcpy(best, ga, (size_t)n * sizeof *best);
      }
      if (!(r > tol)) break;
    }
    sweeps = (int)((upd + nc - 1) / nc);
  }
  double L = work->L;
  if (rbest > tol && (!(L > 0.0) || !isfinite(L))) {
    L = apgdLipschitz(&p->G, sym, pn, pt, y, Gy, n);
    stats->products += 10;
  }
  memcpy(y, ga, (size_t)n * sizeof *y);
  memcpy(Gy, Gga, (size_t)n * sizeof *Gy);
  double theta = 1.0;
  int it = 0, ok = 1;

  maxit -= sweeps; /* the iteration limit counts the sweeps too */
  while (rbest > tol && it < maxit && ok) {
    it++;
    double bound2 = 0.0, up = 0.0;
    for (int trial = 0;; trial++) {
      /* the gradient at y, Gy + g, into cb (the restart test below reads it) */
      double iL = 1.0 / L;
      for (int i = 0; i < nc; i++) {
        int k = 3 * i;
        double c0 = Gy[k] + p->g[k], c1 = Gy[k + 1] + p->g[k + 1], c2 = Gy[k + 2] + p->g[k + 2];
        double sn = iL * ipn[i], st = iL * ipt[i];
        cb[k] = c0;
        cb[k + 1] = c1;
        cb[k + 2] = c2;
        double a[3] = {y[k] - c0 * sn, y[k + 1] - c1 * st, y[k + 2] - c2 * st};
        cd_coneProjectScaled(p->mu[i], sr[i], a, &gn[k]);
      }
      gMul(&p->G, sym, gn, Ggn);
      if (trial > 0) stats->products++;
      /* for the quadratic f the test is exactly 1/2 d^T G d <= L/2 ||d||_P^2, d = gamma - y;
       * d^T G d = d^T (G gamma - G y) avoids the cancellation of evaluating f itself (f can
       * be 1e5 times larger than its change near the optimum). The same pass sums the
       * restart test's grad^T (gamma_{k+1} - gamma_k). */
      double dGd = 0.0, d2 = 0.0;
      bound2 = 0.0;
      up = 0.0;
      for (int i = 0; i < nc; i++) {
        /* sums in the order of components (with P = I bit for bit Mazhar et al.'s method as
         * before: the NCP's fixed point, which runs it, is sensitive to its round-off) */
        double di2 = 0.0, dp2 = 0.0;
        for (int c = 0; c < 3; c++) {
          int k = 3 * i + c;
          double e = gn[k] - y[k];
          dGd += e * (Ggn[k] - Gy[k]);
          di2 += e * e;
          dp2 += (c ? pt[i] : pn[i]) * e * e;
          up += cb[k] * (gn[k] - ga[k]);
        }
        d2 += dp2;
        double lp = L * bw[i];
        bound2 = dmax(bound2, di2 * dmax(lp * lp, im2[i]));
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
    L *= APGD_SHRINK;
  }
  work->L = L;
  memcpy(p->lambda, best, (size_t)n * sizeof *best);
  stats->iterations = it + sweeps;
  stats->residual = rbest;
  stats->converged = rbest <= tol;
  cd_ccpApgdWorkFree(own);
  return isfinite(rbest) ? CD_OK : CD_ERR_NUMERIC;
}
