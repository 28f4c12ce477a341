/* test_ccp.c: the CCP solvers (primal, apgd, pgs, ipm) and the ccp backend on problem-level
 * cases whose answers are known in closed form or computed another way here.
 *
 * Tolerances. The solvers stop on the shared residual r = max_i ||l_i - Proj_K(l_i - c̄_i)|| /
 * ||g||_inf, l_i = lambda_i / meff_i (cone.h). When G is positive definite with eigenvalues in
 * [m, M], the error in lambda is at most (1 + M) / m times the unscaled residual (the natural
 * map of a strongly monotone problem), and the error in c̄ at most M times that. The bounds
 * below are those factors times the tolerance.
 *
 * The random problems below carry both forms of a problem (problem.h): the velocity-space one
 * (bodies, Jacobian blocks, v_f) and G built from it here by brute force. primal runs on each
 * form: in velocity space (as in a simulation) and, with nbody set to 0, in contact space (as on
 * a problem read from a file); "primal/G" below is the latter. "primal/cg" is the velocity-space
 * primal with its Newton steps by conjugate gradients (ccp_hessian_cg.c), forced by a bound of
 * 1e-300 flops a contact on the factorization, as a pile's fill makes it in a simulation.
 */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "ccp.h"
#include "ccp_relax.h"
#include "cone.h"
#include "problem.h"
#include "test.h"

enum {
  SOLVER_APGD = 0,
  SOLVER_PGS = 1,
  SOLVER_IPM = 2,
  SOLVER_PRIMAL = 3,
  SOLVER_PRIMAL_G = 4,
  SOLVER_PRIMAL_CG = 5,
  NSOLVER = 6
};
static const char *const solverName[NSOLVER] = {"apgd", "pgs", "ipm", "primal", "primal/G", "primal/cg"};

static int secondOrder(int s) { return s >= SOLVER_IPM; }

/* runs one solver on p (lambda in p as the warm start); primal/G hides the velocity-space form */
static int runSolver(int s, cdContactProblem *p, double tol, int maxit, cdSolveStats *st) {
  cdCcpParams par = {tol, maxit, 0, 0.0, 0.0, 1, 1}; /* apgd as the backend runs it */
  if (s == SOLVER_APGD) return cd_ccpApgdSolve(p, &par, NULL, st);
  if (s == SOLVER_PGS) return cd_ccpPgsSolve(p, &par, st);
  if (s == SOLVER_PRIMAL) return cd_ccpPrimalSolve(p, &par, NULL, st);
  if (s == SOLVER_PRIMAL_CG) {
    par.cg_factor_flops = 1e-300;
    return cd_ccpPrimalSolve(p, &par, NULL, st);
  }
  if (s == SOLVER_PRIMAL_G) {
    int nb = p->nbody;
    p->nbody = 0;
    int rc = cd_ccpPrimalSolve(p, &par, NULL, st);
    p->nbody = nb;
    return rc;
  }
  cholmod_common cc;
  cholmod_start(&cc);
  cc.print = 0;
  int rc = cd_ccpIpmSolve(p, &par, &cc, st);
  cholmod_finish(&cc);
  return rc;
}

static int problemAlloc(cdContactProblem *p, int ncon, int nnzb) {
  memset(p, 0, sizeof *p);
  p->ncon = ncon;
  if (cd_blockMatrixAlloc(&p->G, ncon, nnzb) != 0) return -1;
  p->g = cd_calloc(3 * (size_t)ncon, sizeof(double));
  p->mu = cd_calloc((size_t)ncon, sizeof(double));
  p->lambda = cd_calloc(3 * (size_t)ncon, sizeof(double));
  return p->g && p->mu && p->lambda ? 0 : -1;
}

/* the unit point mass sliding at v0 along t1 on the ground: G = I (the contact Jacobian of a
 * point is a rotation), g = (phi/dt - 9.81 dt, v0, 0) */
static int slidingPoint(cdContactProblem *p, double mu, double v0, double dt, double phi) {
  if (problemAlloc(p, 1, 1) != 0) return -1;
  p->G.rowptr[1] = 1;
  p->G.val[0] = p->G.val[4] = p->G.val[8] = 1.0;
  p->g[0] = phi / dt - 9.81 * dt;
  p->g[1] = v0;
  p->mu[0] = mu;
  return 0;
}

static void cbarOf(const cdContactProblem *p, double *cb) {
  cd_blockMatrixMul(&p->G, p->lambda, cb);
  for (int k = 0; k < 3 * p->ncon; k++) cb[k] += p->g[k];
}

