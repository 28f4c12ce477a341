/* lcp_bgs.c: block Gauss-Seidel for the Anitescu-Hart contact LCP.
 *
 * Problem: 0 <= z perp A z + b >= 0 with z = (lambda_N, alpha, beta) and A, b as in lcp.h
 * (seed 000; Anitescu & Hart, IJNME 2004): per contact i the unknowns are the normal
 * impulse lambda_n (N s), the m friction-direction impulses alpha_k (N s) and the
 * friction-bound multiplier beta (m/s, the sliding speed).
 *
 * Algorithm: sweep the contacts in the caller's order (lcp.c: bottom-up), forward only while
 * the active-set tries are on, else with odd sweeps backwards (symmetric Gauss-Seidel; see
 * "Directions" below), leaving out the idle ones: a contact without impulse
 * whose u_n exceeded IDLE_MARGIN vscale at the last residual check is solved (separated,
 * beta its slip speed) by that check itself and not again until the next.
 * For contact i, fix the other contacts' z_j; its (m + 2) variables then solve the small LCP
 *     0 <= z_i  perp  A_ii z_i + q_i >= 0,    q_i = b_i + sum_{j != i} A_ij z_j,
 *     A_ii = [[G_nn, G_nt D, 0], [D^T G_tn, D^T G_tt D, e], [mu, -e^T, 0]].
 * An exact block solve is needed: the beta row and column of A_ii have a zero diagonal, so
 * a projected Gauss-Seidel step on single variables is undefined there. The coupling stays
 * implicit: since E and M_mu are block diagonal, A_ij z_j (j != i) only involves G_ij and
 * lambda_j = (lambda_n, D alpha)_j, so
 *     q_i = [c_n; D^T c_T; 0],   c = g_i + sum_{j != i} G_ij lambda_j,
 * one block row of G: a sweep costs O(nnz(G) + ncon m) = O(contacts). The rows the sweeps
 * read (without the diagonal and idle blocks) are laid out in sweep order when a check
 * changes the idle contacts, each contact with its record (W, g_i, 1 / meff_i, mu_i, and W's
 * adjugate and determinant for the sticking candidate), made once a solve.
 * Block solve (cd_bgsBlockSolve): with W = G_ii and u = W lambda + c, every solution is one
 * of the active sets of the contact, each a closed form: separated (lambda = 0, u = c,
 * c_n >= 0), sticking (u = 0: lambda = -W^-1 c, lambda_T inside the polygon mu lambda_n,
 * beta = 0), sliding along one direction d_k (lambda = lambda_n (1, mu d_k), u_n = 0,
 * beta = -d_k . u_T the largest of -D^T u_T) or along two adjacent ones (u_T opposite their
 * bisector: a 2x2 solve). A contact without normal impulse whose c_n >= 0 takes the
 * separated candidate before anything else is computed (a third of the pile's block
 * solves). Else the active set the contact's current z shows is tried first (near
 * convergence a sweep finds nearly every contact where it was: one candidate a block; on the
 * 1000-sphere pile the block solve took 37 % of the run when every block began with the
 * separated and sticking candidates), then separated, sticking and the slides (the
 * direction the contact slid along last first), and the first whose block residual is at
 * roundoff level is taken (separated with c_n >= 0 without computing it: it is zero);
 * when none is (a singular W, ties between active sets), Lemke's method (lcp_lemke.c; A_ii
 * is copositive-plus for a positive semidefinite G_ii, Anitescu & Potra 1997) solves the
 * block on a preallocated workspace. No allocation per block. For m = 4 with lcp.c's
 * directions (the default: the unit axes) the block solve, a sweep's block and the checks'
 * contact residual are instances of their own (isAxes4: the products with D taken as
 * components, everything they call written in, the sticking candidate accepted by its
 * friction pair under a rounding bound), the same decisions and values as for any m.
 * Sweeps find active sets fast but carry the load through a pile or a stack by a percent a
 * sweep; a linear solve on the active set carries it at once. Two ways, one per caller:
 * Active-set tries (when the caller gives the workspace of lcp_newton.c: the default and
 * --solver newton): the active-set method from the sweeps' iterate, exact on its modes and
 * nearest the iterate, when the residual first reaches NEWTON_RES and at the points listed
 * there, each at most CD_BGS_TRY_SETS active sets (a try that needs more mostly fails);
 * a try that solves ends the solve, one that does not leaves the sweeps' iterate,
 * and one that stops at the caller's cost bound (lu_flops_max) ends the tries: the subspace
 * steps below take over.
 * Subspace steps (otherwise: --solver bgs): every SUBSPACE_EVERY sweeps while the residual is
 * above the threshold, the LCP restricted to the active set the sweeps have found is solved
 * by GMRES (lcp_subspace.c) and projected back; the sweeps then go on from that candidate,
 * and SUBSPACE_EVERY sweeps later it is kept if the residual is below where it started, else
 * the iterate before it is restored (make bench, the 1000-sphere pile: 107 sweeps a solve on
 * average instead of 710). On the same pile the active-set tries take 40 % fewer
 * instructions a step than the subspace steps (GMRES(30) with up to 8 active-set passes
 * every 10 sweeps was four fifths of the solve).
 * Clusters: where the sweeps stall (the residual has not fallen tenfold in STALL_SWEEPS
 * sweeps; rigid clusters such as a ring of spheres or a stack of cubes make near-null
 * modes of G that Gauss-Seidel damps by a percent in tens of sweeps), the contacts around
 * the worst ones are taken as one larger block and solved exactly by Lemke (see the
 * cluster section below; with the active-set tries, only after CLUSTER_WAIT sweeps). Still
 * block Gauss-Seidel: the fixed points are the LCP's. With the tries, a stall test after
 * DRIFT_WAIT sweeps takes a drift step where it can instead (the clusters keep the tests
 * between, at most DRIFT_STEPS a run): the iterate moved along the sweeps' own step to a few
 * mode boundaries ahead, where the next try finds the modes the sweeps were creeping towards
 * (see DRIFT_K).
 * Directions: symmetric sweeps carry information both ways along a chain of contacts such
 * as a stack within one pair of sweeps (the forward sweep the support up from the ground,
 * the backward one the weight down), which the sweeps alone need: under --solver bgs the
 * 10-cube stack (cube-stack, 100 steps) takes 6.0 sweeps a step symmetric and 12.5 forward
 * only. With the tries, an exact solve carries the load and the sweeps find the modes, and
 * there the alternation stalls them: on the 1000-sphere pile (S2 10, step 279) the iterate
 * after each forward sweep and the one after each backward sweep repeated each other for
 * 1,900 sweeps (residual 2.4e-5 and 6.2e-5 in turn, the same modes, drifting by 1e-9 a
 * pair), a two-cycle that no try from either escaped. Forward only while the tries are on,
 * measured on five piles of S2 10's kind (S2 10 and four with the scene generator's seed
 * moved by 1, 2, 6, 8; 400 steps each), iterations a step 89.9 / 140.2 / 100.8 / 93.8 /
 * 102.5 -> 67.2 / 73.1 / 63.9 / 71.6 / 66.8, user CPU 36.6 and 38.2 s -> 25.9 and 26.3 s
 * summed (two alternating runs), the slowest step 20-43 times the median on every pile ->
 * 9-14 times on four and 31 on one (lcp.c's COLD_ABOVE took that one to 16), every step
 * converged; the bundled pile-1000 130.0 -> 89.2 and sphere-pile 48.6 -> 31.5 iterations a
 * step; S3 20, S4 10 and the other bundled scenes bit for bit the same. Symmetric with the
 * first sweep backwards (so that the checks and tries see the iterate after a forward sweep):
 * 502 summed iterations a step against 527, so it is the alternation; backward only: 353;
 * forward only after the first 100 / 200 / 400 sweeps: 458 / 453 / 503. Under --solver bgs
 * forward only would take the pile from 138.5 to 71.4 sweeps a step (100 steps), sphere-pile
 * 52.2 -> 31.8, and the stack above twice its sweeps, so the sweeps alone stay symmetric, as
 * do those after a try over the cost bound (the subspace steps take over: the 4096-sphere
 * pile's impacts, whose first 100 steps took 820 iterations a step and left one step at the
 * sweep limit at 2.9e-8; now 905 and two, at most 1.2e-6; forward there too: 871 and one at
 * 3.9e-6; user CPU 338, 333 and 353 s: one trajectory, within its lottery).
 * Stopping rule: cd_lcpResidual <= tolerance (||min(S z, A z + b)||_inf / ||g||_inf, impulses
 * as velocities: lcp.h), evaluated every second sweep, with the active-set tries only where
 * the sweep's largest block step says it may be near a threshold, at steps counted in
 * sweeps and every CHECK_MAX sweeps (STEP_GATE), and at the sweep limit;
 * only this check stops the sweeps; the iterate of smallest residual is returned (the method is not monotone
 * for the non-symmetric A), and converged says honestly whether it met the rule.
 * References: NUMERICS.md (block Gauss-Seidel for the Anitescu-Hart LCP: "enumerate stick /
 * slide along each edge"); Cottle, Pang & Stone, The Linear Complementarity Problem,
 * ch. 5 (splitting methods).
 */
#include "lcp_bgs.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "lcp.h"
#include "lcp_lemke.h"
#include "lcp_newton.h"
#include "lcp_subspace.h"
#include "vec3.h"

/* ---- the block LCP of one contact ---- */

/* a closed-form candidate with at most this block residual (relative to max(1, ||q||)) is
 * taken at once: it is a solution up to roundoff. Anything between this and the block
 * tolerance is kept as the best candidate while the other active sets are tried. */
#define BLOCK_ACCEPT 1e-13
#define BLOCK_TOL 1e-10

size_t cd_bgsBlockWorkSize(int m) {
  size_t k = (size_t)(m + 2);
  return (k * k + 4 * k) * sizeof(double) + cd_lemkeWorkSize(m + 2);
}

/* ||min(S z, R w)||_inf of the block's z = (ln, alpha (m), beta) with u = W lambda + c, in
 * the residual's units (lcp.h): the impulses and the bound row times wi = 1 / meff */
static double blockResidual(const double *W, double mu, int m, const double *D, const double *c, double wi,
                            const double *z) {
  double ln = z[0], t1 = 0.0, t2 = 0.0, sum = 0.0, beta = z[m + 1];
  for (int l = 0; l < m; l++) {
    double a = z[1 + l];
    t1 += D[2 * l] * a;
    t2 += D[2 * l + 1] * a;
    sum += a;
  }
  double un = W[0] * ln + W[1] * t1 + W[2] * t2 + c[0];
  double u1 = W[3] * ln + W[4] * t1 + W[5] * t2 + c[1];
  double u2 = W[6] * ln + W[7] * t1 + W[8] * t2 + c[2];
  double res = cd_lcpPairResidual(wi * ln, un);
  for (int l = 0; l < m; l++) {
    double v = cd_lcpPairResidual(wi * z[1 + l], D[2 * l] * u1 + D[2 * l + 1] * u2 + beta);
    if (!(v <= res)) res = v;
  }
  double v = cd_lcpPairResidual(beta, wi * (mu * ln - sum));
  return v <= res ? res : v;
}

/* what a block solve needs of contact i that does not change within a solve, one record of
 * BLOCK_REC doubles (the sweeps keep them in sweep order, cdBgsRows): W = G_ii (row-major),
 * g_i, 1 / meff_i, mu_i, and W's adjugate and determinant for the sticking candidate (the
 * determinant 0 where W is singular to the candidate's test). Made once a solve instead of
 * at every sticking try (the adjugate and the test were a third of the sticking candidate's
 * instructions on the 1000-sphere pile), and 1 where the sticking candidate's rounding bound
 * holds (STICK_K), else 0. */
enum { REC_W = 0, REC_G = 9, REC_WI = 12, REC_MU = 13, REC_ADJ = 14, REC_DET = 23, REC_STICK = 24, BLOCK_REC = 25 };

/* The sticking candidate's acceptance without its block residual (blockSolve4, the unit axes).
 * Its equalities hold up to rounding: u = W lambda + c = 0, with lambda = -adj(W) c / det
 * (blockRecord's adjugate and determinant; the split of lambda_T into alpha and the residual's
 * sums back give lambda_T exactly on the axes, as no alpha is clipped), so every pair of its
 * residual but the friction bound's is at most |u_r| as the residual computes it (each pairs
 * lambda_n or an alpha >= 0 with u_n or +-u_T, beta being 0). Rounding analysis (unit roundoff
 * eps = 2^-53; the adjugate's entries within 2 eps of the sums of their products' magnitudes,
 * Cabs; the determinant within 6 eps of (|W| Cabs)_00; each lambda_i within 4 eps of (Cabs
 * |c|)_i / |det|; the residual's rows within 4 eps of their terms' magnitudes): |u_r| <= 16.01
 * eps (K + 1) ||c||_inf with K = || |W| Cabs ||_inf / |det|. With K <= STICK_K that is below
 * 16.01 * 1.111e-16 * 33 = 5.9e-14 ||c||_inf < BLOCK_ACCEPT qinf (qinf = ||c||_inf on the axes),
 * so the residual is at most BLOCK_ACCEPT exactly where the friction pair is: the same
 * decision, and the same answer bit for bit. The records where it does not hold (a nearly
 * singular or badly scaled W: K is ~1 for a sphere's contact), and c outside [STICK_QMIN,
 * STICK_QMAX] (no underflow or overflow in the products), take the residual. Audited in a
 * scratch build that computed the residual beside it: S2 10's 400 steps, 15.1M sticking
 * candidates, every record within the bound, no decision different, the largest other pair
 * 5.4 eps ||c||_inf (S4 10 under --solver bgs, 100 steps: 46.7M, 7.6 eps); the run's first 60
 * steps 6.531G -> 6.379G instructions. */
