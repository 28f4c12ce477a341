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
 * and a frictionless contact could pull. (cd_coneProject is inline in cone.h.)
 *
 * Its derivative (NUMERICS.md "Jacobian of the cone projection"), for the semismooth Newton of
 * ccp_primal.c: I inside, 0 in the polar cone, and on the boundary case, with w = t / s and
 * a = n' the projected normal,
 *     dProj = 1/(1 + mu^2) [[1, mu w^T], [mu w, mu^2 w w^T]] + [[0, 0], [0, (mu a / s)(I - w w^T)]],
 * symmetric positive semidefinite (0 <= mu a / s < 1 there). For mu = 0 (the ray) it is
 * e_n e_n^T when n > 0 and 0 otherwise. On the borders between the cases either neighbour's
 * matrix is an element of the generalized Jacobian; the code takes the case the tests pick.
 */
#include <math.h>

#include "cone.h"

int cd_coneProjectJacobian(double mu, const double z[3], double y[3], double D[9], double root[9]) {
  double n = z[0], s = sqrt(z[1] * z[1] + z[2] * z[2]);
  int region;
  if (mu == 0.0) { /* the ray: y = (max(n, 0), 0, 0) */
    for (int k = 0; k < 9; k++) D[k] = 0.0;
    y[1] = y[2] = 0.0;
    y[0] = n > 0.0 ? n : 0.0;
    D[0] = n > 0.0 ? 1.0 : 0.0;
    region = n > 0.0 ? 2 : 0;
  } else if (n >= 0.0 && s <= mu * n) {
    for (int k = 0; k < 9; k++) D[k] = k % 4 == 0 ? 1.0 : 0.0;
    y[0] = z[0];
    y[1] = z[1];
    y[2] = z[2];
    region = 2;
  } else if (mu * s <= -n) {
    for (int k = 0; k < 9; k++) D[k] = 0.0;
    y[0] = y[1] = y[2] = 0.0;
    region = 0;
  } else {
    /* s > 0 here (s = 0 falls in one of the cases above when mu > 0). D = u u^T + c e e^T with
     * u = (1, mu w) / sqrt(1 + mu^2) and e = (0, -w2, w1) orthonormal, c = mu a / s */
    double q = 1.0 / (1.0 + mu * mu), a = (n + mu * s) * q, w1 = z[1] / s, w2 = z[2] / s, c = mu * a / s;
    y[0] = a;
    y[1] = mu * a * w1;
    y[2] = mu * a * w2;
    double u[3] = {sqrt(q), sqrt(q) * mu * w1, sqrt(q) * mu * w2}, e[3] = {0.0, -w2, w1};
    for (int r = 0; r < 3; r++)
      for (int k = 0; k < 3; k++) D[3 * r + k] = u[r] * u[k] + c * e[r] * e[k];
    if (root) {
      double sc = sqrt(c);
      for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) root[3 * r + k] = u[r] * u[k] + sc * e[r] * e[k];
    }
    return 1;
  }
  /* the other cases are projectors: their own roots */
  if (root)
    for (int k = 0; k < 9; k++) root[k] = D[k];
  return region;
}

void cd_coneProjectDual(double mu, const double x[3], double y[3]) {
  double m[3] = {-x[0], -x[1], -x[2]}, pm[3];
  cd_coneProject(mu, m, pm);
  y[0] = x[0] + pm[0];
  y[1] = x[1] + pm[1];
  y[2] = x[2] + pm[2];
}

static inline double norm3(const double a[3]) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }
static inline double dmax(double a, double b) { return a > b ? a : b; }

double cd_coneResidualShifted(const cdContactProblem *p, const double *lambda, const double *cbar, int coulomb,
                              cdConeResidual *parts) {
  cdConeResidual r = {0, 0, 0, 0, cd_contactProblemVelocityScale(p), 0};
  int finite = 1;
  for (int i = 0; i < p->ncon; i++) {
    const double *cb = &cbar[3 * i];
    double mu = p->mu[i], w = 1.0 / (p->meff ? p->meff[i] : cd_contactProblemMeff(p, i)), pa[3], d[3];
    double c[3] = {coulomb ? cb[0] + mu * hypot(cb[1], cb[2]) : cb[0], cb[1], cb[2]};
    /* squared norms in the loop, one root at the end */
    double dn = cd_coneNatural2(mu, w, &lambda[3 * i], c);
    r.natural = dmax(r.natural, dn);
    if (parts) {
      double l[3] = {w * lambda[3 * i], w * lambda[3 * i + 1], w * lambda[3 * i + 2]};
      cd_coneProject(mu, l, pa);
      for (int k = 0; k < 3; k++) d[k] = l[k] - pa[k];
      r.cone = dmax(r.cone, norm3(d));
      cd_coneProjectDual(mu, c, pa);
      for (int k = 0; k < 3; k++) d[k] = c[k] - pa[k];
      r.dual = dmax(r.dual, norm3(d));
      r.comp = dmax(r.comp, fabs(l[0] * c[0] + l[1] * c[1] + l[2] * c[2]));
    }
    /* a comparison drops NaN, so a non-finite iterate is caught here: it must never read as
     * converged */
    finite = finite && isfinite(dn + c[0] + c[1] + c[2]);
  }
  r.natural = sqrt(r.natural);
  r.value = finite ? r.natural / r.scale : INFINITY;
  if (parts) *parts = r;
  return r.value;
}

double cd_coneResidual(const cdContactProblem *p, const double *lambda, const double *cbar, cdConeResidual *parts) {
  return cd_coneResidualShifted(p, lambda, cbar, 0, parts);
}

double cd_coneResidualOf(cdContactProblem *p, const double *lambda, double *work, cdConeResidual *parts) {
  if (cd_contactProblemDelassus(p)) {
    if (parts) *parts = (cdConeResidual){INFINITY, INFINITY, INFINITY, INFINITY, 1.0, INFINITY};
    return INFINITY;
  }
  cd_contactProblemVelocity(p, lambda, work);
  return cd_coneResidual(p, lambda, work, parts);
}
