/* lcp.h: the Anitescu-Hart LCP backend (--model lcp) and its building blocks.
 *
 * The LCP of seed 000 in z = (lambda_N, alpha, beta), laid out as
 *     z[i]                          lambda_N of contact i            (ncon)
 *     z[ncon + m i + k]             alpha_k of contact i             (ncon x m)
 *     z[ncon + ncon m + i]          beta of contact i                (ncon)
 * with A and b built from the contact problem (problem.h: G = J M^-1 J^T in each contact's
 * frame (n, t1, t2), g = J v_f + (phi/dt, 0, 0)) and the m balanced directions
 * d_k = cos(2 pi k / m) t1 + sin(2 pi k / m) t2, D_i = [d_0 .. d_{m-1}] (2 x m):
 *     A = [[G_NN,      G_NT D,      0],        b = [g_N; D^T g_T; 0],
 *          [D^T G_TN,  D^T G_TT D,  E],        lambda_T = D alpha.
 *          [M_mu,      -E^T,        0]]
 * See lcp.c for the backend, lcp_lemke.h and lcp_bgs.h for the two solvers.
 */
#ifndef CD_LCP_H
#define CD_LCP_H

#include <math.h>

#include "backend.h"
#include "problem.h"

extern const cdBackend cd_backendLcp;

/* the default solver: Lemke (dense A: n^2 doubles, O(n^2) a pivot) while the LCP has at
 * most this many variables n = ncon (m + 2) (a few contacts: one cube on the ground), the
 * active-set method (lcp_newton.c) above */
#define CD_LCP_AUTO_LEMKE_MAX 48
/* an explicit --solver lemke still falls back to bgs above this size (A would need
 * 8 n^2 bytes: 72 MB here) */
#define CD_LCP_LEMKE_MAX 3000
/* the pivot limit of Lemke inside the simulation (the solver's own default, 20 n + 1000, is
 * for general LCPs such as Murty's 2^n - 1 pivot example) */
#define CD_LCP_LEMKE_PIVOTS(n) (3 * (n) + 100)

/* y = G x (x, y: 3 ncon), the Delassus product of the subspace GMRES (lcp_subspace.c) and
 * the active-set method (lcp_newton.c): through the velocity-space form, y = (J M^-1)(J^T x)
 * (problem.h: JM, J; O(contacts + bodies)), when that takes fewer multiply-adds than the
 * assembled G (9 a block), else with G (cd_blockMatrixMul). With four corner contacts a cube
 * face a row of G has 11 blocks on a 10-cube stack and 23 on the 55-cube pyramid (there 84k
 * multiply-adds a product against 29k through the bodies); on sphere piles (a few blocks a
 * row) G is cheaper. While G is not built (p->delassus_pending: the active-set method's body
 * form needs none) it is J (M^-1 (J^T x)), M^-1 applied body by body. wb:
 * cd_lcpDelassusScratch(p) doubles (NULL when that is 0). The forms agree to roundoff. */
void cd_lcpDelassusMul(const cdContactProblem *p, const double *x, double *y, double *wb);
/* the scratch cd_lcpDelassusMul needs: 6 nbody doubles when it goes through the bodies (G
 * not built, or dearer), else 0 */
size_t cd_lcpDelassusScratch(const cdContactProblem *p);

/* variables of the LCP: ncon (m + 2) */
int cd_lcpSize(int ncon, int m);

/* the m directions as the columns of D (2 x m, column-major: D[2k], D[2k+1] = cos, sin) */
void cd_lcpDirections(int m, double *D);

/* the (m + 1) x (m + 1) block [[G_nn, G_nt D], [D^T G_tn, D^T G_tt D]] of a 3x3 row-major
 * G block (the coupling of (lambda_n, alpha) of two contacts) into T(r, c) = T[r + ld c] */
void cd_lcpCouplingBlock(const double *Gb, int m, const double *D, double *T, int ld);

/* the dense A (n x n column-major, n = cd_lcpSize) and b (n) of the LCP above */
void cd_lcpBuildDense(const cdContactProblem *p, int m, const double *D, double *A, double *b);

/* lambda (3 ncon, (n, t1, t2) per contact) = (lambda_N, D alpha) of z */
void cd_lcpLambdaFromZ(int ncon, int m, const double *D, const double *z, double *lambda);

/* alpha (m) >= 0 with D alpha = lt (2, in (t1, t2)) and the least e^T alpha: lt split over
 * the two directions of the polygon's sector that holds it, the nearest direction d_k (the
 * lowest k on a tie) and its neighbour on lt's side (exact up to roundoff; zero for lt = 0).
 * The one conversion from lambda_T to alpha of every LCP solver. */
static inline void cd_lcpAlphaFromTangent(int m, const double *D, const double *lt, double *alpha) {
  for (int l = 0; l < m; l++) alpha[l] = 0.0;
  if (lt[0] == 0.0 && lt[1] == 0.0) return;
  /* the nearest direction d_k (largest d_k . lt, the lowest k on a tie) and its neighbour on
   * lt's side (the next one counter-clockwise when lt lies along d_k) */
  int k = 0;
  double dmax = -INFINITY;
  for (int l = 0; l < m; l++) {
    double d = D[2 * l] * lt[0] + D[2 * l + 1] * lt[1];
    if (d > dmax) dmax = d, k = l;
  }
  const double *dk = &D[2 * k];
  int l = dk[0] * lt[1] - dk[1] * lt[0] >= 0.0 ? (k + 1) % m : (k + m - 1) % m;
  const double *dl = &D[2 * l];
  double det = dk[0] * dl[1] - dk[1] * dl[0]; /* +-sin(2 pi / m) */
  double ak = (lt[0] * dl[1] - lt[1] * dl[0]) / det, al = (dk[0] * lt[1] - dk[1] * lt[0]) / det;
  /* fmax(0, x) written out (a libm call at -O2; the same value, NaN and -0 included) */
  alpha[k] = 0.0 > ak || ak != ak ? 0.0 : ak;
  alpha[l] = 0.0 > al || al != al ? 0.0 : al;
}