#define STICK_K 32.0
#define STICK_QMIN 1e-150
#define STICK_QMAX 1e150

static void blockRecord(const double *W, const double *g, double wi, double mu, double *r) {
  for (int t = 0; t < 9; t++) r[REC_W + t] = W[t];
  for (int t = 0; t < 3; t++) r[REC_G + t] = g ? g[t] : 0.0;
  r[REC_WI] = wi;
  r[REC_MU] = mu;
  double det = cd_m3adjugate(&r[REC_ADJ], W), wmax = 0.0;
  for (int t = 0; t < 9; t++) wmax = cd_lcpMax(wmax, fabs(W[t]));
  r[REC_DET] = fabs(det) > 1e-12 * wmax * wmax * wmax ? det : 0.0;
  /* K (STICK_K): the adjugate's products' magnitudes (as cd_m3adjugate pairs them), then the
   * largest row sum of |W| Cabs */
  const double *A = W;
  double ca[9] = {fabs(A[4] * A[8]) + fabs(A[5] * A[7]), fabs(A[2] * A[7]) + fabs(A[1] * A[8]),
                  fabs(A[1] * A[5]) + fabs(A[2] * A[4]), fabs(A[5] * A[6]) + fabs(A[3] * A[8]),
                  fabs(A[0] * A[8]) + fabs(A[2] * A[6]), fabs(A[2] * A[3]) + fabs(A[0] * A[5]),
                  fabs(A[3] * A[7]) + fabs(A[4] * A[6]), fabs(A[1] * A[6]) + fabs(A[0] * A[7]),
                  fabs(A[0] * A[4]) + fabs(A[1] * A[3])};
  double nk = 0.0;
  for (int a = 0; a < 3; a++) {
    double row = 0.0;
    for (int b = 0; b < 3; b++)
      row += fabs(A[3 * a]) * ca[b] + fabs(A[3 * a + 1]) * ca[3 + b] + fabs(A[3 * a + 2]) * ca[6 + b];
    nk = cd_lcpMax(nk, row);
  }
  r[REC_STICK] = r[REC_DET] != 0.0 && wmax >= 1e-100 && wmax <= 1e100 && nk <= STICK_K * fabs(det) ? 1.0 : 0.0;
}

/* the candidates of blockSolve: each writes one active set's closed form into cand (m + 2)
 * and returns 1, or 0 when that active set has no solution here */

/* separated: no impulse, u = c, beta the slip speed */
static int candSeparated(int m, const double *D, const double *c, double *cand) {
  for (int l = 0; l <= m; l++) cand[l] = 0.0;
  cand[m + 1] = cd_lcpSlipSpeed(m, D, c[1], c[2]);
  return 1;
}

/* sticking: u = 0, lambda = -W^-1 c with lambda_n > 0, alpha its split, beta = 0; C, det:
 * W's adjugate and determinant (det 0: W singular) */
static int candStick(const double *C, double det, int m, const double *D, const double *c, double *cand) {
  if (det == 0.0) return 0;
  double ln = -(C[0] * c[0] + C[1] * c[1] + C[2] * c[2]) / det;
  if (!(ln > 0.0)) return 0;
  double lt[2] = {-(C[3] * c[0] + C[4] * c[1] + C[5] * c[2]) / det, -(C[6] * c[0] + C[7] * c[1] + C[8] * c[2]) / det};
  cand[0] = ln;
  cd_lcpAlphaFromTangent(m, D, lt, &cand[1]);
  cand[m + 1] = 0.0;
  return 1;
}

/* sliding along d_a alone: lambda = ln (1, mu d_a), u_n = 0, beta = -d_a . u_T */
static int candVertex(const double *W, double mu, int m, const double *D, const double *c, int a, double *cand) {
  const double *da = &D[2 * a];
  double den = W[0] + mu * (W[1] * da[0] + W[2] * da[1]);
  if (!(den > 0.0 && c[0] < 0.0)) return 0;
  double ln = -c[0] / den;
  double u1 = W[3] * ln + mu * ln * (W[4] * da[0] + W[5] * da[1]) + c[1];
  double u2 = W[6] * ln + mu * ln * (W[7] * da[0] + W[8] * da[1]) + c[2];
  for (int l = 1; l <= m; l++) cand[l] = 0.0;
  cand[0] = ln;
  cand[1 + a] = mu * ln;
  cand[m + 1] = cd_lcpMax(0.0, -(da[0] * u1 + da[1] * u2));
  return 1;
}

/* sliding along d_a and d_b = d_(a+1) (u_T opposite their bisector): u = x_a v_a + x_b v_b + c
 * with v = W (1 / mu, d); u_n = 0 and (d_a - d_b) . u_T = 0 fix x_a, x_b > 0 */
static int candEdge(const double *W, double mu, int m, const double *D, const double *c, int a, double *cand) {
  if (!(mu > 0.0)) return 0;
  int b = (a + 1) % m;
  const double *da = &D[2 * a], *db = &D[2 * b];
  double va[3], vb[3], s[2] = {da[0] - db[0], da[1] - db[1]};
  for (int r = 0; r < 3; r++) {
    va[r] = W[3 * r] / mu + W[3 * r + 1] * da[0] + W[3 * r + 2] * da[1];
    vb[r] = W[3 * r] / mu + W[3 * r + 1] * db[0] + W[3 * r + 2] * db[1];
  }
  double m00 = va[0], m01 = vb[0], m10 = s[0] * va[1] + s[1] * va[2], m11 = s[0] * vb[1] + s[1] * vb[2];
  double r0 = -c[0], r1 = -(s[0] * c[1] + s[1] * c[2]);
  double det = m00 * m11 - m01 * m10, scale = cd_lcpMax(fabs(m00), fabs(m01)) * cd_lcpMax(fabs(m10), fabs(m11));
  if (!(fabs(det) > 1e-12 * scale)) return 0;
  double xa = (r0 * m11 - m01 * r1) / det, xb = (m00 * r1 - m10 * r0) / det;
  if (!(xa > 0.0 && xb > 0.0)) return 0;
  double u1 = xa * va[1] + xb * vb[1] + c[1], u2 = xa * va[2] + xb * vb[2] + c[2];
  for (int l = 1; l <= m; l++) cand[l] = 0.0;
  cand[0] = (xa + xb) / mu;
  cand[1 + a] = xa;
  cand[1 + b] = xb;
  cand[m + 1] = cd_lcpMax(0.0, -(da[0] * u1 + da[1] * u2));
  return 1;
}

/* cd_bgsBlockSolve on the contact's record r (blockRecord), for any m; blockSolve below
 * instantiates it for m = 4 */
static inline int blockSolveAny(const double *r, int m, const double *D, const double *c, double vref, double *z,
                                void *work) {
  int k = m + 2;
  const double *W = &r[REC_W];
  double mu = r[REC_MU], wi = r[REC_WI];
  int sliding = z[0] > 0.0 && z[m + 1] > 0.0, sticking = z[0] > 0.0 && !sliding;
  /* separated with c_n >= 0 solves the block exactly (every pair of its residual is zero:
   * beta is the largest -d_k . c_T, so each d_k . c_T + beta >= 0 in floating point too):
   * taken without its block residual, the same as BLOCK_TRY would take it; a contact found
   * separated takes it at once (a third of the pile's block solves) */
  if (c[0] >= 0.0 && !sliding && !sticking) return candSeparated(m, D, c, z), CD_BGS_BLOCK_DIRECT;
  double *cand = work, *best = cand + k, *B = best + k, *q = B + (size_t)k * (size_t)k, *zl = q + k;
  void *lw = zl + k;
  double qinf = fabs(c[0]);
  for (int l = 0; l < m; l++) qinf = cd_lcpMax(qinf, fabs(D[2 * l] * c[1] + D[2 * l + 1] * c[2]));
  double accept = BLOCK_ACCEPT * cd_lcpMax(vref, qinf), check = BLOCK_TOL * cd_lcpMax(vref, qinf), bestres = INFINITY;

#define BLOCK_TRY(made)                                                                 \
  do {                                                                                  \
    if (made) {                                                                         \
      double r_ = blockResidual(W, mu, m, D, c, wi, cand);                              \
      if (r_ <= accept) {                                                               \
        for (int l_ = 0; l_ < k; l_++) z[l_] = cand[l_];                                \
        return CD_BGS_BLOCK_DIRECT;                                                     \
      }                                                                                 \
      if (r_ < bestres) {                                                               \
        bestres = r_;                                                                   \
        for (int l_ = 0; l_ < k; l_++) best[l_] = cand[l_];                             \
      }                                                                                 \
    }                                                                                   \
  } while (0)

  /* the active set the contact is in first (a sweep near convergence finds most contacts
   * where they were: one candidate a block), then separated, sticking and the slides */
  if (sticking) BLOCK_TRY(candStick(&r[REC_ADJ], r[REC_DET], m, D, c, cand));
  /* the direction the contact slid along last (the largest alpha) and its neighbour on the
   * side of the larger other alpha */
  int k0 = 0;
  for (int l = 1; l < m; l++)
    if (z[1 + l] > z[1 + k0]) k0 = l;
  int kprev = (k0 + m - 1) % m, ke = z[1 + kprev] > z[1 + (k0 + 1) % m] ? kprev : k0;
  if (sliding) {
    BLOCK_TRY(candVertex(W, mu, m, D, c, k0, cand));
    BLOCK_TRY(candEdge(W, mu, m, D, c, ke, cand));
  }
  if (c[0] >= 0.0) return candSeparated(m, D, c, z), CD_BGS_BLOCK_DIRECT;
  BLOCK_TRY(candSeparated(m, D, c, cand));
  if (!sticking) BLOCK_TRY(candStick(&r[REC_ADJ], r[REC_DET], m, D, c, cand));
  for (int j = 0; j < m; j++) {
    int a = (k0 + j) % m;
    if (!sliding || j) BLOCK_TRY(candVertex(W, mu, m, D, c, a, cand));
    if (!sliding || a != ke) BLOCK_TRY(candEdge(W, mu, m, D, c, a, cand));
  }
#undef BLOCK_TRY

  /* degenerate (a singular W, ties between active sets at roundoff): Lemke on the block */
  int rc = CD_BGS_BLOCK_DIRECT;
  if (!(bestres <= check)) {
    /* in the residual's units, relative to vref (as lcp.c scales the whole LCP): the
     * impulse columns divided by wi, the bound row multiplied by it, then z back */
    memset(B, 0, (size_t)k * (size_t)k * sizeof *B);
    cd_lcpCouplingBlock(W, m, D, B, k);
    for (int t = 0; t < (m + 1) * k; t++) B[t] /= wi;
    for (int l = 0; l < m; l++) {
      B[(1 + l) + (size_t)(m + 1) * (size_t)k] = 1.0; /* E */
      B[(m + 1) + (size_t)(1 + l) * (size_t)k] = -1.0; /* -E^T (times wi / wi) */
    }
    B[m + 1] = mu; /* M_mu: row m + 1, column 0 (likewise) */
    q[0] = c[0] / vref;
    for (int l = 0; l < m; l++) q[1 + l] = (D[2 * l] * c[1] + D[2 * l + 1] * c[2]) / vref;
    q[m + 1] = 0.0;
    cdLemkeOptions lo = {.work = lw};
    int st = cd_lemkeSolve(k, B, q, zl, &lo, NULL);
    for (int l = 0; l <= m; l++) zl[l] *= vref / wi;
    zl[m + 1] *= vref;
    if (st == CD_LEMKE_SOLVED || st == CD_LEMKE_INACCURATE) {
      double res = blockResidual(W, mu, m, D, c, wi, zl);
      if (res < bestres) {
        bestres = res;
        memcpy(best, zl, (size_t)k * sizeof *best);
        rc = CD_BGS_BLOCK_LEMKE;
      }
    }
  }
  if (!(bestres <= check)) rc = CD_BGS_BLOCK_FAILED;
  if (bestres < INFINITY) memcpy(z, best, (size_t)k * sizeof *z);
  return rc;
}

/* ---- the default directions: the unit axes ---- */