CD_TEST(slidingPointLeavesWithTheCcpClosedFormVelocity) {
  /* G = I, so lambda = Proj_K(-g): -g = (n, -v0, 0) with n = 9.81 dt - phi/dt lies beyond
   * the cone, lambda_N = (n + mu v0) / (1 + mu^2), and c̄_T = v0 - mu lambda_N gives
   *   c_T = (v0 - mu n) / (1 + mu^2),  c̄_N = mu c_T,  c_N = c̄_N - phi/dt = mu c_T - phi/dt;
   * for phi = 0 that is NUMERICS.md's c_T = (v0 - mu g dt) / (1 + mu^2), c_N = mu c_T.
   * With G = I the error in c̄ is at most 2 x the unscaled residual. */
  const double mu = 0.5, v0 = 2.0, dt = 0.01;
  const double phis[2] = {0.0, 0.0005};
  for (int s = 0; s < NSOLVER; s++)
    for (int k = 0; k < 2; k++) {
      cdContactProblem p;
      CHECK(slidingPoint(&p, mu, v0, dt, phis[k]) == 0);
      cdSolveStats st;
      double tol = secondOrder(s) ? CD_CCP_NEWTON_TOL : CD_CCP_ITER_TOL;
      CHECK(runSolver(s, &p, 0, 0, &st) == CD_OK);
      CHECK_MSG(st.converged && st.residual <= tol, "%s: residual %g", solverName[s], st.residual);
      double n = 9.81 * dt - phis[k] / dt, cT = (v0 - mu * n) / (1 + mu * mu), cb[3];
      cbarOf(&p, cb);
      double bound = 2.0 * tol * cd_contactProblemVelocityScale(&p);
      CHECK_NEAR(cb[1], cT, bound);
      CHECK_NEAR(cb[2], 0.0, bound);
      CHECK_NEAR(cb[0] - phis[k] / dt, mu * fabs(cb[1]) - phis[k] / dt, 2 * bound);
      CHECK_NEAR(cb[0] - phis[k] / dt, mu * cT - phis[k] / dt, bound);
      if (phis[k] == 0.0) CHECK_NEAR(cT, (v0 - mu * 9.81 * dt) / (1 + mu * mu), 1e-15);
      cd_contactProblemFree(&p);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* random multibody problems: bodies with diagonal M^-1 (1/m three times, then a diagonal
 * inverse inertia), contacts between two bodies or a body and the ground with random 3x6
 * Jacobian blocks; G = J M^-1 J^T block-sparse with a block (i, j) exactly when contacts i and
 * j share a body (O(ncon^2) here: test sizes only), and the velocity-space form alongside */

typedef struct {
  unsigned long s;
} rng;
static double rnd(rng *r) { /* uniform [-1, 1) */
  r->s = r->s * 6364136223846793005ul + 1442695040888963407ul;
  return (double)(r->s >> 11) / 4503599627370496.0 - 1.0;
}

typedef struct {
  int nbody, ncon;
  double minv[8][6];      /* per body diagonal of M^-1 */
  int body[12][2];        /* contact bodies, -1 the ground */
  double J[12][2][18];    /* contact i, side k: 3x6 block row-major */
  double vf[8 * 6];       /* free velocity */
  double phi[12];
} randomSystem;

static void randomSystemMake(randomSystem *sys, rng *r, int nbody, int ncon) {
  memset(sys, 0, sizeof *sys);
  sys->nbody = nbody;
  sys->ncon = ncon;
  for (int b = 0; b < nbody; b++)
    for (int k = 0; k < 6; k++) sys->minv[b][k] = k > 0 && k < 3 ? sys->minv[b][0] : 0.5 + 0.5 * (rnd(r) + 1.0);
  for (int i = 0; i < ncon; i++) {
    int a = (int)((rnd(r) + 1.0) * 0.5 * (nbody + 1)) - 1, b = (int)((rnd(r) + 1.0) * 0.5 * nbody);
    if (a >= nbody) a = nbody - 1;
    if (b >= nbody) b = nbody - 1;
    if (a == b) a = -1;
    sys->body[i][0] = a;
    sys->body[i][1] = b;
    for (int k = 0; k < 2; k++)
      for (int e = 0; e < 18; e++) sys->J[i][k][e] = rnd(r);
    sys->phi[i] = 0.002 * (rnd(r) + 1.0);
  }
  for (int k = 0; k < 6 * nbody; k++) sys->vf[k] = rnd(r);
}

/* G_ij = sum over shared bodies of J_i,b M_b^-1 J_j,b^T; g = J v_f + (phi/dt, 0, 0) */
static int randomProblem(const randomSystem *sys, double dt, const double *mu, cdContactProblem *p) {
  int nc = sys->ncon, nnzb = 0;
  static double blocks[12][12][9];
  static int has[12][12];
  memset(blocks, 0, sizeof blocks);
  memset(has, 0, sizeof has);
  for (int i = 0; i < nc; i++)
    for (int j = 0; j < nc; j++)
      for (int ka = 0; ka < 2; ka++)
        for (int kb = 0; kb < 2; kb++) {
          int b = sys->body[i][ka];
          if (b < 0 || b != sys->body[j][kb]) continue;
          has[i][j] = 1;
          for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
              for (int d = 0; d < 6; d++)
                blocks[i][j][3 * r + c] += sys->J[i][ka][6 * r + d] * sys->minv[b][d] * sys->J[j][kb][6 * c + d];
        }
  for (int i = 0; i < nc; i++) {
    has[i][i] = 1;
    for (int j = 0; j < nc; j++) nnzb += has[i][j];
  }
  if (problemAlloc(p, nc, nnzb) != 0) return -1;
  int k = 0;
  for (int i = 0; i < nc; i++) {
    p->G.rowptr[i] = k;
    for (int j = 0; j < nc; j++) {
      if (!has[i][j]) continue;
      if (i == j) p->G.diag[i] = k;
      p->G.col[k] = j;
      memcpy(&p->G.val[9 * k], blocks[i][j], sizeof blocks[i][j]);
      k++;
    }
  }
  p->G.rowptr[nc] = k;
  /* the velocity-space form */
  int nb = sys->nbody;
  p->nbody = nb;
  p->cbody = cd_malloc(2 * (size_t)nc * sizeof(int));
  p->J = cd_malloc(36 * (size_t)nc * sizeof(double));
  p->minv = cd_malloc((size_t)nb * sizeof(double));
  p->Iinv = cd_calloc(9 * (size_t)nb, sizeof(double));
  p->vf = cd_malloc(6 * (size_t)nb * sizeof(double));
  p->meff = cd_malloc((size_t)nc * sizeof(double));
  if (!p->cbody || !p->J || !p->minv || !p->Iinv || !p->vf || !p->meff) return -1;
  for (int b = 0; b < nb; b++) {
    p->minv[b] = sys->minv[b][0];
    for (int e = 0; e < 3; e++) p->Iinv[9 * b + 4 * e] = sys->minv[b][3 + e];
  }
  memcpy(p->vf, sys->vf, 6 * (size_t)nb * sizeof(double));
  for (int i = 0; i < nc; i++) {
    for (int s = 0; s < 2; s++) {
      p->cbody[2 * i + s] = sys->body[i][s];
      if (sys->body[i][s] >= 0) memcpy(&p->J[36 * i + 18 * s], sys->J[i][s], 18 * sizeof(double));
      else memset(&p->J[36 * i + 18 * s], 0, 18 * sizeof(double));
    }
    p->meff[i] = 1.0 / p->G.val[9 * p->G.diag[i]];
  }
  for (int i = 0; i < nc; i++) {
    p->mu[i] = mu[i];
    for (int r = 0; r < 3; r++) {
      double s = 0.0;
      for (int ka = 0; ka < 2; ka++) {
        int b = sys->body[i][ka];
        if (b < 0) continue;
        for (int d = 0; d < 6; d++) s += sys->J[i][ka][6 * r + d] * sys->vf[6 * b + d];
      }
      p->g[3 * i + r] = s + (r == 0 ? sys->phi[i] / dt : 0.0);
    }
  }
  return 0;
}

/* trial's random problem of the collections below: 3 to 10 contacts on 3 or 4 bodies, every
 * fifth contact frictionless, the others mu in [0.1, 1.1] */
static int randomTrial(rng *r, int trial, double dt, randomSystem *sys, double mu[12], cdContactProblem *p) {
  int nc = 3 + trial % 8, nb = 3 + trial % 2;
  randomSystemMake(sys, r, nb, nc);
  for (int i = 0; i < nc; i++) mu[i] = i % 5 == 4 ? 0.0 : 0.1 + 0.5 * (rnd(r) + 1.0);
  return randomProblem(sys, dt, mu, p);
}

/* the frictionless CCP is the LCP G_NN l + g_N >= 0 ⟂ l >= 0 on the normal components:
 * enumerate the 2^ncon active sets, solving G_SS l_S = -g_S by Gaussian elimination */
static int lcpEnumerate(const cdContactProblem *p, double *lN) {
  int nc = p->ncon;
  double A[12][12], b[12], GN[12][12];
  for (int i = 0; i < nc; i++)
    for (int j = 0; j < nc; j++) GN[i][j] = 0.0;
  for (int i = 0; i < nc; i++)
    for (int k = p->G.rowptr[i]; k < p->G.rowptr[i + 1]; k++) GN[i][p->G.col[k]] = p->G.val[9 * k];
  for (unsigned mask = 0; mask < (1u << nc); mask++) {
    int idx[12], m = 0, ok = 1;
    for (int i = 0; i < nc; i++)
      if (mask & (1u << i)) idx[m++] = i;
    for (int r = 0; r < m; r++) {
      for (int c = 0; c < m; c++) A[r][c] = GN[idx[r]][idx[c]];
      b[r] = -p->g[3 * idx[r]];
    }
    for (int c = 0; c < m && ok; c++) { /* elimination with partial pivoting */
      int piv = c;
      for (int r = c + 1; r < m; r++)
        if (fabs(A[r][c]) > fabs(A[piv][c])) piv = r;
      if (fabs(A[piv][c]) < 1e-12) ok = 0;
      if (!ok) break;
      for (int e = 0; e < m; e++) {
        double t = A[c][e];
        A[c][e] = A[piv][e];
        A[piv][e] = t;
      }
      double t = b[c];
      b[c] = b[piv];
      b[piv] = t;
      for (int r = c + 1; r < m; r++) {
        double f = A[r][c] / A[c][c];
        for (int e = c; e < m; e++) A[r][e] -= f * A[c][e];
        b[r] -= f * b[c];
      }
    }
    if (!ok) continue;
    for (int r = m - 1; r >= 0; r--) {
      for (int e = r + 1; e < m; e++) b[r] -= A[r][e] * b[e];
      b[r] /= A[r][r];
    }
    for (int i = 0; i < nc; i++) lN[i] = 0.0;
    for (int r = 0; r < m; r++) {
      if (b[r] < -1e-12) ok = 0;
      lN[idx[r]] = b[r];
    }
    for (int i = 0; i < nc && ok; i++) {
      double w = p->g[3 * i];
      for (int j = 0; j < nc; j++) w += GN[i][j] * lN[j];
      if (w < -1e-10) ok = 0;
    }
    if (ok) return 0;
  }
  return -1;
}

CD_TEST(frictionlessCcpEqualsTheEnumeratedLcp) {
  rng r = {7};
  const double dt = 0.01;
  int checked = 0;
  for (int trial = 0; trial < 12; trial++) {
    int nc = 3 + trial % 6;
    randomSystem sys;
    randomSystemMake(&sys, &r, 3, nc);
    double mu[12] = {0};
    cdContactProblem p;
    CHECK(randomProblem(&sys, dt, mu, &p) == 0);
    double lN[12];
    if (lcpEnumerate(&p, lN) != 0) {
      CHECK_MSG(0, "trial %d: enumeration found no LCP solution", trial);
      cd_contactProblemFree(&p);
      continue;
    }
    for (int s = 0; s < NSOLVER; s++) {
      memset(p.lambda, 0, 3 * (size_t)nc * sizeof(double));
      cdSolveStats st;
      /* a tight tolerance so that the comparison below is decided by the LCP, not the stop */
      double tol = 1e-10;
      CHECK(runSolver(s, &p, tol, 20000, &st) == CD_OK);
      CHECK_MSG(st.converged, "trial %d %s: residual %g after %d", trial, solverName[s], st.residual, st.iterations);
      for (int i = 0; i < nc; i++) {
        CHECK_NEAR(p.lambda[3 * i], lN[i], 1e-6 * (1 + fabs(lN[i])));
        CHECK(p.lambda[3 * i + 1] == 0.0 && p.lambda[3 * i + 2] == 0.0);
      }
    }
    checked++;
    cd_contactProblemFree(&p);
  }
  CHECK(checked == 12);
}

CD_TEST(ccpSolversAgreeOnRandomFrictionalProblems) {
  /* 3-10 contacts on 3-4 bodies, some with more contact rows than body dofs (singular G, as
   * in stacks: lambda is then not unique, but c̄ = G lambda + g is, so c̄ is compared). Each
   * solver must meet its own residual, and all agree on c̄ to 1e-6 (relative to the scale)
   * with the interior point's when solved to 1e-10 (apgd, pgs) and 1e-12 (the second-order
   * ones). At their defaults the second-order solvers converge in tens of steps. */
  rng r = {99};
  const double dt = 0.01;
  int nsolved[NSOLVER] = {0}, ntrial = 24, npolished = 0, maxIpm = 0, maxNewton[3] = {0, 0, 0};
  double worst = 0.0;
  for (int trial = 0; trial < ntrial; trial++) {
    int nc = 3 + trial % 8;
    randomSystem sys;
    double mu[12];
    cdContactProblem p;
    CHECK(randomTrial(&r, trial, dt, &sys, mu, &p) == 0);
    double cb[NSOLVER][36];
    for (int s = 0; s < NSOLVER; s++) {
      memset(p.lambda, 0, 3 * (size_t)nc * sizeof(double));
      cdSolveStats st;
      double tol = secondOrder(s) ? 1e-12 : 1e-10;
      CHECK(runSolver(s, &p, tol, 50000, &st) == CD_OK);
      CHECK_MSG(st.converged, "trial %d (%d contacts) %s: residual %g after %d", trial, nc, solverName[s],
                st.residual, st.iterations);
      nsolved[s] += st.converged;
      /* the CG path factors nothing and counts each product with H besides the residual checks */
      if (s == SOLVER_PRIMAL_CG)
        CHECK_MSG(st.factorizations == 0 && st.products >= 2 * st.iterations + 1,
                  "trial %d primal/cg: %d factorizations, %d products for %d Newton steps", trial, st.factorizations,
                  st.products, st.iterations);
      cdConeResidual parts;
      cd_coneResidualOf(&p, p.lambda, cb[s], &parts);
      /* the reported residual is the returned answer's (primal computes c̄ through J, not G:
       * the same up to round-off) */
      CHECK_MSG(fabs(parts.value - st.residual) <= 1e-6 * st.residual + 1e-13, "%s: reported %g, recomputed %g",
                solverName[s], st.residual, parts.value);
    }
    /* the second-order solvers at their defaults: converged, in tens of steps */
    for (int s = SOLVER_IPM; s < NSOLVER; s++) {
      cdSolveStats dst;
      memset(p.lambda, 0, 3 * (size_t)nc * sizeof(double));
      CHECK(runSolver(s, &p, 0, 0, &dst) == CD_OK);
      CHECK_MSG(dst.converged && dst.iterations <= 40, "trial %d %s at defaults: residual %g, %d iterations", trial,
                solverName[s], dst.residual, dst.iterations);
      if (s == SOLVER_IPM) {
        npolished += dst.fallbacks;
        maxIpm = dst.fallbacks ? maxIpm : (dst.iterations > maxIpm ? dst.iterations : maxIpm);
      } else if (dst.iterations > maxNewton[s - SOLVER_PRIMAL]) {
        maxNewton[s - SOLVER_PRIMAL] = dst.iterations;
      }
    }
    double sc = cd_contactProblemVelocityScale(&p);
    for (int s = 0; s < NSOLVER; s++)
      for (int k = 0; k < 3 * nc; k++) {
        double d = fabs(cb[s][k] - cb[SOLVER_IPM][k]) / sc;
        worst = fmax(worst, d);
        CHECK_MSG(d <= 1e-6, "trial %d %s c̄[%d] %.12g vs ipm %.12g", trial, solverName[s], k, cb[s][k],
                  cb[SOLVER_IPM][k]);
      }
    cd_contactProblemFree(&p);
  }
  printf("    random problems: apgd %d, pgs %d, ipm %d, primal %d, primal/G %d, primal/cg %d of %d solved; worst c̄\n"
         "    difference %.2g; at 1e-8 the interior point alone took <= %d steps (%d of %d needed the Gauss-Seidel\n"
         "    polish), primal <= %d Newton steps, primal/G <= %d, primal/cg <= %d\n",
         nsolved[0], nsolved[1], nsolved[2], nsolved[3], nsolved[4], nsolved[5], ntrial, worst, maxIpm, npolished,
         ntrial, maxNewton[0], maxNewton[1], maxNewton[2]);
}

/* apgd's per-contact metric and step bound (ccp_apgd.c) from G's diagonal blocks, as
 * ccp_relax.c takes them: sr, ipn, ipt, iw of each contact; the largest step bound s_i */
static double relaxMetric(const cdContactProblem *p, double *sr, double *ipn, double *ipt, double *iw) {
  double smax = 0.0;
  for (int i = 0; i < p->ncon; i++) {
    const double *B = &p->G.val[9 * (size_t)p->G.diag[i]];
    double dn = B[0], dtn = 0.5 * (B[4] + B[8]), si = cd_ccpRelaxCurvature(B, dn, dtn);
    smax = fmax(smax, si);
    sr[i] = sqrt(dtn / dn);
    ipn[i] = 1.0 / (si * dn);
    ipt[i] = 1.0 / (si * dtn);
    iw[i] = 1.0 / cd_contactProblemMeff(p, i);
  }
  return smax;
}

CD_TEST(relaxSweepsReachTheirThresholdAndAgreeWithIpm) {
  /* ccp_relax.c alone, from lambda = 0 on the random problems (G_ii full 3x3 blocks, so the
   * step's curvature bound s_i > 1 is exercised): the worklist sweeps must empty their list,
   * after which every contact's residual, recomputed from c̄ = G lambda + g anew, is within the
   * threshold (1e-10 of the scale, up to the round-off of the incrementally kept c̄), and c̄
   * must agree with the interior point's (1e-12) to 1e-6 of the scale, as the other solvers do */
  rng r = {7};
  const double dt = 0.01;
  long maxUpd = 0;
  for (int trial = 0; trial < 16; trial++) {
    int nc = 3 + trial % 8;
    randomSystem sys;
    double mu[12];
    cdContactProblem p;
    CHECK(randomTrial(&r, trial, dt, &sys, mu, &p) == 0);
    double sr[12], ipn[12], ipt[12], iw[12], c[36], ref[36];
    CHECK(relaxMetric(&p, sr, ipn, ipt, iw) > 1.0); /* full blocks: the bound is needed */
    /* the interior point's c̄ */
    cdSolveStats st;
    CHECK(runSolver(SOLVER_IPM, &p, 1e-12, 0, &st) == CD_OK && st.converged);
    cbarOf(&p, ref);
    /* the sweeps from zero */
    memset(p.lambda, 0, 3 * (size_t)nc * sizeof(double));
    memcpy(c, p.g, 3 * (size_t)nc * sizeof(double));
    double sc = cd_contactProblemVelocityScale(&p), thr = 1e-10 * sc;
    cdCcpRelaxWork rw = {0};
    long upd = 0;
    cdCcpRelaxMetric m = {sr, ipn, ipt, iw};
    CHECK_MSG(cd_ccpRelax(&p, &m, thr, INFINITY, 1000000L * nc, p.lambda, c, &rw, &upd) == 1,
              "trial %d: the sweeps ran out of their budget (%ld updates)", trial, upd);
    if (upd > maxUpd) maxUpd = upd;
    for (int i = 0; i < nc; i++) { /* in K, up to the round-off of the scaled projection */
      const double *l = &p.lambda[3 * i];
      CHECK(l[0] >= 0.0 && hypot(l[1], l[2]) <= mu[i] * l[0] * (1.0 + 1e-14) + 1e-300);
    }
    cdConeResidual parts;
    double rex = cd_coneResidualOf(&p, p.lambda, c, &parts);
    CHECK_MSG(rex <= 1e-10 * (1.0 + 1e-3), "trial %d: residual %g after the sweeps (threshold 1e-10)", trial, rex);
    for (int k = 0; k < 3 * nc; k++)
      CHECK_MSG(fabs(c[k] - ref[k]) <= 1e-6 * sc, "trial %d c̄[%d] %.12g vs ipm %.12g", trial, k, c[k], ref[k]);
    cd_ccpRelaxWorkFree(&rw);
    cd_contactProblemFree(&p);
  }
  printf("    16 random problems: the sweeps reached 1e-10 in at most %ld block updates\n", maxUpd);
}

CD_TEST(relaxSweepsLeaveIdleContactsOutAndApgdCatchesThem) {
  /* ccp_relax.c's idle contacts: from lambda = 0 (c̄ = g) with idle = 0, every contact whose g
   * lies strictly inside K* is left out. After the sweeps (1) the idle contacts still carry no
   * impulse, (2) every other contact is within the threshold by c̄ recomputed with the assembled
   * G (its c̄ is kept exactly, up to round-off), while (3) on some problems an idle contact's
   * recomputed c̄ has left K* (the others' impulses pushed it out): what apgd's rounds are for.
   * (4) apgd as the backend runs it (sweeps with idle contacts, then c̄ anew and sweeps again)
   * converges on every problem to the interior point's c̄ (1e-6 of the scale). */
  rng r = {31};
  const double dt = 0.01;
  int nidle = 0, nwoke = 0;
  for (int trial = 0; trial < 24; trial++) {
    randomSystem sys;
    double mu[12];
    cdContactProblem p;
    CHECK(randomTrial(&r, trial, dt, &sys, mu, &p) == 0);
    int nc = p.ncon;
    double sr[12], ipn[12], ipt[12], iw[12], c[36], ref[36], cb[36];
    relaxMetric(&p, sr, ipn, ipt, iw);
    cdSolveStats st;
    CHECK(runSolver(SOLVER_IPM, &p, 1e-12, 0, &st) == CD_OK && st.converged);
    cbarOf(&p, ref);
    memset(p.lambda, 0, 3 * (size_t)nc * sizeof(double));
    memcpy(c, p.g, 3 * (size_t)nc * sizeof(double));
    int idle[12];
    for (int i = 0; i < nc; i++) {
      const double *gi = &p.g[3 * i];
      idle[i] = gi[0] - mu[i] * hypot(gi[1], gi[2]) > 0.0;
      nidle += idle[i];
    }
    double sc = cd_contactProblemVelocityScale(&p), thr = 1e-10 * sc;
    cdCcpRelaxWork rw = {0};
    long upd = 0;
    cdCcpRelaxMetric m = {sr, ipn, ipt, iw};
    CHECK(cd_ccpRelax(&p, &m, thr, 0.0, 1000000L * nc, p.lambda, c, &rw, &upd) == 1);
    cd_ccpRelaxWorkFree(&rw);
    cd_coneResidualOf(&p, p.lambda, c, NULL);
    int woke = 0;
    for (int i = 0; i < nc; i++) {
      const double *l = &p.lambda[3 * i], *ci = &c[3 * i];
      if (idle[i]) {
        CHECK_MSG(l[0] == 0.0 && l[1] == 0.0 && l[2] == 0.0, "trial %d: idle contact %d moved", trial, i);
        woke |= ci[0] - mu[i] * hypot(ci[1], ci[2]) < -thr;
      } else {
        double r2 = sqrt(cd_coneNatural2(mu[i], iw[i], l, ci));
        CHECK_MSG(r2 <= thr * (1.0 + 1e-3), "trial %d contact %d: residual %g after the sweeps (threshold %g)", trial,
                  i, r2, thr);
      }
    }
    nwoke += woke;
    /* apgd from zero, tolerance 1e-10 so that c̄ is pinned well within 1e-6 */
    memset(p.lambda, 0, 3 * (size_t)nc * sizeof(double));
    cdCcpParams par = {1e-10, 0, 0, 0.0, 0.0, 1, 1};
    CHECK(cd_ccpApgdSolve(&p, &par, NULL, &st) == CD_OK);
    CHECK_MSG(st.converged, "trial %d: apgd residual %g", trial, st.residual);
    cbarOf(&p, cb);
    for (int k = 0; k < 3 * nc; k++)
      CHECK_MSG(fabs(cb[k] - ref[k]) <= 1e-6 * sc, "trial %d c̄[%d] %.12g vs ipm %.12g", trial, k, cb[k], ref[k]);
    cd_contactProblemFree(&p);
  }
  CHECK(nidle > 0);
  CHECK_MSG(nwoke > 0, "no idle contact was pushed out of K* on these problems: the recheck is untested");
  printf("    24 random problems: %d idle contacts at the start, on %d problems one of them left K* during the "
         "sweeps\n", nidle, nwoke);
}

CD_TEST(relaxSweepsGiveTheSameAnswerWithAReusedWorkspace) {
  /* ccp_relax.c packs the rows it reads (the non-idle contacts' blocks) and the contacts'
   * records into its workspace on every call. One workspace reused across problems of other
   * sizes and other idle sets (idle 0 or none; a budget that stops some calls midway) must give
   * bit for bit what a fresh workspace gives on each: the same impulses, c̄, return value and
   * block updates, and the contacts packed out of the last problem never leak into the next. */
  rng r = {57};
  const double dt = 0.01;
  cdCcpRelaxWork shared = {0};
  int stopped = 0;
  for (int trial = 0; trial < 24; trial++) {
    randomSystem sys;
    double mu[12];
    cdContactProblem p;
    CHECK(randomTrial(&r, (trial * 5) % 16, dt, &sys, mu, &p) == 0);
    int nc = p.ncon;
    double sr[12], ipn[12], ipt[12], iw[12], l1[36], c1[36], l2[36], c2[36];
    relaxMetric(&p, sr, ipn, ipt, iw);
    cdCcpRelaxMetric m = {sr, ipn, ipt, iw};
    double thr = 1e-10 * cd_contactProblemVelocityScale(&p), idle = trial % 2 ? 0.0 : INFINITY;
    long budget = trial % 3 == 2 ? 2L * nc : 1000000L * nc, u1 = -1, u2 = -2;
    memset(l1, 0, sizeof l1);
    memcpy(c1, p.g, 3 * (size_t)nc * sizeof(double));
    memcpy(l2, l1, sizeof l1);
    memcpy(c2, c1, sizeof c1);
    cdCcpRelaxWork fresh = {0};
    int r1 = cd_ccpRelax(&p, &m, thr, idle, budget, l1, c1, &shared, &u1);
    int r2 = cd_ccpRelax(&p, &m, thr, idle, budget, l2, c2, &fresh, &u2);
    CHECK_MSG(r1 == r2 && u1 == u2 && r1 >= 0, "trial %d: returns %d, %d after %ld, %ld updates", trial, r1, r2, u1,
              u2);
    CHECK_MSG(memcmp(l1, l2, 3 * (size_t)nc * sizeof(double)) == 0 && memcmp(c1, c2, 3 * (size_t)nc * sizeof(double)) == 0,
              "trial %d: a reused workspace changed the sweeps", trial);
    stopped += r1 == 0;
    cd_ccpRelaxWorkFree(&fresh);
    cd_contactProblemFree(&p);
  }
  CHECK_MSG(stopped > 0, "no call ran out of its budget: the early return is untested");
  cd_ccpRelaxWorkFree(&shared);
}

CD_TEST(ccpImpulsesSolveTheVelocitySpacePrimal) {
  /* seed 001's primal: min 1/2 (v - v_f)^T M (v - v_f) s.t. J v - c_stab ∈ K*, multipliers
   * lambda. From the impulses of each second-order solve (ipm, primal in velocity space, primal
   * in contact space, in turn), v = v_f + M^-1 J^T lambda must be
   * feasible (J v - c_stab = c̄ ∈ K*, checked per contact), complementary, and optimal: no
   * feasible random perturbation v + eps d does better (the objective is convex, so a local
   * test along feasible directions suffices for these samples). */
  rng r = {2024};
  const double dt = 0.01;
  int bad = 0, feasibleProbes = 0;
  for (int trial = 0; trial < 18; trial++) {
    int solver = SOLVER_IPM + trial % 3;
    int nc = 4 + trial / 3, nb = 3;
    randomSystem sys;
    randomSystemMake(&sys, &r, nb, nc);
    double mu[12];
    for (int i = 0; i < nc; i++) mu[i] = 0.3 + 0.3 * (rnd(&r) + 1.0);
    cdContactProblem p;
    CHECK(randomProblem(&sys, dt, mu, &p) == 0);
    cdSolveStats st;
    CHECK_MSG(runSolver(solver, &p, 1e-10, 0, &st) == CD_OK && st.converged, "trial %d %s: residual %g", trial,
              solverName[solver], st.residual);
    double v[48], c[36];
    for (int k = 0; k < 6 * nb; k++) v[k] = sys.vf[k];
    for (int i = 0; i < nc; i++)
      for (int ka = 0; ka < 2; ka++) {
        int b = sys.body[i][ka];
        if (b < 0) continue;
        for (int d = 0; d < 6; d++)
          for (int rr = 0; rr < 3; rr++) v[6 * b + d] += sys.minv[b][d] * sys.J[i][ka][6 * rr + d] * p.lambda[3 * i + rr];
      }
    /* c̄ = J v - c_stab with c_stab = (-phi/dt, 0, 0) */
    double obj0 = 0.0;
    for (int b = 0; b < nb; b++)
      for (int d = 0; d < 6; d++) obj0 += 0.5 * (v[6 * b + d] - sys.vf[6 * b + d]) * (v[6 * b + d] - sys.vf[6 * b + d]) / sys.minv[b][d];
    for (int probe = 0; probe < 400; probe++) {
      double vv[48], dir[48];
      for (int k = 0; k < 6 * nb; k++) {
        dir[k] = rnd(&r);
        vv[k] = v[k] + 1e-3 * dir[k];
      }
      int feas = 1;
      for (int i = 0; i < nc; i++) {
        for (int rr = 0; rr < 3; rr++) {
          double s = rr == 0 ? sys.phi[i] / dt : 0.0;
          for (int ka = 0; ka < 2; ka++) {
            int b = sys.body[i][ka];
            if (b >= 0)
              for (int d = 0; d < 6; d++) s += sys.J[i][ka][6 * rr + d] * vv[6 * b + d];
          }
          c[3 * i + rr] = s;
        }
        feas = feas && mu[i] * hypot(c[3 * i + 1], c[3 * i + 2]) <= c[3 * i];
      }
      if (!feas) continue;
      feasibleProbes++;
      double obj = 0.0;
      for (int b = 0; b < nb; b++)
        for (int d = 0; d < 6; d++) obj += 0.5 * (vv[6 * b + d] - sys.vf[6 * b + d]) * (vv[6 * b + d] - sys.vf[6 * b + d]) / sys.minv[b][d];
      bad += obj < obj0 - 1e-9;
    }
    /* feasibility and complementarity of v itself */
    for (int i = 0; i < nc; i++) {
      for (int rr = 0; rr < 3; rr++) {
        double s = rr == 0 ? sys.phi[i] / dt : 0.0;
        for (int ka = 0; ka < 2; ka++) {
          int b = sys.body[i][ka];
          if (b >= 0)
            for (int d = 0; d < 6; d++) s += sys.J[i][ka][6 * rr + d] * v[6 * b + d];
        }
        c[3 * i + rr] = s;
      }
      double sc = cd_contactProblemVelocityScale(&p);
      bad += mu[i] * hypot(c[3 * i + 1], c[3 * i + 2]) > c[3 * i] + 1e-9 * sc;
      bad += fabs(c[3 * i] * p.lambda[3 * i] + c[3 * i + 1] * p.lambda[3 * i + 1] + c[3 * i + 2] * p.lambda[3 * i + 2]) >
             1e-8 * sc * sc;
    }
    cd_contactProblemFree(&p);
  }
  CHECK_MSG(bad == 0, "%d primal optimality violations", bad);
  CHECK_MSG(feasibleProbes > 0, "no feasible probe direction was sampled");
}

CD_TEST(scaledConeProjectionIsTheProjectionInItsMetric) {
  /* apgd's per-contact metric (ccp_apgd.c): cd_coneProjectScaled(mu, s, x) must be the
   * projection y of x on K_mu in the inner product <a, b>_W = a^T W b, W = diag(1, s^2, s^2).
   * A point y is that projection exactly when (the cone's projection theorem) y ∈ K_mu,
   * w = W (x - y) lies in the polar cone of K_mu (w_N + mu ||w_T|| <= 0) and y^T w = 0; each
   * is checked to round-off (1e-12 relative to |x|), on points inside, outside and in the polar
   * cone, for frictionless, small and large mu and metrics stretched both ways. s = 1 is the
   * Euclidean projection, bit for bit. */
  rng r = {2024};
  const double mus[5] = {0.0, 0.1, 0.5, 1.0, 3.0}, ss[6] = {0.05, 0.5, 1.0, 1.87, 4.0, 20.0};
  int n = 0;
  double worst = 0.0;
  for (int q = 0; q < 5; q++)
    for (int e = 0; e < 6; e++)
      for (int k = 0; k < 200; k++) {
        double mu = mus[q], s = ss[e], sc = pow(10.0, 3.0 * rnd(&r)), x[3], y[3];
        for (int c = 0; c < 3; c++) x[c] = sc * rnd(&r);
        if (k % 4 == 0) x[0] = -fabs(x[0]); /* more points in and near the polar cone */
        cd_coneProjectScaled(mu, s, x, y);
        double xn = sqrt(x[0] * x[0] + s * s * (x[1] * x[1] + x[2] * x[2])), eps = 1e-12 * xn;
        double w[3] = {x[0] - y[0], s * s * (x[1] - y[1]), s * s * (x[2] - y[2])};
        double yt = hypot(y[1], y[2]), wt = hypot(w[1], w[2]);
        double viol = fmax(fmax(yt - mu * y[0], -y[0]), fmax(w[0] + mu * wt, fabs(y[0] * w[0] + y[1] * w[1] + y[2] * w[2]) / xn));
        worst = fmax(worst, viol / xn);
        CHECK_MSG(yt <= mu * y[0] + eps && y[0] >= -eps, "mu %g s %g: y = (%g, %g, %g) outside K", mu, s, y[0], y[1], y[2]);
        CHECK_MSG(w[0] + mu * wt <= eps, "mu %g s %g: W (x - y) not in the polar cone (%g)", mu, s, w[0] + mu * wt);
        CHECK_MSG(fabs(y[0] * w[0] + y[1] * w[1] + y[2] * w[2]) <= eps * xn, "mu %g s %g: y^T W (x - y) = %g", mu, s,
                  y[0] * w[0] + y[1] * w[1] + y[2] * w[2]);
        if (s == 1.0) {
          double z[3];
          cd_coneProject(mu, x, z);
          CHECK(z[0] == y[0] && z[1] == y[1] && z[2] == y[2]);
        }
        n++;
      }
  printf("    %d points: worst optimality violation %.1e |x|_W\n", n, worst);
}

CD_TEST(warmStartReducesIterations) {
  /* the solution of a problem is a warm start for the same problem with g moved by 1e-3
   * (the next step of a resting configuration): apgd, pgs and primal need fewer iterations
   * from it than from zero */
  rng r = {31};
  const double dt = 0.01;
  randomSystem sys;
  randomSystemMake(&sys, &r, 4, 8);
  double mu[12];
  for (int i = 0; i < 8; i++) mu[i] = 0.5;
  cdContactProblem p;
  CHECK(randomProblem(&sys, dt, mu, &p) == 0);
  double g0[24];
  memcpy(g0, p.g, sizeof g0);
  const int solvers[3] = {SOLVER_APGD, SOLVER_PGS, SOLVER_PRIMAL};
  for (int q = 0; q < 3; q++) {
    int s = solvers[q];
    cdSolveStats cold, warm;
    memcpy(p.g, g0, sizeof g0);
    p.vscale = 0;
    memset(p.lambda, 0, 24 * sizeof(double));
    CHECK(runSolver(s, &p, 1e-8, 20000, &cold) == CD_OK && cold.converged);
    /* v_f moves with g: the velocity-space form must describe the same problem */
    for (int k = 0; k < 24; k++) p.g[k] += 1e-3 * rnd(&r);
    CHECK(runSolver(s, &p, 1e-8, 20000, &warm) == CD_OK && warm.converged);
    cdSolveStats cold2;
    memset(p.lambda, 0, 24 * sizeof(double));
    CHECK(runSolver(s, &p, 1e-8, 20000, &cold2) == CD_OK && cold2.converged);
    CHECK_MSG(warm.iterations < cold2.iterations, "%s: warm %d vs cold %d iterations", solverName[s], warm.iterations,
              cold2.iterations);
    printf("    %s: %d iterations warm, %d cold\n", solverName[s], warm.iterations, cold2.iterations);
  }
  cd_contactProblemFree(&p);
}

CD_TEST(ccpBackendPicksSolversAndRejectsUnknownOnes) {
  char err[160] = "";
  void *state = NULL;
  cdBackendOptions opt;
  memset(&opt, 0, sizeof opt);
  opt.solver = "lemke";
  CHECK(cd_backendCcp.make(NULL, &opt, &state, err, sizeof err) == CD_ERR_USAGE);
  CHECK(strstr(err, "lemke") != NULL);
  CHECK(cd_backendCcp.kind == CD_BACKEND_IMPULSE && strcmp(cd_backendCcp.name, "ccp") == 0);
  /* the name before a solve says what the configuration may run, after it what ran: the
   * default on a one-contact problem runs primal (its factorization is trivially cheap) */
  const char *names[5] = {NULL, "primal", "apgd", "pgs", "ipm"};
  const char *before[5] = {"primal+apgd", "primal", "apgd", "pgs", "ipm"};
  const char *after[5] = {"primal", "primal", "apgd", "pgs", "ipm"};
  for (int k = 0; k < 5; k++) {
    opt.solver = names[k];
    state = NULL;
    CHECK(cd_backendCcp.make(NULL, &opt, &state, err, sizeof err) == CD_OK);
    CHECK(strcmp(cd_backendCcp.solverName(state), before[k]) == 0);
    cdContactProblem p;
    CHECK(slidingPoint(&p, 0.5, 2.0, 0.01, 0.0) == 0);
    cdSolveStats st;
    CHECK(cd_backendCcp.solve(state, &p, NULL, &st) == CD_OK);
    double tol = k <= 1 || k == 4 ? CD_CCP_NEWTON_TOL : CD_CCP_ITER_TOL;
    CHECK_MSG(st.converged && st.residual <= tol && st.iterations > 0, "%s: residual %g after %d",
              before[k], st.residual, st.iterations);
    CHECK_MSG(strcmp(cd_backendCcp.solverName(state), after[k]) == 0, "%s ran as %s", before[k],
              cd_backendCcp.solverName(state));
    cd_contactProblemFree(&p);
    cd_backendCcp.free(state);
  }
}

CD_TEST(ccpSolversSurviveEveryAllocationFailure) {
  /* each of the first allocations fails in turn: the solver returns CD_ERR_NOMEM (or CD_OK
   * when that allocation was not its own) and frees everything it took */
  rng r = {5};
  randomSystem sys;
  randomSystemMake(&sys, &r, 3, 6);
  double mu[12] = {0.5, 0.5, 0.0, 0.5, 0.5, 0.5};
  cdContactProblem p;
  CHECK(randomProblem(&sys, 0.01, mu, &p) == 0);
  for (int s = 0; s < NSOLVER; s++) {
    int sawNomem = 0;
    for (long k = 1; k <= 40; k++) {
      memset(p.lambda, 0, 18 * sizeof(double));
      long live = cd_allocLive();
      cdSolveStats st;
      cd_allocFailAt(k);
      int rc = runSolver(s, &p, 0, 0, &st);
      cd_allocFailAt(0);
      CHECK_MSG(rc == CD_OK || rc == CD_ERR_NOMEM, "%s, failing allocation %ld: rc %d", solverName[s], k, rc);
      CHECK_MSG(cd_allocLive() == live, "%s, failing allocation %ld: %ld blocks leaked", solverName[s], k,
                cd_allocLive() - live);
      sawNomem |= rc == CD_ERR_NOMEM;
    }
    CHECK_MSG(sawNomem, "%s never reported CD_ERR_NOMEM", solverName[s]);
  }
  cd_contactProblemFree(&p);
}
