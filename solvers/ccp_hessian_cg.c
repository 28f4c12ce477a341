/* ccp_hessian_cg.c: the velocity-space Newton step without a factorization (ccp_hessian.h):
 *     H dv = b,   H = M + J^T D J   (6 nbody square, symmetric positive definite),
 * solved by preconditioned conjugate gradients. H is never assembled: a product
 *     H d = M d + sum_i J_i^T (D_i (J_i d))
 * runs once over the contacts with their two 3x6 Jacobian blocks (p->J) and D_i (3x3), and over
 * the bodies with their mass blocks, O(contacts + bodies) with no fill, where CHOLMOD's factor of
 * a 3-D pile fills in (20k-70k flops a contact on the collapsed 1000-sphere pile). The
 * preconditioner is H's block diagonal, per body the 6x6
 *     P_k = M_k + sum_{contacts i on k} J_ik^T D_i J_ik,
 * factored by a dense 6x6 Cholesky each Newton step (about the cost of one product).
 *
 * Inexact Newton: CG starts from dv = 0 and stops when the preconditioned residual
 * r^T P^-1 r <= eta^2 b^T P^-1 b (r = b - H dv), or after maxit products. Every CG iterate from
 * 0 minimises the quadratic model over a Krylov space that holds b, so dv^T b > 0: a descent
 * direction of the augmented Lagrangian for the exact line search (ccp_primal.c), whatever eta.
 * The caller picks eta (the forcing term) from the CCP residual (ccp_primal.c). On the collapsed
 * 1000-sphere pile a Newton step took about 46 products with H at eta <= 0.1.
 */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "ccp_hessian.h"
#include "ccp_velocity.h"

/* the 6x6 block Jacobi factors: per body the lower Cholesky factor of P_k, row-major (36) */
static int blockJacobi(cdCcpHessian *h, const cdContactProblem *p, const double *D, const unsigned char *skip) {
  int nbody = p->nbody;
  double *Pc = h->cgP;
  for (int k = 0; k < nbody; k++) {
    double *B = &Pc[36 * (size_t)k];
    const double *I = &h->Ib[9 * (size_t)k];
    memset(B, 0, 36 * sizeof(double));
    B[0] = B[7] = B[14] = h->Mb[k];
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) B[6 * (3 + r) + 3 + c] = I[3 * r + c];
  }
  for (int i = 0; i < p->ncon; i++) {
    if (skip[i]) continue;
    const double *Di = &D[9 * (size_t)i];
    for (int s = 0; s < 2; s++) {
      int k = p->cbody[2 * i + s];
      if (k < 0) continue;
      const double *J = &p->J[36 * (size_t)i + 18 * (size_t)s];
      double T[18], *B = &Pc[36 * (size_t)k];
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 6; c++) T[6 * r + c] = Di[3 * r] * J[c] + Di[3 * r + 1] * J[6 + c] + Di[3 * r + 2] * J[12 + c];
      for (int r = 0; r < 6; r++) /* the lower triangle: B += J^T T */
        for (int c = 0; c <= r; c++) B[6 * r + c] += J[r] * T[c] + J[6 + r] * T[6 + c] + J[12 + r] * T[12 + c];
    }
  }
  for (int k = 0; k < nbody; k++) { /* in-place Cholesky of the lower triangle */
    double *B = &Pc[36 * (size_t)k];
    for (int j = 0; j < 6; j++) {
      double d = B[6 * j + j];
      for (int q = 0; q < j; q++) d -= B[6 * j + q] * B[6 * j + q];
      if (!(d > 0.0)) return CD_ERR_NUMERIC;
      d = sqrt(d);
      B[6 * j + j] = d;
      for (int r = j + 1; r < 6; r++) {
        double s = B[6 * r + j];
        for (int q = 0; q < j; q++) s -= B[6 * r + q] * B[6 * j + q];
        B[6 * r + j] = s / d;
      }
    }
  }
  return CD_OK;
}

/* z = P^-1 r per body; returns r^T z */
static double precondition(const cdCcpHessian *h, int nbody, const double *r, double *z) {
  double rz = 0.0;
  for (int k = 0; k < nbody; k++) {
    const double *L = &h->cgP[36 * (size_t)k], *rk = &r[6 * (size_t)k];
    double *zk = &z[6 * (size_t)k], y[6];
    for (int j = 0; j < 6; j++) { /* L y = r */
      double s = rk[j];
      for (int q = 0; q < j; q++) s -= L[6 * j + q] * y[q];
      y[j] = s / L[6 * j + j];
    }
    for (int j = 5; j >= 0; j--) { /* L^T z = y */
      double s = y[j];
      for (int q = j + 1; q < 6; q++) s -= L[6 * q + j] * zk[q];
      zk[j] = s / L[6 * j + j];
    }
    for (int j = 0; j < 6; j++) rz += rk[j] * zk[j];
  }
  return rz;
}

/* q = H d = M d + J^T D J d, one pass over the contacts */
static void hessianMul(const cdCcpHessian *h, const cdContactProblem *p, const double *D, const unsigned char *skip,
                       const double *d, double *q) {
  cd_ccpHessianMassMul(h, d, q);
  for (int i = 0; i < p->ncon; i++) {
    if (skip[i]) continue;
    double s[3], t[3];
    cd_contactProblemRowsMul(p, p->J, i, d, s);
    const double *Di = &D[9 * (size_t)i];
    for (int r = 0; r < 3; r++) t[r] = Di[3 * r] * s[0] + Di[3 * r + 1] * s[1] + Di[3 * r + 2] * s[2];
    cd_contactProblemRowsTMulAdd(p, i, t, q);
  }
}

int cd_ccpHessianCg(cdCcpHessian *h, const cdContactProblem *p, const double *D, const unsigned char *skip,
                    const double *b, double *x, double eta, int maxit, int *products) {
  int nbody = p->nbody;
  size_t n = 6 * (size_t)nbody, need = 36 * (size_t)nbody + 4 * n;
  *products = 0;
  if (need > h->cg_cap || !h->cgP) {
    if (cd_grow(&h->cgP, need, sizeof(double))) return CD_ERR_NOMEM;
    h->cg_cap = need;
  }
  int st = blockJacobi(h, p, D, skip);
  if (st) return st;
  double *r = h->cgP + 36 * (size_t)nbody, *z = r + n, *d = z + n, *q = d + n;
  memcpy(r, b, n * sizeof(double)); /* before x, which may alias b */
  memset(x, 0, n * sizeof(double));
  double rz = precondition(h, nbody, r, z), target = eta * eta * rz;
  if (!(rz > 0.0)) return isfinite(rz) ? CD_OK : CD_ERR_NUMERIC;
  memcpy(d, z, n * sizeof(double));
  for (int it = 0; it < maxit; it++) {
    hessianMul(h, p, D, skip, d, q);
    ++*products;
    double dq = 0.0;
    for (size_t k = 0; k < n; k++) dq += d[k] * q[k];
    if (!(dq > 0.0)) return isfinite(dq) ? CD_OK : CD_ERR_NUMERIC; /* round-off: keep x */
    double alpha = rz / dq;
    for (size_t k = 0; k < n; k++) {
      x[k] += alpha * d[k];
      r[k] -= alpha * q[k];
    }
    double rzn = precondition(h, nbody, r, z);
    if (rzn <= target) break;
    double beta = rzn / rz;
    for (size_t k = 0; k < n; k++) d[k] = z[k] + beta * d[k];
    rz = rzn;
  }
  return CD_OK;
}