/* lcp.c's directions for m = 4 are the unit axes (t1, t2, -t1, -t2) exactly, so a product
 * D[2 l] x + D[2 l + 1] y is one of x, y, -x, -y plus a zero product: the same value wherever
 * x and y are finite, up to the sign of a zero result (x + (+-0) is x for any x but -0). The
 * m = 4 instance of the block solve and of a sweep's block (blockSolve4, sweepBlock4) take the
 * component for the product wherever the sum reaches only a test, fabs or cd_lcpMax(0, .)
 * (which treat both zeros alike), and keep the products where a zero's sign is kept (alpha's
 * split into z); the sums of alphas are written as the sums the products make (t1 = (0 + a_0) -
 * a_2: the zero products change no partial sum). So the same answers bit for bit wherever the
 * values are finite (a non-finite c reaches z either way, and the checks stop on it;
 * tests/test_lcp.c compares the two instances on random blocks). Measured on the 1000-sphere
 * pile (S2 10, its first 60 steps, callgrind): the whole run 7.252G -> 6.541G instructions
 * (cd_bgsSolve's own, the sweeps nearly all of it, 2.977G -> 2.220G: the qinf loop's four
 * products 29 instructions a block with candidates, the residual's 109 a call -> ~50, the
 * block's copies in and out loops of 4 that -O2 does not unroll, 113 a block -> ~75); its
 * answers (400 steps; S3 20, S4 10) bit for bit the same. Any other m or D (bitwise: -0
 * entries too) takes the instances of any m. */
static const double axes4[8] = {1.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, -1.0};

static int isAxes4(int m, const double *D) { return m == 4 && memcmp(D, axes4, sizeof axes4) == 0; }

/* d_l . (x, y) for the unit axes, without the products (see above) */
static inline double axisDot(int l, double x, double y) {
  double v = l & 1 ? y : x;
  return l & 2 ? -v : v;
}

/* the residual of one complementarity pair, |min(v, w)|: as fabs(max(-v, -w)) where wpos
 * (cd_lcpMax: one maxsd, where GCC compiled the min to a compare and a branch, taken at ~40 %
 * of the pairs). The two differ only in a zero's sign, which fabs drops, or where v or w is
 * NaN; with wi finite and positive (rowsRecords' wpos) and the contact's z and u finite neither
 * is (a product or a sum of two finite numbers is finite or infinite), and where one of those
 * is not finite contactResidual4's value is NaN either way (its finite test). S2 10's first 60
 * steps 4.236G -> 4.224G, sweepCheck 121.8M -> 109.6M with what it inlines */
static inline double pairRes4(double v, double w, int wpos) {
  return wpos ? fabs(cd_lcpMax(-v, -w)) : fabs(v < w ? v : w);
}

/* blockResidual for the unit axes: the same value (t1, t2 and sum are the sums the products
 * make; each pair's w is u1, u2, -u1 or -u2 plus beta). fast: wi is finite and positive
 * (wpos) and no entry of z is NaN, so no pair's v = wi z_k (or beta) is NaN: each pair is then
 * pairRes4's max form and the running maxima cd_lcpMax, the same value (where v is a number, the
 * min form gives |v| for a NaN w as the max form does, and both give |min(v, w)| else; with no
 * pair NaN, !(v <= res) is v > res): each pair in a max instead of two compares and branches
 * (S2 10's first 60 steps 4.045G -> 4.010G, with the sticking pair's max form below) */
static inline double blockResidual4(const double *W, double mu, const double *c, double wi, const double *z,
                                    int fast) {
  double ln = z[0], a0 = z[1], a1 = z[2], a2 = z[3], a3 = z[4], beta = z[5];
  double t1 = (0.0 + a0) - a2, t2 = (0.0 + a1) - a3, sum = (((0.0 + a0) + a1) + a2) + a3;
  double un = W[0] * ln + W[1] * t1 + W[2] * t2 + c[0];
  double u1 = W[3] * ln + W[4] * t1 + W[5] * t2 + c[1];
  double u2 = W[6] * ln + W[7] * t1 + W[8] * t2 + c[2];
  if (fast) {
    double res = pairRes4(wi * ln, un, 1);
    res = cd_lcpMax(res, pairRes4(wi * a0, u1 + beta, 1));
    res = cd_lcpMax(res, pairRes4(wi * a1, u2 + beta, 1));
    res = cd_lcpMax(res, pairRes4(wi * a2, beta - u1, 1));
    res = cd_lcpMax(res, pairRes4(wi * a3, beta - u2, 1));
    return cd_lcpMax(res, pairRes4(beta, wi * (mu * ln - sum), 1));
  }
  double res = cd_lcpPairResidual(wi * ln, un), v;
  v = cd_lcpPairResidual(wi * a0, u1 + beta);
  if (!(v <= res)) res = v;
  v = cd_lcpPairResidual(wi * a1, u2 + beta);
  if (!(v <= res)) res = v;
  v = cd_lcpPairResidual(wi * a2, beta - u1);
  if (!(v <= res)) res = v;
  v = cd_lcpPairResidual(wi * a3, beta - u2);
  if (!(v <= res)) res = v;
  v = cd_lcpPairResidual(beta, wi * (mu * ln - sum));
  return v <= res ? res : v;
}

/* candSeparated for the unit axes (cd_lcpSlipSpeed's maxima in its order) */
static inline void candSeparated4(const double *c, double *cand) {
  for (int l = 0; l <= 4; l++) cand[l] = 0.0;
  double beta = cd_lcpMax(0.0, -c[1]);
  beta = cd_lcpMax(beta, -c[2]);
  beta = cd_lcpMax(beta, c[1]);
  cand[5] = cd_lcpMax(beta, c[2]);
}

/* cd_lcpAlphaFromTangent for the unit axes: the nearest direction by the components, the side
 * by d_(k+1) . lt (the cross product d_k x lt), and the split by its own products with D (they
 * keep the sign of a zero alpha) times det = +-1 instead of divided by it (the same bits). Each
 * of the eight (k, side) pairs a case of its own, D's entries and det as constants (GCC folds
 * the products with +-1, which are exact, and keeps those with 0) and the two alphas stored at
 * constant places; each kept alpha as a >= 0 ? a : 0, the same value as fmax(0, a)'s form
 * above (-0 kept, NaN and negatives 0) in a compare and a mask instead of two compares and a
 * conditional move through an integer register: S2 10's first 60 steps 4.129G -> 4.089G */
static inline double alphaClip(double a) { return a >= 0.0 ? a : 0.0; }

static inline void alphaFromTangent4(const double *lt, double *alpha) {
  double x = lt[0], y = lt[1];
  for (int l = 0; l < 4; l++) alpha[l] = 0.0;
  if (x == 0.0 && y == 0.0) return;
  int k = 0;
  double dmax = -INFINITY;
  for (int l = 0; l < 4; l++) {
    double d = axisDot(l, x, y);
    if (d > dmax) dmax = d, k = l;
  }
  int up = axisDot((k + 1) & 3, x, y) >= 0.0;
  /* d_k = (dk0, dk1), d_l = (dl0, dl1), l = k + 1 (up, det 1) or k - 1 (det -1) */
#define SPLIT4(k, l, dk0, dk1, dl0, dl1, det)                                             \
  alpha[k] = alphaClip((x * (dl1) - y * (dl0)) * (det)), alpha[l] = alphaClip(((dk0) * y - (dk1) * x) * (det))
  switch (2 * k + up) {
  case 0: SPLIT4(0, 3, 1.0, 0.0, 0.0, -1.0, -1.0); break;
  case 1: SPLIT4(0, 1, 1.0, 0.0, 0.0, 1.0, 1.0); break;
  case 2: SPLIT4(1, 0, 0.0, 1.0, 1.0, 0.0, -1.0); break;
  case 3: SPLIT4(1, 2, 0.0, 1.0, -1.0, 0.0, 1.0); break;
  case 4: SPLIT4(2, 1, -1.0, 0.0, 0.0, 1.0, -1.0); break;
  case 5: SPLIT4(2, 3, -1.0, 0.0, 0.0, -1.0, 1.0); break;
  case 6: SPLIT4(3, 2, 0.0, -1.0, -1.0, 0.0, -1.0); break;
  default: SPLIT4(3, 0, 0.0, -1.0, 1.0, 0.0, 1.0); break;
  }
#undef SPLIT4
}

/* candStick for the unit axes */
static inline int candStick4(const double *C, double det, const double *c, double *cand) {
  if (det == 0.0) return 0;
  double ln = -(C[0] * c[0] + C[1] * c[1] + C[2] * c[2]) / det;
  if (!(ln > 0.0)) return 0;
  double lt[2] = {-(C[3] * c[0] + C[4] * c[1] + C[5] * c[2]) / det, -(C[6] * c[0] + C[7] * c[1] + C[8] * c[2]) / det};
  cand[0] = ln;
  alphaFromTangent4(lt, &cand[1]);
  cand[5] = 0.0;
  return 1;
}

/* candVertex for the unit axes: d_a = s e_(a & 1), s = -1 for a >= 2 */
static inline int candVertex4(const double *W, double mu, const double *c, int a, double *cand) {
  double den = W[0] + mu * axisDot(a, W[1], W[2]);
  if (!(den > 0.0 && c[0] < 0.0)) return 0;
  double ln = -c[0] / den;
  double u1 = W[3] * ln + mu * ln * axisDot(a, W[4], W[5]) + c[1];
  double u2 = W[6] * ln + mu * ln * axisDot(a, W[7], W[8]) + c[2];
  for (int l = 1; l <= 4; l++) cand[l] = 0.0;
  cand[0] = ln;
  cand[1 + a] = mu * ln;
  cand[5] = cd_lcpMax(0.0, -axisDot(a, u1, u2));
  return 1;
}

/* the vertex candidate at d_a made in z and accepted by its residual (blockResidual4's fast
 * form where wpos and it has no NaN: its ln is NaN only where its alpha mu ln is, its beta is
 * a cd_lcpMax(0, .) and its other alphas 0); 1 when taken. Called with a constant a, one case
 * each: the candidate's alphas then known to the residual, the stores of its alphas at constant
 * places (S2 10's first 60 steps 4.010G -> 3.990G) */
static inline int vertexTry4(const double *W, double mu, const double *c, double wi, int a, int wpos, double accept,
                             double *z) {
  return candVertex4(W, mu, c, a, z) && blockResidual4(W, mu, c, wi, z, wpos && z[1 + a] == z[1 + a]) <= accept;
}

/* the edge candidate at d_a, d_(a+1) likewise (its two alphas > 0, its ln checked), with the
 * axes as constants (axes4: D's entries bit for bit; GCC folds the products with +-1, which are
 * exact, and keeps those with 0): 3.990G -> 3.970G, with sweep4 flattened (GCC no longer
 * inlined sweepBlock4 into it: 4.097G) */
static inline int edgeTry4(const double *W, double mu, const double *c, double wi, int a, int wpos, double accept,
                           double *z) {
  return candEdge(W, mu, 4, axes4, c, a, z) && blockResidual4(W, mu, c, wi, z, wpos && z[0] == z[0]) <= accept;
}

/* cd_bgsBlockSolve for m = 4 and the unit axes, from the block's z zo into z (no alias): the
 * candidates blockSolveAny takes first (the active set the contact is in: sticking; sliding at
 * the vertex it slid along and the edge beside it), each with the axes' residual; the rest (none
 * of them at roundoff: 0.3 % of the pile's block solves) is blockSolveAny from zo, which tries
 * them again and goes on with the same values: the same answer bit for bit. Each candidate is
 * made in z itself (one that has no solution writes nothing; one not taken is overwritten):
 * made in a buffer and copied (16-byte loads of 8-byte stores, which are not forwarded), the
 * copy and the sweep's reads of z after it held 17 % of cd_bgsSolve's perf samples on the
 * 1000-sphere pile (S2 10, 400 steps); in place, most of them moved to the sticking
 * candidate's acceptance, which waits for its three divisions (cd_bgsSolve 32.4 -> 31.6 % of
 * the run's samples: little), 68M fewer instructions over its first 60 steps. */
__attribute__((noinline)) static int blockSolveRest(const double *r, const double *D, const double *c, double vref,
                                                    double *z, void *work) {
  return blockSolveAny(r, 4, D, c, vref, z, work);
}

