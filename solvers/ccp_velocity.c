/* ccp_velocity.c: the velocity-space products of a contact problem (ccp_velocity.h). */
#include "ccp_velocity.h"

#include <string.h>

/* out (6 nb) = J^T l, the contacts with l_i = 0 left out: J is finite and each sum starts at
 * +0, which adding a zero product (of either sign) leaves as it is, so the same values bit for
 * bit; half the contacts carry no impulse in the LCP's products through the bodies (S2 10's
 * first 60 steps: their 242 J^T x 110.7M -> 54M instructions, cd_lcpDelassusMul) */
void cd_ccpJtMul(const cdContactProblem *p, const double *l, double *out) {
  memset(out, 0, 6 * (size_t)p->nbody * sizeof(double));
  for (int i = 0; i < p->ncon; i++)
    if (l[3 * i] != 0.0 || l[3 * i + 1] != 0.0 || l[3 * i + 2] != 0.0) cd_contactProblemRowsTMulAdd(p, i, &l[3 * i], out);
}

/* x (6 nb) <- M^-1 x */
void cd_ccpMinvMul(const cdContactProblem *p, double *x) {
  for (int k = 0; k < p->nbody; k++) {
    double *xk = &x[6 * (size_t)k], m = p->minv[k], a[3] = {xk[3], xk[4], xk[5]};
    const double *I = &p->Iinv[9 * (size_t)k];
    xk[0] *= m;
    xk[1] *= m;
    xk[2] *= m;
    xk[3] = I[0] * a[0] + I[1] * a[1] + I[2] * a[2];
    xk[4] = I[3] * a[0] + I[4] * a[1] + I[5] * a[2];
    xk[5] = I[6] * a[0] + I[7] * a[1] + I[8] * a[2];
  }
}

/* y (3 nc) = J x (+ g when add) */
void cd_ccpJMul(const cdContactProblem *p, const double *x, double *y, int add) {
  for (int i = 0; i < p->ncon; i++) {
    double s[3];
    cd_contactProblemRowsMul(p, p->J, i, x, s);
    for (int r = 0; r < 3; r++) y[3 * i + r] = s[r] + (add ? p->g[3 * i + r] : 0.0);
  }
}
