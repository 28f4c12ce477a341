/* ccp_velocity.h: the products with a contact problem's velocity-space form (problem.h) that
 * the primal solver makes: J, J^T and M^-1 (O(contacts + bodies) each). G = J M^-1 J^T applied
 * through them measured 35-40% more instructions than a product with the assembled G on sphere
 * piles (callgrind, pile-1000 and the 64-sphere pile), so apgd keeps G. All need p->nbody > 0. */
#ifndef CD_CCP_VELOCITY_H
#define CD_CCP_VELOCITY_H

#include "problem.h"

/* s = J_i x: contact i's three rows of J times the body velocities x (6 nbody) */
static inline void cd_ccpContactJ(const cdContactProblem *p, int i, const double *x, double s[3]) {
  s[0] = s[1] = s[2] = 0;
  for (int si = 0; si < 2; si++) {
    int k = p->cbody[2 * i + si];
    if (k < 0) continue;
    const double *J = &p->J[36 * (size_t)i + 18 * (size_t)si], *xk = &x[6 * (size_t)k];
    for (int r = 0; r < 3; r++)
      s[r] += J[6 * r] * xk[0] + J[6 * r + 1] * xk[1] + J[6 * r + 2] * xk[2] + J[6 * r + 3] * xk[3] +
              J[6 * r + 4] * xk[4] + J[6 * r + 5] * xk[5];
  }
}

/* out (6 nbody) += J_i^T l: contact i's impulse l (3) on its bodies */
static inline void cd_ccpContactJt(const cdContactProblem *p, int i, const double l[3], double *out) {
  for (int si = 0; si < 2; si++) {
    int k = p->cbody[2 * i + si];
    if (k < 0) continue;
    const double *J = &p->J[36 * (size_t)i + 18 * (size_t)si];
    double *o = &out[6 * (size_t)k];
    for (int e = 0; e < 6; e++) o[e] += J[e] * l[0] + J[6 + e] * l[1] + J[12 + e] * l[2];
  }
}

/* out (6 nbody) = J^T l (l: 3 ncon) */
void cd_ccpJtMul(const cdContactProblem *p, const double *l, double *out);
/* x (6 nbody) <- M^-1 x */
void cd_ccpMinvMul(const cdContactProblem *p, double *x);
/* y (3 ncon) = J x, plus g when add */
void cd_ccpJMul(const cdContactProblem *p, const double *x, double *y, int add);
#endif