static inline int blockSolve4(const double *r, const double *D, const double *c, double vref, const double *zo,
                              int wpos, double *z, void *work) {
  const double *W = &r[REC_W];
  double mu = r[REC_MU], wi = r[REC_WI];
  int sliding = zo[0] > 0.0 && zo[5] > 0.0, sticking = zo[0] > 0.0 && !sliding;
  if (c[0] >= 0.0 && !sliding && !sticking) return candSeparated4(c, z), CD_BGS_BLOCK_DIRECT;
  /* blockSolveAny's qinf: the largest of |c_0| and |d_l . c_T| */
  double qinf = cd_lcpMax(cd_lcpMax(fabs(c[0]), fabs(c[1])), fabs(c[2]));
  double accept = BLOCK_ACCEPT * cd_lcpMax(vref, qinf);
  if (sticking && candStick4(&r[REC_ADJ], r[REC_DET], c, z)) {
    /* where the record's bound holds, the friction pair decides (STICK_K): the residual's
     * own arithmetic of it, beta being 0 (candStick4's literal 0, never NaN: the pair in
     * pairRes4's max form, the same value for any wi) */
    if (r[REC_STICK] != 0.0 && qinf >= STICK_QMIN && qinf <= STICK_QMAX
            ? pairRes4(0.0, wi * (mu * z[0] - ((((0.0 + z[1]) + z[2]) + z[3]) + z[4])), 1) <= accept
            : blockResidual4(W, mu, c, wi, z, 0) <= accept)
      return CD_BGS_BLOCK_DIRECT;
  }
  if (sliding) {
    /* k0 and ke as blockSolveAny picks them, by selects: indexed, zo was kept in memory
     * (S2 10, the first 60 steps: 6.296G -> 6.232G instructions) */
    double a0 = zo[1], a1 = zo[2], a2 = zo[3], a3 = zo[4], amax = a0;
    int k0 = 0;
    if (a1 > amax) k0 = 1, amax = a1;
    if (a2 > amax) k0 = 2, amax = a2;
    if (a3 > amax) k0 = 3;
    double aprev = k0 == 0 ? a3 : k0 == 1 ? a0 : k0 == 2 ? a1 : a2;
    double anext = k0 == 0 ? a1 : k0 == 1 ? a2 : k0 == 2 ? a3 : a0;
    int ke = aprev > anext ? (k0 + 3) & 3 : k0;
    /* blockResidual4's fast form where wpos and the candidate has no NaN: the vertex's ln is
     * NaN only where its alpha mu ln is, the edge's two alphas are > 0 and its ln is checked,
     * and either's beta is a cd_lcpMax(0, .), the other alphas 0. Each case passes its k as
     * a literal, so that the inlined try is specialized to that direction's constants (one
     * shape, four instances; S2 10's first 60 steps 4.010G -> 3.970G with sweep4 flattened) */
    int ok;
    switch (k0) {
    case 0: ok = vertexTry4(W, mu, c, wi, 0, wpos, accept, z); break;
    case 1: ok = vertexTry4(W, mu, c, wi, 1, wpos, accept, z); break;
    case 2: ok = vertexTry4(W, mu, c, wi, 2, wpos, accept, z); break;
    default: ok = vertexTry4(W, mu, c, wi, 3, wpos, accept, z); break;
    }
    if (ok) return CD_BGS_BLOCK_DIRECT;
    switch (ke) {
    case 0: ok = edgeTry4(W, mu, c, wi, 0, wpos, accept, z); break;
    case 1: ok = edgeTry4(W, mu, c, wi, 1, wpos, accept, z); break;
    case 2: ok = edgeTry4(W, mu, c, wi, 2, wpos, accept, z); break;
    default: ok = edgeTry4(W, mu, c, wi, 3, wpos, accept, z); break;
    }
    if (ok) return CD_BGS_BLOCK_DIRECT;
  }
  z[0] = zo[0], z[1] = zo[1], z[2] = zo[2], z[3] = zo[3], z[4] = zo[4], z[5] = zo[5];
  return blockSolveRest(r, D, c, vref, z, work);
}

static int blockSolve(const double *r, int m, const double *D, const double *c, double vref, double *z, void *work) {
  if (!isAxes4(m, D)) return blockSolveAny(r, m, D, c, vref, z, work);
  double zo[6];
  memcpy(zo, z, sizeof zo);
  return blockSolve4(r, D, c, vref, zo, r[REC_WI] > 0.0 && r[REC_WI] <= DBL_MAX, z, work);
}

int cd_bgsBlockSolve(const double *W, double mu, int m, const double *D, const double *c, double wi, double vref,
                     double *z, void *work) {
  double r[BLOCK_REC];
  blockRecord(W, NULL, wi, mu, r);
  return blockSolve(r, m, D, c, vref, z, work);
}

/* ---- the sweeps ---- */

/* ---- clusters: a larger block where the sweeps stall ---- */

/* Block Gauss-Seidel converges slowly on rigid clusters of contacts (a ring of spheres, a
 * wedge): G has near-null modes there and the residual falls by a percent in tens of
 * sweeps. When the residual stalls, the contacts around the worst one (breadth first
 * through the blocks of G, i.e. through shared bodies, at most CLUSTER_MAX of them; the
 * whole problem when it has at most CLUSTER_WHOLE contacts, as a stack of cubes needs) are
 * taken as one block: with the other contacts fixed, their LCP (the same Anitescu-Hart
 * LCP, with g replaced by c = g_C + G_CF lambda_F) is solved exactly by Lemke on its dense
 * matrix. It is still a block Gauss-Seidel step, so the fixed points are unchanged; the
 * dense size limits keep it at O(CLUSTER_WHOLE^2 (m + 2)^2) memory. */
#define CLUSTER_MAX 16      /* contacts in a cluster: a dense A of (16 (m + 2))^2 doubles */
#define CLUSTER_WHOLE 64    /* a problem of at most this many contacts is one cluster (a dense A
                               of (64 (m + 2))^2 doubles, 1.2 MB at m = 4) */
#define STALL_SWEEPS 20     /* sweeps between stall tests */
#define STALL_FACTOR 0.1    /* a stall: the residual above this fraction of the last test's */
#define CLUSTER_TRIES 2     /* cluster solves that did not help before a solve stops trying:
                               each costs a dense Lemke, which degenerate clusters (redundant
                               box-box contacts) can drive to its pivot limit */
#define CLUSTERS_A_STALL 4  /* clusters solved a stall, around the worst contacts left */
/* with the active-set tries, the stall tests solve no cluster before this many sweeps: the
 * tries carry the load of the whole problem at once, and clusters solved on an iterate still
 * far from the step's modes made it worse. Measured on the 1000-sphere pile (S2 10, 400
 * steps): 489 stalls solved clusters, 484 of them before 100 sweeps (most at 40 to 60), and
 * 400 of the 489 raised the residual and were undone (each costs up to CLUSTERS_A_STALL dense
 * Lemke solves and drops the idle contacts); callgrind of its first 150 steps, 50.39G ->
 * 45.45G instructions (the clusters' Lemke 3.3G -> 0.34G), every step converged; with the
 * LDU (sparse_ldu.c), all 400 steps: 86.66G -> 78.53G (100 sweeps: 79.90G). On five piles of
 * that kind (tests/bench/HISTORY.md) user CPU 59.3 -> 52.9 s summed, faster in 9 of 10 pairs.
 * With no clusters at all one step of the 400 took 5,450 iterations. Which steps crawl moves
 * with the trajectory: on each setting some pile has a step at 20-47x its median. */
#define CLUSTER_WAIT 200
/* drift steps (with the tries; see cd_bgsSolve's stall test): from DRIFT_WAIT sweeps on, a
 * stall test moves the iterate along the sweeps' own step over the last stall window, d = z -
 * z(STALL_SWEEPS sweeps ago), to just past (DRIFT_PAST) the DRIFT_K-th mode boundary d reaches
 * (a component of z, or a sticking contact's friction bound mu lambda_n - sum alpha, taken to
 * zero), counting only those at least one window and at most DRIFT_MAX windows ahead (none: no
 * step), clipped at zero; the next window starts from there, so a stall test after a drift step
 * takes none; at most DRIFT_STEPS a run. Why: where the pile's sweeps stall (a wedge, sticking
 * contacts whose impulses creep along a near-null direction of G), the stalled iterate is a few
 * mode changes from the answer, at contacts that violate nothing, and the sweeps walk there in
 * their own direction for hundreds of sweeps. Traced on the seed+4 pile's step 130 (2,841
 * iterations): the warm run's iterate after 1,000 sweeps (4.75e-5) and the cold run's (4.78e-5)
 * have the same modes; the answer differs from them at two contacts, both sticking there and
 * sliding in the answer, 375 at 0.30 of its friction bound (mu 0.5) and 1764 at 0.45, not
 * neighbours; 375's wedge (24, 129, 370, 23) carries the largest changes of lambda_n (3.8e-3 ..
 * 1.3e-2 N s). The stall clusters are built around it (seed 129, the worst contact) and solve
 * it with the contacts outside fixed, which moves the load into 129's other neighbours (720,
 * 721): every round raised the residual 3.1x (4.8e-5 -> 1.5e-4, 129 itself the worst) and was
 * undone. Ten piles of S2 10's kind (S2 10 and the generator's seeds 1-9), 400 steps each,
 * iterations a step summed over the ten 673.7 -> 614.2, the largest step 2,841 -> 1,063
 * iterations, the slowest step 34.3x -> 19.1x the median step (time), user CPU 52.43 -> 49.58 s
 * summed (medians of three alternating rounds), every step converged; S3 20 and S4 10 bit for
 * bit (they do not stall). Each setting moves which steps are slow (the pile is chaotic), so
 * the figures are the ten piles' (tests/bench/HISTORY.md has the settings measured): the first
 * boundary alone (DRIFT_K 1) 616.3 summed and the largest step 2,299 (seed 4's step 130
 * itself), the 4th 624.0 / 1,472 before the friction bounds were counted, the 2nd with them
 * 616.4 / 882, the 3rd 654.3 / 5,017 and one step unconverged (4.1e-8: a fixed point of the
 * sweeps with no drift step in it, the tries all from sets already solved), 10 steps a run
 * 637.0 / 5,058. Left a step unconverged: no cap (a drift step at every second stall test of a
 * run; the seed+2 pile's step 388 cycled between two directions at 1e-5 for the whole 6,000
 * sweeps), and drift steps judged by the residual 20 sweeps later as the subspace steps are
 * (undone above 3 times where they started, taken only where the residual fell by less than
 * 10 % a window: the seed+5 pile's step 388 at 1.6e-7); undone at any rise, they did not help (a
 * drift that crosses a boundary raises the residual first). */
#define DRIFT_WAIT 200
#define DRIFT_K 4
#define DRIFT_MAX 100.0
#define DRIFT_PAST 1.05
#define DRIFT_STEPS 6

typedef struct {
  int *loc;     /* (ncon) local index of a contact in the cluster, -1 outside */
  int *member;  /* (ncon) the cluster's contacts (queue of the search) */
  double *cres; /* (ncon) each contact's residual */
} cdBgsCluster;

/* solves the cluster around contact seed; 0 ok (z, lam updated, or Lemke failed and
 * nothing changed), CD_ERR_NOMEM */
static int clusterSolve(const cdContactProblem *p, int m, const double *D, double *z, double *lam, cdBgsCluster *cw,
                        int seed, int size, int *taken) {
  int nc = p->ncon, nl = 0;
  const cdBlockMatrix *G = &p->G;
  cw->member[nl] = seed;
  cw->loc[seed] = nl++;
  for (int h = 0; h < nl && nl < size; h++) {
    int i = cw->member[h];
    for (int t = G->rowptr[i]; t < G->rowptr[i + 1] && nl < size; t++) {
      int j = G->col[t];
      if (cw->loc[j] < 0) {
        cw->member[nl] = j;
        cw->loc[j] = nl++;
      }
    }
  }
  /* local numbering in the global order: the block rows of G stay ascending, and Lemke
   * meets the contacts in the order it would on the whole problem */
  for (int h = 1; h < nl; h++) {
    int v = cw->member[h], q = h;
    while (q > 0 && cw->member[q - 1] > v) cw->member[q] = cw->member[q - 1], q--;
    cw->member[q] = v;
  }
  for (int h = 0; h < nl; h++) cw->loc[cw->member[h]] = h;
  int nnzb = 0;
  for (int h = 0; h < nl; h++) {
    int i = cw->member[h];
    for (int t = G->rowptr[i]; t < G->rowptr[i + 1]; t++) nnzb += cw->loc[G->col[t]] >= 0;
  }
  cdContactProblem sp;
  memset(&sp, 0, sizeof sp);
  int nv = cd_lcpSize(nl, m), rc = CD_OK;
  sp.ncon = nl;
  sp.vscale = cd_contactProblemVelocityScale(p); /* the whole problem's units */
  sp.g = cd_malloc(3 * (size_t)nl * sizeof *sp.g);
  sp.mu = cd_malloc((size_t)nl * sizeof *sp.mu);
  sp.meff = cd_malloc((size_t)nl * sizeof *sp.meff);
  double *A = cd_malloc(((size_t)nv * (size_t)nv + 3 * (size_t)nv) * sizeof *A);
  void *lw = cd_malloc(cd_lemkeWorkSize(nv));
  if (!sp.g || !sp.mu || !sp.meff || !A || !lw || cd_blockMatrixAlloc(&sp.G, nl, nnzb)) {
    rc = CD_ERR_NOMEM;
    goto done;
  }
  /* the cluster's G_CC, and c = g_C + G_CF lambda_F */
  int k = 0;
  for (int h = 0; h < nl; h++) {
    int i = cw->member[h];
    double *c = &sp.g[3 * h];
    c[0] = p->g[3 * i], c[1] = p->g[3 * i + 1], c[2] = p->g[3 * i + 2];
    sp.mu[h] = p->mu[i];
    sp.meff[h] = cd_contactProblemMeff(p, i);
    sp.G.rowptr[h] = k;
    for (int t = G->rowptr[i]; t < G->rowptr[i + 1]; t++) {
      int j = G->col[t], lj = cw->loc[j];
      const double *B = &G->val[9 * (size_t)t];
      if (lj < 0) {
        const double *l = &lam[3 * j];
        c[0] += B[0] * l[0] + B[1] * l[1] + B[2] * l[2];
        c[1] += B[3] * l[0] + B[4] * l[1] + B[5] * l[2];
        c[2] += B[6] * l[0] + B[7] * l[1] + B[8] * l[2];
        continue;
      }
      if (lj == h) sp.G.diag[h] = k;
      sp.G.col[k] = lj;
      memcpy(&sp.G.val[9 * (size_t)k], B, 9 * sizeof(double));
      k++;
    }
  }
  sp.G.rowptr[nl] = k;
  double *b = A + (size_t)nv * (size_t)nv, *zl = b + nv, *sc = zl + nv;
  cd_lcpBuildDense(&sp, m, D, A, b);
  /* in the residual's units, as lcp.c runs Lemke on the whole problem */
  memset(zl, 0, (size_t)nv * sizeof *zl);
  cd_lcpScaleDense(&sp, m, sc, A, b, zl, 1);
  cdLemkeOptions lo = {.work = lw, .max_pivots = CD_LCP_LEMKE_PIVOTS(nv)};
  int st = cd_lemkeSolve(nv, A, b, zl, &lo, NULL);
  cd_lcpScaleDense(&sp, m, sc, NULL, NULL, zl, -1);
  /* an inaccurate basis is taken too: the caller keeps the step only if it helps */
  if (st == CD_LEMKE_SOLVED || st == CD_LEMKE_INACCURATE) {
    for (int h = 0; h < nl; h++) {
      int i = cw->member[h];
      z[i] = zl[h];
      memcpy(&z[nc + m * i], &zl[nl + m * h], (size_t)m * sizeof *z);
      z[nc + nc * m + i] = zl[nl + nl * m + h];
      double t1 = 0.0, t2 = 0.0;
      for (int l = 0; l < m; l++) {
        t1 += D[2 * l] * zl[nl + m * h + l];
        t2 += D[2 * l + 1] * zl[nl + m * h + l];
      }
      lam[3 * i] = zl[h], lam[3 * i + 1] = t1, lam[3 * i + 2] = t2;
    }
  }
done:
  for (int h = 0; h < nl; h++) {
    taken[cw->member[h]] = 1;
    cw->loc[cw->member[h]] = -1;
  }
  cd_blockMatrixFree(&sp.G);
  cd_free(sp.g), cd_free(sp.mu), cd_free(sp.meff), cd_free(A), cd_free(lw);
  return rc;
}

