/* cone.h: the Coulomb friction cone, its dual, the projections, and the CCP residual.
 *
 * Per contact, in (normal, t1, t2):
 *     K_mu  = {(l_N, l_T) : ||l_T|| <= mu l_N}       (impulses lambda_i)
 *     K*_mu = {(y_N, y_T) : mu ||y_T|| <= y_N}       (the dual cone; c-bar_i must lie in it)
 * mu >= 0; mu = 0 makes K_0 the ray {l_T = 0, l_N >= 0} and K*_0 the half-space {y_N >= 0}.
 *
 * The CCP (seed 001): K ∋ lambda ⟂ c̄ = G lambda + g ∈ K*. Its residual, the same for every
 * CCP solver and the tests, is the natural map, per contact
 *     r_i = || lambda_i - Proj_K(lambda_i - c̄_i) ||,
 * which is zero exactly at a solution. stats.residual (cdConeResidual.value) is
 *     max_i r_i / (1 + ||g||_inf),
 * i.e. relative to the size of the free contact velocity: a problem with ||g|| = 100 m/s is
 * judged by the same number as one with ||g|| = 1 m/s, and a problem with g = 0 (solution 0)
 * by the absolute value. The natural map compares lambda (N s) with c̄ (m/s) through the unit
 * step of the map; for the unit-mass scale of the problems here both are velocities per unit
 * mass, which is why one tolerance serves both.
 */
#ifndef CD_CONE_H
#define CD_CONE_H

#include "problem.h"

/* y = Proj_{K_mu}(x), the Euclidean projection; y may alias x */
void cd_coneProject(double mu, const double x[3], double y[3]);
/* y = Proj_{K*_mu}(x) = x + Proj_{K_mu}(-x) (Moreau, K*° = -K); y may alias x */
void cd_coneProjectDual(double mu, const double x[3], double y[3]);

/* the CCP residual of an iterate and its parts, each a max over contacts */
typedef struct cdConeResidual {
  double natural; /* max_i ||lambda_i - Proj_K(lambda_i - c̄_i)|| (unscaled) */
  double cone;    /* max_i ||lambda_i - Proj_K(lambda_i)||: cone violation of lambda */
  double dual;    /* max_i ||c̄_i - Proj_K*(c̄_i)||: dual-cone violation of c̄ */
  double comp;    /* max_i |lambda_i^T c̄_i|: complementarity */
  double scale;   /* 1 + ||g||_inf */
  double value;   /* natural / scale: what goes into cdSolveStats.residual */
} cdConeResidual;

/* the residual of lambda (3 ncon) given c̄ = G lambda + g (3 ncon); parts may be NULL.
 * Returns parts->value. */
double cd_coneResidual(const cdContactProblem *p, const double *lambda, const double *cbar, cdConeResidual *parts);
/* the same, computing c̄ into work (3 ncon) first */
double cd_coneResidualOf(const cdContactProblem *p, const double *lambda, double *work, cdConeResidual *parts);
/* 1 + ||g||_inf, the residual's scale */
double cd_coneScale(const cdContactProblem *p);

#endif
