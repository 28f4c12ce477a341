/* ncp_residual.c: the residual of the exact Coulomb problem (definition and scaling in ncp.h).
 *
 * Per contact, with l_i = lambda_i / meff_i (m/s) and ĉ_i = c̄_i + (mu_i ||c̄_T,i||, 0, 0):
 *     natural  ||l_i - Proj_K(l_i - ĉ_i)||   (the residual, max over contacts / vscale)
 *     cone     ||l_i - Proj_K(l_i)||         (lambda outside its cone)
 *     dual     ||ĉ_i - Proj_K*(ĉ_i)||        (ĉ outside the dual cone: c̄_N < 0, penetration)
 *     comp     |l_i^T ĉ_i|                   (complementarity)
 * It is cone.c's CCP residual with ĉ in place of c̄ (one implementation,
 * cd_coneResidualShifted): the two differ only on contacts that
 * slide, by at most mu_i ||c̄_T,i|| (Proj_K is nonexpansive), which is how far the CCP's answer
 * is from Coulomb's law (its lift).
 */
#include "ncp.h"

double cd_ncpResidual(const cdContactProblem *p, const double *lambda, const double *cbar, cdConeResidual *parts) {
  return cd_coneResidualShifted(p, lambda, cbar, 1, parts);
}

double cd_ncpResidualOf(const cdContactProblem *p, const double *lambda, double *work, cdConeResidual *parts) {
  cd_contactProblemVelocity(p, lambda, work);
  return cd_ncpResidual(p, lambda, work, parts);
}