/* what a sweep reads, laid out in the order it reads it: the contacts that are not idle in the
 * order of a forward sweep, each with its diagonal block, g_i and 1 / meff_i, and its row of
 * G without the diagonal block and the blocks of idle contacts (whose lambda is zero), in
 * G's order (so the sums are G's sums). Built anew when a check changes the idle contacts
 * (or the iterate is replaced): the sweeps between then stream through it instead of jumping
 * between G's rows, and test no block for an idle neighbour. Building it after every check
 * was 6.5 % of the 1000-sphere pile's run (perf, S2 10, 150 steps: 37 % of cd_bgsSolve's
 * own time), as much as a sweep's products where the checks come every second sweep. */
/* G_ij of two neighbours a, b of a row, in the order blockC reads them: rows 0 and 1 of each
 * column by column (B_00, B_10, B_01, B_11, B_02, B_12: blockC sums them in pairs), a's then
 * b's, and row 2 with the two neighbours as the lanes of a pair ((B_20 of a, of b), (B_21 ..),
 * (B_22 ..)): both neighbours' products for c_2 in three multiplications of pairs instead of
 * six (the same products, summed in each lane as before, and added to c_2 a's then b's). A
 * row's last neighbour of an odd count takes lane a of a pair of its own. */
typedef struct {
  cdV2 v[6];        /* rows 0 and 1: a's three pairs, then b's */
  cdV2 r2[3];       /* row 2: (B_2k of a, B_2k of b), k = 0, 1, 2 */
  const cdV2 *l[2]; /* the other contacts' lambda, their pairs in lamd, beside the values they
                       are read with: blockC's loop 25 -> 22 instructions a block (as the byte
                       offset 48 j in an array of its own; S2 10's first 60 steps 4.646G ->
                       4.602G) */
} cdBgsPair;

typedef struct {
  int n;            /* contacts swept */
  int *con;         /* (ncon) the swept contacts, forward-sweep order */
  cdBgsPair **ptr;  /* (2 ncon + 1) for each swept contact in blk its row's first pair, the end
                       of its full pairs (a half pair follows where the next row starts later),
                       as pointers (as indices into blk, blockC's bounds took 10 instructions a
                       contact: S2 10's first 60 steps 4.583G -> 4.553G) */
  int *kept;        /* (ncon) rowsBuild's list of a row's kept blocks */
  double *diag;     /* (ncon x BLOCK_REC) the swept contacts' records (blockRecord), in sweep order */
  double *rec;      /* (ncon x BLOCK_REC) every contact's record, made once a solve (rowsRecords) */
  cdBgsPair *blk;   /* ((nnzb + ncon) / 2) the blocks G_ij in pairs (rowsBuild) */
  int wpos;         /* 1: every record's wi is finite and positive (sweepBlock4's step) */
} cdBgsRows;

/* c = g_i + sum_{j != i} G_ij lambda_j for the block at position pos of rows (dg its record;
 * idle contacts' lambda_j are zero), lambda_j read from lamd (each block's l), its entries each
 * as a pair (each product one multiplication of a pair from memory instead of a load and a
 * broadcast: 29 -> 26 instructions a neighbour, S2 10's first 60 steps 6.541G -> 6.531G). (c_0,
 * c_1) as one pair
 * of lanes: each lane the same products and sums in the same order as c_2's, so the same bits
 * as three scalar sums (and fewer instructions: the sums were a third of the sweep's). c_2's
 * products of two neighbours as the lanes of pairs (cdBgsPair): 43 -> 37 instructions for two
 * neighbours, S2 10's first 60 steps 4.089G -> 4.045G (sweep4 1.331G -> 1.286G; the pairs'
 * places in the rows computed per block as it was written, rowsBuild cost 33M more: 4.104G) */
static inline void blockC(const cdBgsRows *rows, int pos, const double *dg, double *c) {
  cdV2 c01 = {dg[REC_G], dg[REC_G + 1]};
  double c2 = dg[REC_G + 2];
  cdBgsPair *const *bp = &rows->ptr[2 * (size_t)pos];
  const cdBgsPair *b = bp[0];
  for (const cdBgsPair *e = bp[1]; b < e; b++) {
    const cdV2 *la = b->l[0], *lb = b->l[1];
    cdV2 s = b->r2[0] * (cdV2){la[0][0], lb[0][0]} + b->r2[1] * (cdV2){la[1][0], lb[1][0]} +
             b->r2[2] * (cdV2){la[2][0], lb[2][0]};
    c01 += b->v[0] * la[0] + b->v[1] * la[1] + b->v[2] * la[2];
    c2 += s[0];
    c01 += b->v[3] * lb[0] + b->v[4] * lb[1] + b->v[5] * lb[2];
    c2 += s[1];
  }
  if (b < bp[2]) {
    const cdV2 *la = b->l[0];
    c01 += b->v[0] * la[0] + b->v[1] * la[1] + b->v[2] * la[2];
    c2 += b->r2[0][0] * la[0][0] + b->r2[1][0] * la[1][0] + b->r2[2][0] * la[2][0];
  }
  c[0] = c01[0], c[1] = c01[1], c[2] = c2;
}

/* lambda_i = (ln, t1, t2) written into lamd as pairs (blockC). The sweeps and the checks keep
 * lambda there alone: lam (3 ncon) is made from it where it is needed whole (the checks' product,
 * a stall test's clusters), and
 * lamd from lam or z wherever lambda changes outside the sweeps (lamdFromLam, lamdFromZ);
 * writing both in each block: S2 10's first 60 steps 5.647G -> 5.621G instructions. The three
 * stores through one pointer to lambda_i (indexed by 3 i in int, GCC made two addresses from
 * it in six instructions: 4.147G -> 4.129G) */
static inline void lambdaPut(cdV2 *lamd, int i, double ln, double t1, double t2) {
  cdV2 *li = &lamd[3 * (size_t)i];
  li[0] = (cdV2){ln, ln}, li[1] = (cdV2){t1, t1}, li[2] = (cdV2){t2, t2};
}

static void lamdFromLam(int nc, const double *lam, cdV2 *lamd) {
  for (size_t t = 0; t < 3 * (size_t)nc; t++) lamd[t] = (cdV2){lam[t], lam[t]};
}

/* lamd = lambda(z) (cd_lcpLambdaFromZ, into lam on the way): where the iterate is replaced */
static void lamdFromZ(int nc, int m, const double *D, const double *z, double *lam, cdV2 *lamd) {
  cd_lcpLambdaFromZ(nc, m, D, z, lam);
  lamdFromLam(nc, lam, lamd);
}

/* two entries a trip, each pair of lam one store (7 instructions a pair against 5 an entry): S2
 * 10's first 60 steps 4.276G -> 4.269G */
static void lamFromLamd(int nc, const cdV2 *lamd, double *lam) {
  size_t n = 3 * (size_t)nc, t = 0;
  for (; t + 1 < n; t += 2) {
    cdV2 x = {lamd[t][0], lamd[t + 1][0]};
    memcpy(&lam[t], &x, sizeof x);
  }
  if (t < n) lam[t] = lamd[t][0];
}

/* one block of a sweep at position pos of rows: c (blockC), the block solve from the contact's
 * z (zb: m + 2, bw: the block solve's workspace), z and lambda_i written back; returns the
 * block's step (the change of its z in the residual's units, the estimate of STEP_GATE) */
static inline double sweepBlockAny(const cdBgsRows *rows, int pos, int m, const double *D, int nc, double vs,
                                   double *z, cdV2 *lamd, double *zb, void *bw) {
  int i = rows->con[pos];
  const double *dg = &rows->diag[BLOCK_REC * (size_t)pos];
  double c[3];
  blockC(rows, pos, dg, c);
  zb[0] = z[i];
  for (int l = 0; l < m; l++) zb[1 + l] = z[nc + m * i + l];
  zb[m + 1] = z[nc + nc * m + i];
  /* (a block no method solves to the block tolerance keeps its best candidate; the
   * whole solve's residual then says whether the sweeps met the rule) */
  double wi = dg[REC_WI];
  blockSolve(dg, m, D, c, vs, zb, bw);
  /* the step of the block, in the residual's units (the estimate of STEP_GATE) */
  double dz = wi * fabs(zb[0] - z[i]);
  dz = cd_lcpMax(dz, fabs(zb[m + 1] - z[nc + nc * m + i]));
  /* write the block back and refresh lambda_i */
  z[i] = zb[0];
  double t1 = 0.0, t2 = 0.0;
  for (int l = 0; l < m; l++) {
    dz = cd_lcpMax(dz, wi * fabs(zb[1 + l] - z[nc + m * i + l]));
    z[nc + m * i + l] = zb[1 + l];
    t1 += D[2 * l] * zb[1 + l];
    t2 += D[2 * l + 1] * zb[1 + l];
  }
  z[nc + nc * m + i] = zb[m + 1];
  lambdaPut(lamd, i, zb[0], t1, t2);
  return dz;
}

/* a sweep's block for m = 4 and the unit axes (sweepBlockAny's operations; blockSolve4, lambda_T
 * as the sums its products make), with everything it calls but blockSolveRest written in
 * (flatten: no call, no memset per candidate, no loop over the directions). */
__attribute__((flatten)) static double sweepBlock4(const cdBgsRows *rows, int pos, const double *D, int nc, double vs,
                                                  double *z, cdV2 *lamd, void *bw) {
  int i = rows->con[pos];
  const double *dg = &rows->diag[BLOCK_REC * (size_t)pos];
  double c[3];
  blockC(rows, pos, dg, c);
  double *za = &z[nc + 4 * (size_t)i], *zbeta = &z[(size_t)nc * 5 + (size_t)i];
  double zo[6] = {z[i], za[0], za[1], za[2], za[3], *zbeta}, zb[6], wi = dg[REC_WI];
  blockSolve4(dg, D, c, vs, zo, rows->wpos, zb, bw);
  double dz, d0 = fabs(zb[0] - zo[0]), d5 = fabs(zb[5] - zo[5]);
  if (rows->wpos) {
    /* wi times the largest change of the impulses: for a finite positive wi the product is
     * monotone (rounding is), so the largest product is the product of the largest, and a NaN
     * change is passed over or kept where sweepBlockAny's maxima pass it over or keep it (a
     * first one stays: d0's; a later one is skipped): the same dz bit for bit, four
     * multiplications fewer a block for the test of wpos (S2 10's first 60 steps 4.279G ->
     * 4.276G; the test out of the loop, two loops: GCC kept the block out of line, 4.404G) */
    double a = cd_lcpMax(d0, fabs(zb[1] - zo[1]));
    a = cd_lcpMax(a, fabs(zb[2] - zo[2]));
    a = cd_lcpMax(a, fabs(zb[3] - zo[3]));
    a = cd_lcpMax(a, fabs(zb[4] - zo[4]));
    dz = cd_lcpMax(wi * a, d5);
  } else {
    dz = cd_lcpMax(wi * d0, d5);
    dz = cd_lcpMax(dz, wi * fabs(zb[1] - zo[1]));
    dz = cd_lcpMax(dz, wi * fabs(zb[2] - zo[2]));
    dz = cd_lcpMax(dz, wi * fabs(zb[3] - zo[3]));
    dz = cd_lcpMax(dz, wi * fabs(zb[4] - zo[4]));
  }
  z[i] = zb[0];
  za[0] = zb[1], za[1] = zb[2], za[2] = zb[3], za[3] = zb[4];
  *zbeta = zb[5];
  double t1 = (0.0 + zb[1]) - zb[3], t2 = (0.0 + zb[2]) - zb[4];
  lambdaPut(lamd, i, zb[0], t1, t2);
  return dz;
}

