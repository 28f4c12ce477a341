/* ccp_velocity.h: the products with a contact problem's velocity-space form (problem.h) that
 * the primal solver makes, and the LCP's Delassus product while G is not built (lcp.c): J, J^T
 * and M^-1 (O(contacts + bodies) each). G = J M^-1 J^T applied
 * through them measured 35-40% more instructions than a product with the assembled G on sphere
 * piles (callgrind, pile-1000 and the 64-sphere pile), so apgd keeps G. All need p->nbody > 0. */
#ifndef CD_CCP_VELOCITY_H
#define CD_CCP_VELOCITY_H

#include "problem.h"

/* out (6 nbody) = J^T l (l: 3 ncon) */
void cd_ccpJtMul(const cdContactProblem *p, const double *l, double *out);
/* x (6 nbody) <- M^-1 x */
void cd_ccpMinvMul(const cdContactProblem *p, double *x);
/* y (3 ncon) = J x, plus g when add */
void cd_ccpJMul(const cdContactProblem *p, const double *x, double *y, int add);
#endif
