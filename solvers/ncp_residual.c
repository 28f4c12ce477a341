/* ncp_residual.c: the residual of the exact Coulomb problem (definition and scaling in ncp.h).
 *
 * Per contact, with l_i = lambda_i / meff_i (m/s) and ĉ_i = c̄_i + (mu_i ||c̄_T,i||, 0, 0):
 *     natural  ||l_i - Proj_K(l_i - ĉ_i)||   (the residual, max over contacts / vscale)
 *     cone     ||l_i - Proj_K(l_i)||         (lambda outside its cone)
 *     dual     ||ĉ_i - Proj_K*(ĉ_i)||        (ĉ outside the dual cone: c̄_N < 0, penetration)
 *     comp     |l_i^T ĉ_i|                   (complementarity)
 * It is cone.c's CCP residual with ĉ in place of c̄: the two differ only on contacts that
 * slide, by at most mu_i ||c̄_T,i|| (Proj_K is nonexpansive), which is how far the CCP's answer
 * is from Coulomb's law (its lift).
 */
#include <math.h>

#include "ncp.h"

static double norm3(const double a[3]) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

double cd_ncpResidual(const cdContactProblem *p, const double *lambda, const double *cbar, cdConeResidual *parts) {
  cdConeResidual r = {0, 0, 0, 0, cd_contactProblemVelocityScale(p), 0};
  int finite = 1;
  for (int i = 0; i < p->ncon; i++) {
    const double *c = &cbar[3 * i];
    double mu = p->mu[i], w = 1.0 / cd_contactProblemMeff(p, i), a[3], pa[3], d[3];
    double l[3] = {w * lambda[3 * i], w * lambda[3 * i + 1], w * lambda[3 * i + 2]};
    double ch[3] = {c[0] + mu * hypot(c[1], c[2]), c[1], c[2]};
    for (int k = 0; k < 3; k++) a[k] = l[k] - ch[k];
    cd_coneProject(mu, a, pa);
    for (int k = 0; k < 3; k++) d[k] = l[k] - pa[k];
    r.natural = fmax(r.natural, norm3(d));
    if (parts) {
      cd_coneProject(mu, l, pa);
      for (int k = 0; k < 3; k++) d[k] = l[k] - pa[k];
      r.cone = fmax(r.cone, norm3(d));
      cd_coneProjectDual(mu, ch, pa);
      for (int k = 0; k < 3; k++) d[k] = ch[k] - pa[k];
      r.dual = fmax(r.dual, norm3(d));
      r.comp = fmax(r.comp, fabs(l[0] * ch[0] + l[1] * ch[1] + l[2] * ch[2]));
    }
    finite = finite && isfinite(l[0] + l[1] + l[2] + ch[0] + ch[1] + ch[2]);
  }
  /* fmax drops NaN: a non-finite iterate must never read as converged */
  r.value = finite ? r.natural / r.scale : INFINITY;
  if (parts) *parts = r;
  return r.value;
}

double cd_ncpResidualOf(const cdContactProblem *p, const double *lambda, double *work, cdConeResidual *parts) {
  cd_blockMatrixMul(&p->G, lambda, work);
  for (int k = 0; k < 3 * p->ncon; k++) work[k] += p->g[k];
  return cd_ncpResidual(p, lambda, work, parts);
}