/* one sweep of the rows for m = 4 and the unit axes, backwards or forwards; returns its
 * largest block step. A function of its own: inside cd_bgsSolve the loop's pointers and the
 * block's values were spilled and reloaded at every block (S2 10's first 60 steps 4.692G ->
 * 4.662G instructions). Flattened, so that sweepBlock4 and all it calls but blockSolveRest are
 * written in whatever their size (edgeTry4) */
__attribute__((noinline, flatten)) static double sweep4(const cdBgsRows *rows, const double *D, int nc, double vs,
                                                        double *z, cdV2 *lamd, void *bw, int backward) {
  double step = 0.0;
  int n = rows->n, flip = -(backward != 0), base = n & flip;
  for (int ii = 0; ii < n; ii++) {
    /* n - 1 - ii backwards (~ii = -ii - 1), else ii: an xor and an add a block instead of the
     * flag reloaded and a select (S2 10's first 60 steps 3.952G -> 3.948G) */
    int pos = (ii ^ flip) + base;
    step = cd_lcpMax(step, sweepBlock4(rows, pos, D, nc, vs, z, lamd, bw));
  }
  return step;
}

/* every contact's record, once a solve (the rows are built several times a step: making the
 * records there, with W's adjugate, was 0.7 % of the 1000-sphere pile's instructions) */
static void rowsRecords(const cdContactProblem *p, cdBgsRows *r) {
  const cdBlockMatrix *G = &p->G;
  r->wpos = 1;
  for (int i = 0; i < p->ncon; i++) {
    double wi = 1.0 / cd_contactProblemMeff(p, i);
    blockRecord(&G->val[9 * (size_t)G->diag[i]], &p->g[3 * i], wi, p->mu[i], &r->rec[BLOCK_REC * (size_t)i]);
    r->wpos &= wi > 0.0 && wi <= DBL_MAX;
  }
}

static void rowsBuild(const cdContactProblem *p, const int *order, const unsigned char *idle, const cdV2 *lamd,
                      cdBgsRows *r) {
  /* G's arrays and the rows' in locals (the stores of each block's pointer may alias their
   * fields, which were loaded again at every block), the blocks by a pointer, and each block's
   * rows 0 and 1 copied a pair of columns a store: 38 -> 33 instructions a block of G, S2 10's
   * first 60 steps 4.248G -> 4.236G (the pairs alone, with the fields loaded again: 4.249G).
   * In cdBgsPair's pairs from the list of the kept blocks: cd_bgsSolve's own instructions (with
   * rowsBuild) 92.7M -> 92.9M */
  const int *rowptr = p->G.rowptr, *col = p->G.col, *gdiag = p->G.diag;
  const double *val = p->G.val, *rec = r->rec;
  double *diag = r->diag;
  int *con = r->con, nc = p->ncon;
  cdBgsPair **ptr = r->ptr, *bk = r->blk;
  int *kept = r->kept, n = 0;
  for (int q = 0; q < nc; q++) {
    int i = order ? order[q] : q;
    if (idle[i]) continue;
    memcpy(&diag[BLOCK_REC * (size_t)n], &rec[BLOCK_REC * (size_t)i], BLOCK_REC * sizeof *diag);
    con[n] = i;
    /* the row's kept blocks listed first: every block's place written and the count moved past
     * the kept ones (the test was a branch the CPU mispredicted: S2 10, 400 steps, rowsBuild 5.1
     * -> 2.2 % of cd_bgsSolve's perf samples), then copied in pairs. The blocks left and right of
     * the diagonal one (G.diag: every row has it) in two loops, instead of a test of j != i at
     * each: cd_bgsSolve's own 92.9M -> 80.1M instructions, S2 10's first 60 steps 3.970G ->
     * 3.957G */
    int cnt = 0, d = gdiag[i];
    for (int t = rowptr[i]; t < d; t++) {
      kept[cnt] = t;
      cnt += !idle[col[t]];
    }
    for (int t = d + 1, e = rowptr[i + 1]; t < e; t++) {
      kept[cnt] = t;
      cnt += !idle[col[t]];
    }
    ptr[2 * n] = bk;
    for (int h = 0; h + 1 < cnt; h += 2, bk++) {
      const double *A = &val[9 * (size_t)kept[h]], *B = &val[9 * (size_t)kept[h + 1]];
      bk->v[0] = (cdV2){A[0], A[3]}, bk->v[1] = (cdV2){A[1], A[4]}, bk->v[2] = (cdV2){A[2], A[5]};
      bk->v[3] = (cdV2){B[0], B[3]}, bk->v[4] = (cdV2){B[1], B[4]}, bk->v[5] = (cdV2){B[2], B[5]};
      bk->r2[0] = (cdV2){A[6], B[6]}, bk->r2[1] = (cdV2){A[7], B[7]}, bk->r2[2] = (cdV2){A[8], B[8]};
      bk->l[0] = &lamd[3 * (size_t)col[kept[h]]], bk->l[1] = &lamd[3 * (size_t)col[kept[h + 1]]];
    }
    ptr[2 * n + 1] = bk;
    if (cnt & 1) {
      const double *A = &val[9 * (size_t)kept[cnt - 1]];
      bk->v[0] = (cdV2){A[0], A[3]}, bk->v[1] = (cdV2){A[1], A[4]}, bk->v[2] = (cdV2){A[2], A[5]};
      bk->r2[0] = (cdV2){A[6], 0.0}, bk->r2[1] = (cdV2){A[7], 0.0}, bk->r2[2] = (cdV2){A[8], 0.0};
      bk->l[0] = &lamd[3 * (size_t)col[kept[cnt - 1]]], bk->l[1] = NULL;
      bk++;
    }
    n++;
  }
  ptr[2 * n] = bk;
  r->n = n;
}

/* cd_lcpContactResidualOf for the unit axes (isAxes4): the same value (each pair's w is u_1, u_2,
 * -u_1 or -u_2 plus beta, under fabs; the same sum of the alphas and the same finite test):
 * sweepCheck 508M -> 472M instructions over S2 10's first 60 steps. Tried and dropped: the
 * swept contacts' u by the sweep's rows (the diagonal block at its place in G's order, the idle
 * contacts' blocks left out: a sum that starts at +0 is never -0, so their zero products change
 * nothing; (u_0, u_1) in lanes; the same values bit for bit): 472M -> 432M, but sweepCheck 9.1
 * -> 10.2 % of the run's perf samples (the contacts in sweep order, z read out of order) and
 * no user CPU off (4.79-4.99 s against 4.84-4.87 s, 400 steps, three pairs); G's blocks copied
 * once a solve into the rows' layout and u_0, u_1 in lanes over them (bit for bit): the run's
 * first 60 steps 6.214G -> 6.155G instructions, sweepCheck 472M -> 403M, but its perf samples
 * 9.3 -> 9.2 % and user CPU 4.87-4.93 s against 4.77-5.03 s (three pairs): not worth a copy of G
 * a solve. wpos: the pairs by pairRes4's max form (the caller's wi finite and positive) */
static inline double contactResidual4(int nc, const double *z, const double *u, int i, double wi, double mu,
                                      int wpos) {
  const double *a = &z[nc + 4 * (size_t)i];
  double beta = z[(size_t)nc * 5 + (size_t)i], v, w;
  double res = pairRes4(wi * z[i], u[0], wpos);
  v = pairRes4(wi * a[0], u[1] + beta, wpos), res = cd_lcpMax(res, v);
  v = pairRes4(wi * a[1], u[2] + beta, wpos), res = cd_lcpMax(res, v);
  v = pairRes4(wi * a[2], beta - u[1], wpos), res = cd_lcpMax(res, v);
  v = pairRes4(wi * a[3], beta - u[2], wpos), res = cd_lcpMax(res, v);
  double sum = (((0.0 + a[0]) + a[1]) + a[2]) + a[3];
  w = wi * (mu * z[i] - sum);
  v = fabs(beta < w ? beta : w); /* (the bound pair, whose w has mu in it, as it is) */
  res = cd_lcpMax(res, v);
  double finite = 0.0 * (z[i] + sum + beta + u[0] + u[1] + u[2]);
  return finite == 0.0 ? res : NAN;
}

/* cd_lcpSlipSpeed for the unit axes, written out with D's entries as constants: the same
 * products and maxima in the same order (GCC folds the products with +-1, which are exact, and
 * keeps those with 0), where the loop over D loaded D at each term: sweepCheck with what it
 * inlines 108.7M -> 104.0M instructions, S2 10's first 60 steps 3.957G -> 3.952G */
static inline double slipSpeed4(double u1, double u2) {
  double beta = cd_lcpMax(0.0, -(1.0 * u1 + 0.0 * u2));
  beta = cd_lcpMax(beta, -(0.0 * u1 + 1.0 * u2));
  beta = cd_lcpMax(beta, -(-1.0 * u1 + 0.0 * u2));
  return cd_lcpMax(beta, -(0.0 * u1 + -1.0 * u2));
}

/* cd_lcpResidual of z, with lamd = lambda(z) (3 ncon pairs, lambdaPut), rec every
 * contact's record (rowsRecords: its 1 / meff_i and mu_i), lam and u (3 ncon each) its space
 * and vs the velocity scale: the same arithmetic (u = G lam + g by cd_blockMatrixMul,
 * cd_lcpContactResidualOf, cd_lcpResidualMax in the contacts' order), so the same value bit
 * for bit. The product goes by columns where cd_contactProblemDelassus built G, and leaves out
 * the contacts without impulse: half the pile's at a check (the idle and the separated ones: on
 * S2 10's first 60 steps 52 % of the contacts, 56 % of G's blocks; sweepCheck's own work 440M ->
 * 284M instructions). It settles the idle contacts (see IDLE_MARGIN): a contact without impulse
 * (lambda_n and every alpha zero) whose u_n exceeds margin is idle, and its beta is set to the
 * slip speed of its u_T, the separated candidate of its block solve (candSeparated: with no
 * impulse of its own, c_i = u_i); every other contact is not. One pass over the contacts after
 * the product: each one's u, then its settling (which changes only its own beta, so its own
 * part of the residual), then its part. *changed: 1 when a contact became idle or stopped being
 * idle (the sweeps' rows change), else 0. */
static double sweepCheck(const cdContactProblem *p, int m, const double *D, int axes, int wpos, double *z, const cdV2 *lamd,
                         unsigned char *idle, const double *rec, double *lam, double *u, double vs, double margin,
                         int *changed) {
  int nc = p->ncon, moved = 0;
  double res = 0.0;
  lamFromLamd(nc, lamd, lam);
  cd_blockMatrixMul(&p->G, lam, u);
  /* g in a local (idle's stores are of char, which may alias p's fields: p->g was loaded again
   * at every contact), and for the unit axes a loop of its own with the alphas' tests written
   * out (the same tests, the same order): S2 10's first 60 steps 4.269G -> 4.248G, sweepCheck
   * 117.1M -> 95.7M self */
  const double *g = p->g;
  if (axes)
    for (int i = 0; i < nc; i++) {
      double ui[3] = {u[3 * i] + g[3 * i], u[3 * i + 1] + g[3 * i + 1], u[3 * i + 2] + g[3 * i + 2]};
      const double *a = &z[nc + 4 * (size_t)i];
      int sep = z[i] == 0.0 && ui[0] > margin && a[0] == 0.0 && a[1] == 0.0 && a[2] == 0.0 && a[3] == 0.0;
      moved |= idle[i] != sep;
      idle[i] = (unsigned char)sep;
      if (sep) z[(size_t)nc * 5 + (size_t)i] = slipSpeed4(ui[1], ui[2]);
      const double *ri = &rec[BLOCK_REC * (size_t)i];
      res = cd_lcpResidualMax(res, wpos ? contactResidual4(nc, z, ui, i, ri[REC_WI], ri[REC_MU], 1)
                                        : contactResidual4(nc, z, ui, i, ri[REC_WI], ri[REC_MU], 0));
    }
  else
    for (int i = 0; i < nc; i++) {
      double ui[3] = {u[3 * i] + g[3 * i], u[3 * i + 1] + g[3 * i + 1], u[3 * i + 2] + g[3 * i + 2]};
      int sep = z[i] == 0.0 && ui[0] > margin;
      for (int l = 0; sep && l < m; l++) sep = z[nc + m * i + l] == 0.0;
      moved |= idle[i] != sep;
      idle[i] = (unsigned char)sep;
      if (sep) z[nc + nc * m + i] = cd_lcpSlipSpeed(m, D, ui[1], ui[2]);
      const double *ri = &rec[BLOCK_REC * (size_t)i];
      res = cd_lcpResidualMax(res, cd_lcpContactResidualOf(nc, m, D, z, ui, i, ri[REC_WI], ri[REC_MU]));
    }
  *changed = moved;
  return res / vs;
}