/* w = A z + b (n) without forming A: O(nnz(G) + ncon m). work: (6 ncon) */
void cd_lcpEvaluate(const cdContactProblem *p, int m, const double *D, const double *z, double *w, double *work);

/* the LCP's residual (problem.h: one residual for every model): ||min(S z, A z + b)||_inf /
 * vscale, where S takes each impulse unknown to a velocity (lambda_N and alpha of contact i
 * divided by meff_i) and the bound row mu lambda_N - sum alpha likewise (its pair beta is a
 * velocity already): every pair compared in m/s, relative to ||g||_inf; zero exactly at a
 * solution. Computed blockwise like cd_lcpEvaluate. work: (6 ncon) */
double cd_lcpResidual(const cdContactProblem *p, int m, const double *D, const double *z, double *work);

/* the units of the residual for a dense solver (Lemke): sc (n) = 1 / meff_i for lambda_N and
 * alpha of contact i, 1 for beta; z' = S z / vscale, w' = R w / vscale with S = diag(sc) and
 * R = 1 on the velocity rows, 1 / meff_i on the bound rows; A' = R A S^-1, b' = R b / vscale:
 * the same complementarity in any unit of mass. dir = 1 scales A, b (may be NULL) and z;
 * dir = -1 takes z back. */
void cd_lcpScaleDense(const cdContactProblem *p, int m, double *sc, double *A, double *b, double *z, int dir);

/* contact i's part of cd_lcpResidual before the division by vscale (m/s), from z and the
 * contact's velocity u (3) = (G lambda(z) + g)_i: cd_lcpContactResidualOf with wi = 1 / meff_i */
double cd_lcpContactResidual(const cdContactProblem *p, int m, const double *D, const double *z, const double *u,
                             int i);

/* cd_lcpResidual of z from the contact velocities u (3 ncon) = G lambda(z) + g: the largest
 * cd_lcpContactResidual (cd_lcpResidualMax) over vscale */
double cd_lcpResidualOfVelocity(const cdContactProblem *p, int m, const double *D, const double *z, const double *u);

/* one complementary pair's violation fabs(fmin(z, w)) (where one of them is NaN: the other),
 * written out: fmin is a libm call at -O2, 4% of a 1000-sphere pile's run under bgs */
static inline double cd_lcpPairResidual(double z, double w) { return fabs(z < w ? z : w != w ? z : w); }

/* the larger of a and b, a when b is NaN: fmax where a is a number (every use: running maxima
 * that start at one, and cd_lcpMax(0, x)), up to the sign of a zero result. fmax is a libm
 * call at -O2, and a block solve of bgs takes 10 to 20 of them (3 % of a 1000-sphere pile's
 * run); this is one maxsd on x86-64 (the test that also gave b's NaN to an a that was NaN
 * cost four instructions more: 2 % of the pile's instructions) */
static inline double cd_lcpMax(double a, double b) { return b > a ? b : a; }

/* the smallest beta >= 0 with D^T u_T + e beta >= 0 for u_T = (u1, u2): the sliding speed along
 * the most opposed d_k (a separated contact's beta; the sliding one's of seed 000), by
 * cd_lcpMax (a NaN term is passed over, as fmax does; beta is +0 where every term is 0 or -0):
 * bgs's sweeps take it for a third of their blocks */
static inline double cd_lcpSlipSpeed(int m, const double *D, double u1, double u2) {
  double beta = 0.0;
  for (int l = 0; l < m; l++) beta = cd_lcpMax(beta, -(D[2 * l] * u1 + D[2 * l + 1] * u2));
  return beta;
}

/* the larger of two residuals, NaN when either is NaN (the first NaN stays: a later number
 * does not replace it) */
static inline double cd_lcpResidualMax(double a, double b) { return a != a || b <= a ? a : b; }

/* the one arithmetic of a contact's part of the residual (cd_lcpContactResidual, and bgs's
 * checks, which keep wi per contact instead of dividing per check): contact i of ncon with
 * mu = mu_i and wi = 1 / meff_i, z in the layout above and its u (3) = (G lambda(z) + g)_i.
 * NaN when any of the contact's z or u is not finite: the pairs' fmin would hide a NaN on
 * one side (a NaN beta is in no pair's min), and no solver may take such a z as converged.
 * With that settled at the end, the pairs and their largest are plain compares (minsd and
 * maxsd, no NaN branches: cd_lcpPairResidual's and cd_lcpResidualMax's values wherever the
 * inputs are finite). */
static inline double cd_lcpContactResidualOf(int ncon, int m, const double *D, const double *z, const double *u, int i,
                                             double wi, double mu) {
  double beta = z[ncon + ncon * m + i], sum = 0.0, v = wi * z[i], w = u[0];
  double res = fabs(v < w ? v : w);
  for (int l = 0; l < m; l++) {
    double a = z[ncon + m * i + l];
    v = wi * a, w = D[2 * l] * u[1] + D[2 * l + 1] * u[2] + beta;
    v = fabs(v < w ? v : w);
    res = cd_lcpMax(res, v);
    sum += a;
  }
  w = wi * (mu * z[i] - sum);
  v = fabs(beta < w ? beta : w);
  res = cd_lcpMax(res, v);
  /* 0 * (a sum of the inputs) is NaN exactly when one of them is infinite or NaN */
  double finite = 0.0 * (z[i] + sum + beta + u[0] + u[1] + u[2]);
  return finite == 0.0 ? res : NAN;
}

#endif
