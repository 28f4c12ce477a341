/* cone.h: the Coulomb friction cone, its dual, the projections, and the CCP residual.
 *
 * Per contact, in (normal, t1, t2):
 *     K_mu  = {(l_N, l_T) : ||l_T|| <= mu l_N}       (impulses lambda_i)
 *     K*_mu = {(y_N, y_T) : mu ||y_T|| <= y_N}       (the dual cone; c-bar_i must lie in it)
 * mu >= 0; mu = 0 makes K_0 the ray {l_T = 0, l_N >= 0} and K*_0 the half-space {y_N >= 0}.
 *
 * The CCP (seed 001): K ∋ lambda ⟂ c̄ = G lambda + g ∈ K*. Its residual, the same for every
 * CCP solver and the tests, is the natural map with each contact's impulse taken as a velocity
 * through its effective normal mass (problem.h: meff_i, vscale), per contact
 *     r_i = || l_i - Proj_K(l_i - c̄_i) ||,    l_i = lambda_i / meff_i   (m/s),
 * which is zero exactly at a solution (Proj_K is positively homogeneous, so r_i meff_i is the
 * natural map of lambda_i with the step meff_i). stats.residual (cdConeResidual.value) is
 *     max_i r_i / vscale,   vscale = ||g||_inf,
 * dimensionless: relative to the size of the free contact velocity, and unchanged when every
 * mass of a scene is scaled (lambda and meff scale alike) or when the problem is.
 */
#ifndef CD_CONE_H
#define CD_CONE_H

#include <math.h>

#include "problem.h"

/* y = Proj_{K_mu}(x), the Euclidean projection; y may alias x. Inline: every CCP solver calls
 * it once a contact an iteration (cone.c's opening comment has the cases). */
static inline void cd_coneProject(double mu, const double x[3], double y[3]) {
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

/* the square of one contact's natural-map residual ||l - Proj_K(l - c)||, l = w lambda (w =
 * 1 / meff: the impulse as a velocity), c its c̄ (cd_coneResidual's term, which the sweeps of
 * ccp_relax.c test contact by contact) */
static inline double cd_coneNatural2(double mu, double w, const double lambda[3], const double c[3]) {
  double l[3] = {w * lambda[0], w * lambda[1], w * lambda[2]}, a[3] = {l[0] - c[0], l[1] - c[1], l[2] - c[2]}, pa[3];
  cd_coneProject(mu, a, pa);
  double d0 = l[0] - pa[0], d1 = l[1] - pa[1], d2 = l[2] - pa[2];
  return d0 * d0 + d1 * d1 + d2 * d2;
}

/* y = the projection of x on K_mu in the metric diag(1, s^2, s^2) (s > 0: the tangential
 * components weigh s^2 times the normal one), the minimiser of (y_N - x_N)^2 + s^2 ||y_T -
 * x_T||^2 over K_mu; y may alias x. The map (n, t) -> (n, s t) takes K_mu onto K_{s mu} and
 * this metric onto the Euclidean one, so y = (n', t' / s) with (n', t') = Proj_{K_{s mu}}(x_N,
 * s x_T): one Euclidean projection (apgd's per-contact metric, ccp_apgd.c). */
static inline void cd_coneProjectScaled(double mu, double s, const double x[3], double y[3]) {
  double a[3] = {x[0], s * x[1], s * x[2]};
  cd_coneProject(s * mu, a, a);
  double is = 1.0 / s;
  y[0] = a[0];
  y[1] = a[1] * is;
  y[2] = a[2] * is;
}

/* y = Proj_{K_mu}(z) and its derivative D = dy/dz (3x3, row-major, symmetric positive
 * semidefinite; the generalized Jacobian of the semismooth Newton methods, cone.c), and when
 * root is not NULL its square root (symmetric positive semidefinite, root^2 = D). Returns the
 * region of z: 0 polar cone (y = 0, D = 0), 1 boundary (the projection slides), 2 inside
 * (y = z, D = I; for mu = 0, the ray: D = e_n e_n^T) */
int cd_coneProjectJacobian(double mu, const double z[3], double y[3], double D[9], double root[9]);
/* y = Proj_{K*_mu}(x) = x + Proj_{K_mu}(-x) (Moreau, K*° = -K); y may alias x */
void cd_coneProjectDual(double mu, const double x[3], double y[3]);

/* the CCP residual of an iterate and its parts, each a max over contacts, with the impulses
 * as velocities l_i = lambda_i / meff_i (m/s) */
typedef struct cdConeResidual {
  double natural; /* max_i ||l_i - Proj_K(l_i - c̄_i)||, m/s */
  double cone;    /* max_i ||l_i - Proj_K(l_i)||: cone violation of lambda, m/s */
  double dual;    /* max_i ||c̄_i - Proj_K*(c̄_i)||: dual-cone violation of c̄, m/s */
  double comp;    /* max_i |l_i^T c̄_i|: complementarity, m^2/s^2 */
  double scale;   /* vscale = ||g||_inf (1 when g = 0), m/s */
  double value;   /* natural / scale: what goes into cdSolveStats.residual */
} cdConeResidual;

/* the residual of lambda (3 ncon) given c̄ = G lambda + g (3 ncon); parts may be NULL.
 * Returns parts->value. */
double cd_coneResidual(const cdContactProblem *p, const double *lambda, const double *cbar, cdConeResidual *parts);
/* the same with c̄_i replaced, when coulomb is 1, by De Saxcé's ĉ_i = c̄_i + (mu_i ||c̄_T,i||, 0, 0):
 * the exact Coulomb problem's residual (ncp.h); coulomb 0 is cd_coneResidual */
double cd_coneResidualShifted(const cdContactProblem *p, const double *lambda, const double *cbar, int coulomb,
                              cdConeResidual *parts);
/* the same, computing c̄ = G lambda + g into work (3 ncon) first; G is built first when it is
 * still pending (INFINITY when that runs out of memory) */
double cd_coneResidualOf(cdContactProblem *p, const double *lambda, double *work, cdConeResidual *parts);

#endif