/* the true residual (sweepCheck) costs one product with G, about a third of a full sweep and
 * as much as the sweep itself once the idle contacts are left out (by columns, without the
 * contacts that carry no impulse, the product about half that: sweepCheck). It is evaluated every
 * CHECK_EVERY sweeps, and with the active-set tries (the default) only there when near: the
 * sweep's largest block step (the change of each block's z in the residual's units) within
 * STEP_GATE of the nearest threshold the solve acts on (the tolerance, NEWTON_RES); else
 * when a step counted in sweeps is due (a try at NEWTON_SWEEPS, a stall test), at the sweep
 * limit, after the first sweep from an iterate that replaced the sweeps' own (a try's or the
 * clusters': that sweep sweeps every contact; on the pile a stall test's clusters left 10
 * such sweeps until the next check), and every CHECK_MAX sweeps (it also settles the idle
 * contacts, IDLE_MARGIN). Only the true residual stops the sweeps. On the 1000-sphere pile
 * (S2 10, 150 steps) the step is 0.24 .. 1.4 times the residual after the same sweep at 90 %
 * of the checks (0.09 .. 8.2 at all), and the residual creeps down by about 1 % a sweep pair
 * at 1 to 10 times NEWTON_RES for hundreds of sweeps: with the step or the last residual
 * within 10 as well, the checks came every second sweep there (4,747 checks, 2,803 of them at
 * no threshold and no due step). With the step alone within 6, every try starts at the same
 * sweep from the same iterate (400 steps: the same answers bit for bit, 14,908 -> 13,858
 * products); within 3 (3,354 checks against 4,747 in 150 steps) a crossing of NEWTON_RES is
 * seen a check later at step 91 and the answers part (every step converged); within 2,
 * 3 of 38 crossings in 150 steps are seen late. Without the tries
 * (--solver bgs) it stays every CHECK_EVERY sweeps: there the sweeps' answer is the step's,
 * and one stopped at the first sweep that meets the tolerance (an odd one) leaves the next
 * step's warm start at the tolerance (the 10-cube stack, 100 steps: 602 -> 609 sweeps at
 * 1 kg, 594 -> 723 at 1000 kg); the tries take the answer well inside it. */
#define STEP_GATE 6.0
#define CHECK_EVERY 2
#define CHECK_MAX 10
/* subspace steps (lcp_subspace.h): one every SUBSPACE_EVERY sweeps (a multiple of
 * CHECK_EVERY) while the residual is above the threshold, with at most SUBSPACE_ITER
 * GMRES iterations a pass; the first residual of a candidate may exceed the current one
 * by SUBSPACE_SPREAD (the projection onto the cones and the contacts whose active set is
 * still wrong leave work to the sweeps, which is why a candidate is judged SUBSPACE_EVERY
 * sweeps later), and after SUBSPACE_TRIES candidates that did not help a solve takes no
 * more */
/* active-set tries (lcp_newton.c, when the caller gives its workspace): the sweeps put
 * nearly every contact in its mode long before they carry the load to the tolerance, and
 * the exact solve of those modes, nearest the sweeps' iterate, then finishes the step (on
 * the settling 55-cube pyramid, where the warm start's modes cycle and the sweeps alone stall
 * near 1e-6 for a thousand sweeps: one to four active sets from a residual of 1e-4). A try
 * runs at the first residual check at or below NEWTON_RES, then each time the residual has
 * fallen NEWTON_RES_NEXT below the last try's, and after NEWTON_SWEEPS, 2 NEWTON_SWEEPS ..
 * sweeps; and once more when the sweeps meet the rule, so that the answer is well inside
 * the tolerance (and the next step's warm start keeps its modes: on the pyramid, answers
 * left by the sweeps at 1e-9 made the next steps' modes unreadable). A try that does not
 * solve costs a few active sets (lcp_newton.c: until one is no better), at most CD_BGS_TRY_SETS
 * (lcp_bgs.h), and none that it or an earlier try of the step solved (remember: the tries
 * from nearby iterates meet the same active sets); a try whose first set an earlier try solved
 * escapes (lcp_newton.c, escape: that set's single changes not solved yet, up to
 * CD_LCP_NEWTON_ESCAPE_SETS more sets, 24 a step), except the last one from the sweeps'
 * answer, which only takes it inside the tolerance. The limit: on the 1000-sphere pile (S2 10,
 * 150 steps) the tries took 1,929 active sets, 58 % of the step's CPU time (traced per phase:
 * the warm-start try 2 %, the sweeps 32 %, their checks 7 %), and 1,351 of them were in the
 * 121 of 252 tries that failed (14 at the method's 20), while 103 of the 131 that solved
 * needed at most 6: with at most 4 a try, 1,038 active sets and 19,570 sweeps against 13,165
 * (the sweeps mend a failed try's iterate for less), user CPU 10.41 -> 9.71 s (medians of three
 * alternating runs; 8 sets: 1,464 and 16,174, 6: 1,265 and 17,737, 3: 880 and 20,847, each
 * slower than 4 or no faster), every step converged. Tried and dropped (the same 150 steps,
 * with the limit of 4): the first try at the first sweep that changed no contact's mode (after
 * 4 sweeps; 19,351 sweeps and 1,042 sets, no faster: the modes rarely settle before 50 sweeps,
 * 4 to 17 contacts a sweep still change there), such a try after every failed one too (1,225
 * tries, 2,140 sets, slower), and the next try 20 or 30 sweeps after a failed one instead of
 * at twice the sweeps (595 and 465 tries, 1,817 and 1,483 sets, slower). A try that does not solve but ends below the sweeps' residual
 * (its best iterate is exact on its modes; a few contacts violate theirs) hands that iterate
 * to the sweeps, which mend those contacts, and the next try comes NEWTON_AGAIN sweeps later
 * (the 1000-sphere pile S2 10, first 120 steps: 160 -> 140 iterations a step, with the tries
 * at 50 sweeps instead of 100; from the sweeps' own iterate the tries at 50 took 151).
 * Re-measured after lcp_newton.c's neighbourhood rule (S2 10 and two more jitters of the same
 * pile, 400 steps each; work = sweeps + 10 active sets, callgrind: a set costs 10.8 sweeps):
 * no change of NEWTON_SWEEPS (20, 30, 40, 60), NEWTON_RES (3e-4, 1e-3), CD_BGS_TRY_SETS (3, 6,
 * 8), NEWTON_AGAIN (5, 20), NEWTON_RES_NEXT (0.1) or the sweeps' growth (x1.5) took less
 * (+1 % .. +24 %: each moves which rare steps crawl for hundreds of sweeps; with 40, a step of
 * S2 10 itself ended unconverged at the sweep limit; after CLUSTER_WAIT, 30 sweeps: the same
 * work, 16 % fewer sweeps for 32 % more sets; with the LDU, a set 9.1 sweeps: 30 +8 %, 40 +3 %,
 * 6 sets +2.5 %; all with lcp_newton.c's old backtracking over fewer changes: since a try
 * ends at its first set no better, 6 sets, lcp_bgs.h). tests/bench/HISTORY.md (helper
 * lcptries) has the figures and the trace of why first tries fail. */
/* idle contacts: a contact that carries no impulse and whose contact velocity u_n exceeds
 * IDLE_MARGIN vscale at a residual check (separated by more than that within the contact
 * margin, or opening) is left out of the sweeps until the next check, which settles its beta
 * (sweepCheck) and finds it idle again or not: its block solve would give the separated
 * candidate as long as u_n stays positive, and a neighbour that pushes it closed is seen at the
 * next check (its residual, which the check computes exactly, then counts, and it is swept
 * again). 0.1 vscale: with 0.01 (1,600 to 1,650 of the pile's 2,900 contacts idle) 400 steps
 * of S2 10 took 47,957 iterations against main's 37,514 and one step (329, the landing) missed
 * the tolerance after 6,000 sweeps (1.2e-6); with 0.1, 38,562, every step converged; with 1.0
 * (nothing idle, the check's schedule alone) 37,351. The steps a landing needs move with the
 * trajectory, which each of these moves within the tolerance of main's. */
#define IDLE_MARGIN 0.1
#define NEWTON_RES 1e-4
#define NEWTON_RES_NEXT 1e-2
#define NEWTON_SWEEPS 50
#define NEWTON_AGAIN 10
#define SUBSPACE_EVERY 10
#define SUBSPACE_ITER 30
#define SUBSPACE_SPREAD 100.0
#define SUBSPACE_TRIES 3

int cd_bgsTrySets(int max_sweeps) {
  return max_sweeps > 0 && max_sweeps < CD_BGS_TRY_SETS ? max_sweeps : CD_BGS_TRY_SETS;
}

double cd_bgsNextTryResidual(double res) { return res > NEWTON_RES ? NEWTON_RES : NEWTON_RES_NEXT * res; }

/* keeps r in ks, the nk (at most DRIFT_K) smallest ratios in [1, DRIFT_MAX) so far, ascending */
static void driftKeep(double *ks, int *nk, double r) {
  if (!(r >= 1.0 && r < DRIFT_MAX) || (*nk == DRIFT_K && !(r < ks[*nk - 1]))) return;
  int q = *nk < DRIFT_K ? (*nk)++ : *nk - 1;
  while (q > 0 && ks[q - 1] > r) ks[q] = ks[q - 1], q--;
  ks[q] = r;
}

/* a drift step (DRIFT_K): z moved along d = z - zprev (the sweeps' step over the last stall
 * window) to DRIFT_PAST times the DRIFT_K-th nearest boundary d reaches (a component of z, or
 * a sticking contact's friction bound mu lambda_n - sum alpha, taken to zero), counted in
 * windows, within [1, DRIFT_MAX), clipped at zero; 1 moved, 0 no boundary (z unchanged) */
static int driftStep(const cdContactProblem *p, int m, double *z, const double *zprev) {
  int nc = p->ncon, n = cd_lcpSize(nc, m), nk = 0;
  double ks[DRIFT_K];
  for (int t = 0; t < n; t++) {
    double d = z[t] - zprev[t];
    if (d < 0.0 && z[t] > 0.0) driftKeep(ks, &nk, z[t] / -d);
  }
  for (int i = 0; i < nc; i++) {
    if (!(z[i] > 0.0 && z[nc + nc * m + i] == 0.0)) continue;
    double sl = p->mu[i] * z[i], dsl = p->mu[i] * (z[i] - zprev[i]);
    for (int l = 0; l < m; l++) sl -= z[nc + m * i + l], dsl -= z[nc + m * i + l] - zprev[nc + m * i + l];
    if (dsl < 0.0 && sl > 0.0) driftKeep(ks, &nk, sl / -dsl);
  }
  if (!nk) return 0;
  double sd = DRIFT_PAST * ks[nk - 1];
  for (int t = 0; t < n; t++) z[t] = fmax(0.0, z[t] + sd * (z[t] - zprev[t]));
  return 1;
}

/* the active-set method from z (lcp_newton.c) into zt; when it meets the tolerance, zt is
 * copied to best and *bestres, *ok set. CD_OK or CD_ERR_NOMEM */
static int newtonTry(const cdContactProblem *p, int m, const double *D, double tol, const cdBgsOptions *opt,
                     const double *z, double *zt, double *best, double *bestres, cdBgsStats *st, int *ok,
                     double *tres, int escape) {
  size_t n = (size_t)cd_lcpSize(p->ncon, m);
  cdLcpNewtonOptions no = {
      .tolerance = tol,
      .max_iterations = cd_bgsTrySets(opt->max_sweeps),
      .lu_flops_max = opt->lu_flops_max,
      .local_modes = 1,
      .remember = 1,
      .escape = escape};
  cdLcpNewtonStats ns;
  memcpy(zt, z, n * sizeof *zt);
  int rc = cd_lcpNewtonSolve(opt->newton, p, m, D, zt, &no, &ns);
  st->newton_tries++;
  st->newton_sets += ns.iterations;
  st->factorizations += ns.factorizations;
  st->products += ns.products;
  st->newton_costly |= ns.costly;
  *ok = rc == CD_OK && ns.converged && ns.residual < *bestres;
  *tres = rc == CD_OK ? ns.residual : INFINITY;
  if (*ok) {
    memcpy(best, zt, n * sizeof *best);
    *bestres = ns.residual;
    st->newton_solved = 1;
  }
  return rc;
}

