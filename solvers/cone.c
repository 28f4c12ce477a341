/* cone.c: projections onto the Coulomb cone K_mu and its dual K*_mu, and the CCP residual
 * (definitions and the scaling of the residual in cone.h).
 *
 * Projection onto K_mu of x = (n, t), s = ||t|| (NUMERICS.md "Cones"):
 *   n >= 0, s <= mu n: x is inside, Proj = x;
 *   mu s <= -n       : x is in the polar cone -K*_mu, Proj = 0;
 *   otherwise        : onto the boundary ray through t, n' = (n + mu s) / (1 + mu^2),
 *                      t' = mu n' t / s.
 * mu = 0 falls out of the same cases (the ray: n' = max(n, 0), t' = 0); s = 0 lands in one of
 * the first two cases, so the division by s never happens with s = 0. The test n >= 0 is not
 * implied by s <= mu n when mu = 0 and s = 0: without it (n < 0, t = 0) would count as inside
 * and a frictionless contact could pull.
 */
#include <math.h>

#include "cone.h"

void cd_coneProject(double mu, const double x[3], double y[3]) {
  double n = x[0], s = sqrt(x[1] * x[1] + x[2] * x[2]);
  if (n >= 0.0 && s <= mu * n) {
    y[0] = x[0];
    y[1] = x[1];
    y[2] = x[2];
  } else if (mu * s <= -n) {
    y[0] = y[1] = y[2] = 0.0;
  } else {
    double nn = (n + mu * s) / (1.0 + mu * mu), f = mu * nn / s;
    y[0] = nn;
    y[1] = f * x[1];
    y[2] = f * x[2];
  }
}

void cd_coneProjectDual(double mu, const double x[3], double y[3]) {
  double m[3] = {-x[0], -x[1], -x[2]}, pm[3];
  cd_coneProject(mu, m, pm);
  y[0] = x[0] + pm[0];
  y[1] = x[1] + pm[1];
  y[2] = x[2] + pm[2];
}

static double norm3(const double a[3]) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

double cd_coneResidual(const cdContactProblem *p, const double *lambda, const double *cbar, cdConeResidual *parts) {
  cdConeResidual r = {0, 0, 0, 0, cd_contactProblemVelocityScale(p), 0};
  int finite = 1;
  for (int i = 0; i < p->ncon; i++) {
    const double *c = &cbar[3 * i];
    double mu = p->mu[i], w = 1.0 / cd_contactProblemMeff(p, i), a[3], pa[3], d[3];
    double l[3] = {w * lambda[3 * i], w * lambda[3 * i + 1], w * lambda[3 * i + 2]};
    for (int k = 0; k < 3; k++) a[k] = l[k] - c[k];
    cd_coneProject(mu, a, pa);
    for (int k = 0; k < 3; k++) d[k] = l[k] - pa[k];
    r.natural = fmax(r.natural, norm3(d));
    if (parts) {
      cd_coneProject(mu, l, pa);
      for (int k = 0; k < 3; k++) d[k] = l[k] - pa[k];
      r.cone = fmax(r.cone, norm3(d));
      cd_coneProjectDual(mu, c, pa);
      for (int k = 0; k < 3; k++) d[k] = c[k] - pa[k];
      r.dual = fmax(r.dual, norm3(d));
      r.comp = fmax(r.comp, fabs(l[0] * c[0] + l[1] * c[1] + l[2] * c[2]));
    }
    finite = finite && isfinite(l[0] + l[1] + l[2] + c[0] + c[1] + c[2]);
  }
  /* fmax drops NaN, so a non-finite iterate is caught here: it must never read as converged */
  r.value = finite ? r.natural / r.scale : INFINITY;
  if (parts) *parts = r;
  return r.value;
}

double cd_coneResidualOf(const cdContactProblem *p, const double *lambda, double *work, cdConeResidual *parts) {
  cd_blockMatrixMul(&p->G, lambda, work);
  for (int k = 0; k < 3 * p->ncon; k++) work[k] += p->g[k];
  return cd_coneResidual(p, lambda, work, parts);
}