int cd_bgsSolve(const cdContactProblem *p, int m, const double *D, double *z, const cdBgsOptions *opt,
                cdBgsStats *stats) {
  cdBgsStats st = {0};
  st.converged = 1;
  int nc = p->ncon, k = m + 2, n = cd_lcpSize(nc, m), axes = isAxes4(m, D);
  double tol = opt && opt->tolerance > 0 ? opt->tolerance : 1e-8;
  int maxs = opt && opt->max_sweeps > 0 ? opt->max_sweeps : 1000;
  const int *order = opt ? opt->order : NULL;
  if (nc <= 0) {
    if (stats) *stats = st;
    return CD_OK;
  }
  double *lam = cd_malloc(3 * (size_t)nc * sizeof *lam); /* (ncon x 3) lambda whole (lamFromLamd) */
  double *work = cd_malloc(6 * (size_t)nc * sizeof *work);
  double *best = cd_malloc((size_t)n * sizeof *best);
  double *zb = cd_malloc((size_t)k * sizeof *zb);        /* one block's z */
  void *bw = cd_malloc(cd_bgsBlockWorkSize(m));
  cdBgsCluster cw = {cd_malloc(3 * (size_t)nc * sizeof(int)), NULL,
                     cd_malloc(((size_t)n + 4 * (size_t)nc) * sizeof(double))};
  double *zsub = cd_malloc(2 * (size_t)n * sizeof *zsub); /* (n) a subspace candidate, (n) the iterate it replaced */
  void *sw = cd_malloc(cd_lcpSubspaceWorkSize(p, m));
  unsigned char *idle = cd_malloc((size_t)nc); /* (ncon) 1: left out of the sweeps (IDLE_MARGIN) */
  size_t nnzb = (size_t)p->G.rowptr[nc];
  /* the pairs: a row of k blocks of G takes at most (k + 1) / 2 (k / 2 with its diagonal
   * block, which is not kept) */
  size_t npair = (nnzb + (size_t)nc) / 2 + 1;
  cdBgsRows rows = {0, cd_malloc(2 * (size_t)nc * sizeof(int)), cd_malloc((2 * (size_t)nc + 1) * sizeof(cdBgsPair *)), NULL,
                    cd_malloc(2 * BLOCK_REC * (size_t)nc * sizeof(double) + npair * sizeof(cdBgsPair)), NULL, NULL, 0};
  double *zprev = cd_malloc((size_t)n * sizeof *zprev); /* (n) z at the last stall test (drift steps) */
  cdV2 *lamd = cd_malloc(3 * (size_t)nc * sizeof *lamd); /* (3 ncon) the current lambda's entries as pairs */
  if (!lam || !work || !best || !zb || !bw || !cw.loc || !cw.cres || !zsub || !sw || !idle || !rows.con || !rows.ptr ||
      !rows.diag || !zprev || !lamd) {
    cd_free(lam), cd_free(work), cd_free(best), cd_free(zb), cd_free(bw), cd_free(cw.loc), cd_free(cw.cres);
    cd_free(zsub), cd_free(sw), cd_free(idle), cd_free(rows.con), cd_free(rows.ptr), cd_free(rows.diag);
    cd_free(zprev), cd_free(lamd);
    return CD_ERR_NOMEM;
  }
  int prev_ok = 0, drifts = 0; /* prev_ok: zprev is z at the last stall test, the sweeps' own since */
  double *ztrial = zsub + n, trial_res = INFINITY; /* the residual ztrial had; INFINITY: no trial */
  int trial_fails = 0;
  cw.member = cw.loc + nc;
  int *taken = cw.member + nc; /* (ncon) 1: in a cluster of this stall */
  double *zsave = cw.cres + nc, *lsave = zsave + n; /* (n), (3 ncon): the iterate before the clusters */
  for (int i = 0; i < nc; i++) cw.loc[i] = -1;
  memset(idle, 0, (size_t)nc);
  rows.rec = rows.diag + BLOCK_REC * (size_t)nc;
  rows.blk = (cdBgsPair *)(void *)(rows.rec + BLOCK_REC * (size_t)nc);
  rows.kept = rows.con + nc;
  rowsRecords(p, &rows);
  int rc = CD_OK, ref_sweep = 0, cluster_fails = 0, size = nc <= CLUSTER_WHOLE ? nc : CLUSTER_MAX;
  /* the next active-set try: at this residual, or after this many sweeps */
  int tries = opt && opt->newton;
  double newton_res = NEWTON_RES;
  int newton_sweeps = NEWTON_SWEEPS;

  /* the stopping threshold on the relative residual of cd_lcpResidual */
  double thresh = tol, vs = cd_contactProblemVelocityScale(p), margin = IDLE_MARGIN * vs;
  double *u = work + 3 * (size_t)nc; /* (3 ncon) G lambda at a check, G lambda + g at a stall test */

  lamdFromZ(nc, m, D, z, lam, lamd);
  int stale = 1; /* rows to be built: at the start, and when a check or a replaced iterate
                    changed the idle contacts */
  double res = sweepCheck(p, m, D, axes, rows.wpos, z, lamd, idle, rows.rec, lam, u, vs, margin, &stale);
  stale = 1;
  int recheck = 0; /* 1: the idle contacts were dropped (the iterate was replaced), so the
                      sweep sweeps them all: the check comes after it and finds them again */
  st.products++;
  memcpy(best, z, (size_t)n * sizeof *best);
  double bestres = res, ref_res = res;
  while (!(bestres <= thresh) && st.sweeps < maxs) {
    double step = 0.0; /* the largest block step of this sweep, m/s */
    if (stale) rowsBuild(p, order, idle, lamd, &rows);
    stale = 0;
    st.blocks += rows.n;
    int backward = !tries && st.sweeps % 2;
    if (axes)
      step = sweep4(&rows, D, nc, vs, z, lamd, bw, backward);
    else
      for (int ii = 0; ii < rows.n; ii++) {
        int pos = backward ? rows.n - 1 - ii : ii;
        step = cd_lcpMax(step, sweepBlockAny(&rows, pos, m, D, nc, vs, z, lamd, zb, bw));
      }
    st.sweeps++;
    /* the true residual: every CHECK_EVERY sweeps, with the tries only near a threshold, and
     * when a step counted in sweeps is due (STEP_GATE) */
    double gate = fmax(thresh, newton_res);
    int near = !(step > STEP_GATE * gate * vs);
    if (tries ? !(recheck || st.sweeps >= maxs || st.sweeps % CHECK_MAX == 0 || (near && st.sweeps % CHECK_EVERY == 0) ||
                  st.sweeps >= newton_sweeps || st.sweeps - ref_sweep >= STALL_SWEEPS)
              : st.sweeps % CHECK_EVERY && st.sweeps < maxs)
      continue;
    int changed;
    res = sweepCheck(p, m, D, axes, rows.wpos, z, lamd, idle, rows.rec, lam, u, vs, margin, &changed);
    stale |= changed, recheck = 0;
    st.products++;
    if (!isfinite(res)) break;
    if (st.sweeps % SUBSPACE_EVERY == 0) {
      int undone = 0;
      /* the subspace step taken SUBSPACE_EVERY sweeps ago is judged by where the sweeps
       * got from it: kept if the residual is below the one it started from, else undone */
      if (trial_res < INFINITY) {
        if (!(res < trial_res)) {
          memcpy(z, ztrial, (size_t)n * sizeof *z);
          lamdFromZ(nc, m, D, z, lam, lamd);
          memset(idle, 0, (size_t)nc), stale = recheck = 1;
          res = trial_res;
          trial_fails++;
          undone = 1;
        }
        trial_res = INFINITY;
      }
      /* (not again from the iterate just restored: the candidate would be the same) */
      if (!(res <= thresh) && trial_fails < SUBSPACE_TRIES && !undone && !tries) {
        cdLcpSubspaceStats sst;
        cd_lcpSubspaceStep(p, m, D, z, zsub, SUBSPACE_ITER, 0.1 * thresh * vs, sw, &sst);
        st.products += sst.iterations + sst.passes; /* a residual a pass */
        double r2 = sst.residual;
        if (r2 <= SUBSPACE_SPREAD * res) { /* (a NaN is never taken) */
          memcpy(ztrial, z, (size_t)n * sizeof *z);
          trial_res = res;
          memcpy(z, zsub, (size_t)n * sizeof *z);
          lamdFromZ(nc, m, D, z, lam, lamd);
          memset(idle, 0, (size_t)nc), stale = recheck = 1;
          res = r2;
        } else {
          trial_fails++;
        }
      }
    }
    if (!(res <= thresh) && tries && (res <= newton_res || st.sweeps >= newton_sweeps)) {
      /* an active-set try from here (see NEWTON_RES); when it does not solve, the sweeps
       * go on from their own iterate or from the try's, the lower */
      newton_res = cd_bgsNextTryResidual(res);
      while (newton_sweeps <= st.sweeps) newton_sweeps *= 2;
      int ok;
      double tres;
      if ((rc = newtonTry(p, m, D, tol, opt, z, zsub, best, &bestres, &st, &ok, &tres, 1))) break;
      tries = !st.newton_costly; /* over the bound: the subspace steps from here on */
      if (ok) break;
      if (tres < res) {
        /* the try's best iterate is exact on its modes and below the sweeps' residual: the
         * sweeps go on from it, and the next try comes NEWTON_AGAIN sweeps later */
        memcpy(z, zsub, (size_t)n * sizeof *z);
        lamdFromZ(nc, m, D, z, lam, lamd);
        memset(idle, 0, (size_t)nc), stale = recheck = 1;
        res = tres;
        newton_sweeps = st.sweeps + NEWTON_AGAIN;
        prev_ok = 0;
      }
    }
    if (!(res <= thresh) && st.sweeps - ref_sweep >= STALL_SWEEPS) {
      int drifted = 0;
      if (tries && prev_ok && st.sweeps >= DRIFT_WAIT && drifts < DRIFT_STEPS && res > STALL_FACTOR * ref_res) {
        if (driftStep(p, m, z, zprev)) {
          lamdFromZ(nc, m, D, z, lam, lamd);
          memset(idle, 0, (size_t)nc), stale = recheck = 1;
          newton_sweeps = st.sweeps + NEWTON_AGAIN;
          drifted = 1;
          drifts++;
        }
      }
      if (!drifted && res > STALL_FACTOR * ref_res && cluster_fails < CLUSTER_TRIES && (!tries || st.sweeps >= CLUSTER_WAIT)) {
        /* stalled: solve the clusters around the worst contacts exactly */
        memcpy(zsave, z, (size_t)n * sizeof *z);
        lamFromLamd(nc, lamd, lam);
        memcpy(lsave, lam, 3 * (size_t)nc * sizeof *lam);
        /* each contact's part of cd_lcpResidual, from u = G lambda + g (lam is lambda(z)) */
        cd_contactProblemVelocity(p, lam, u);
        for (int i = 0; i < nc; i++) {
          cw.cres[i] = cd_lcpContactResidual(p, m, D, z, &u[3 * i], i) / vs;
          taken[i] = 0;
        }
        for (int c = 0; c < CLUSTERS_A_STALL; c++) {
          int worst = -1;
          for (int i = 0; i < nc; i++)
            if (!taken[i] && cw.cres[i] > thresh && (worst < 0 || cw.cres[i] > cw.cres[worst])) worst = i;
          if (worst < 0) break;
          if ((rc = clusterSolve(p, m, D, z, lam, &cw, worst, size, taken))) break;
          st.factorizations++;
        }
        if (rc) break;
        memset(idle, 0, (size_t)nc), stale = recheck = 1; /* (the clusters' contacts may carry impulses now) */
        double r2 = cd_lcpResidual(p, m, D, z, work);
        st.products += 2; /* with the evaluation before the clusters */
        if (r2 < res) {
          res = r2;
        } else {
          memcpy(z, zsave, (size_t)n * sizeof *z);
          memcpy(lam, lsave, 3 * (size_t)nc * sizeof *lam);
          cluster_fails++;
        }
        lamdFromLam(nc, lam, lamd);
      }
      ref_sweep = st.sweeps;
      ref_res = res;
      /* (after a drift step the next window starts from it) z kept for the next stall test,
       * which comes STALL_SWEEPS sweeps from here (a check is due then, and only the end of the
       * solve passes it by), where a drift step can come: with the tries, from DRIFT_WAIT sweeps
       * on, while drift steps are left (the copies before, 118 of 139 kB each, were 11M of
       * S2 10's first 60 steps' instructions) */
      prev_ok = tries && !drifted && drifts < DRIFT_STEPS && st.sweeps + STALL_SWEEPS >= DRIFT_WAIT;
      if (prev_ok) memcpy(zprev, z, (size_t)n * sizeof *z);
    }
    if (res < bestres) {
      bestres = res;
      memcpy(best, z, (size_t)n * sizeof *best);
    }
  }
  if (rc == CD_OK && bestres <= thresh && tries && !st.newton_solved) {
    /* the sweeps met the rule: an active-set try from their answer takes it well inside */
    int ok;
    double tres;
    rc = newtonTry(p, m, D, tol, opt, best, zsub, best, &bestres, &st, &ok, &tres, 0);
  }
  memcpy(z, best, (size_t)n * sizeof *z);
  st.residual = bestres;
  st.converged = bestres <= thresh;
  cd_free(lam), cd_free(work), cd_free(best), cd_free(zb), cd_free(bw), cd_free(cw.loc), cd_free(cw.cres);
  cd_free(zsub), cd_free(sw), cd_free(idle), cd_free(rows.con), cd_free(rows.ptr), cd_free(rows.diag);
  cd_free(zprev), cd_free(lamd);
  if (stats) *stats = st;
  return rc;
}
