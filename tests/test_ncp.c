/* test_ncp.c: the exact Coulomb model's pieces (solvers/ncp*.c) on problems whose answers are
 * known: the one-contact solver against its closed form and its own residual, the residual's
 * zeros and scaling, every solver on random problems, and how non-convergence is reported. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backends.h"
#include "ccp.h"
#include "cli_util.h"
#include "ncp.h"
#include "simtest.h"
#include "test.h"

/* a deterministic generator (64-bit LCG), uniform in [0, 1) */
static double rnd(unsigned long long *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* the one-contact natural map ||x - Proj_K(x - ĉ / W_NN)|| and the size it is measured on */
static double localResidual(const double W[9], const double b[3], double mu, const double x[3], double *scale) {
  double c[3], a[3], pa[3];
  for (int r = 0; r < 3; r++) c[r] = W[3 * r] * x[0] + W[3 * r + 1] * x[1] + W[3 * r + 2] * x[2] + b[r];
  c[0] += mu * hypot(c[1], c[2]);
  for (int r = 0; r < 3; r++) a[r] = x[r] - c[r] / W[0];
  cd_coneProject(mu, a, pa);
  *scale = (fabs(b[0]) + fabs(b[1]) + fabs(b[2])) / W[0] + fabs(x[0]) + fabs(x[1]) + fabs(x[2]);
  return sqrt((x[0] - pa[0]) * (x[0] - pa[0]) + (x[1] - pa[1]) * (x[1] - pa[1]) + (x[2] - pa[2]) * (x[2] - pa[2]));
}

/* W = A A^T + 0.05 I with A random in [-1, 1): symmetric positive definite, its normal and
 * tangential parts coupled as a contact off a body's centre couples them */
static void randomW(unsigned long long *s, double W[9]) {
  double A[9];
  for (int k = 0; k < 9; k++) A[k] = 2.0 * rnd(s) - 1.0;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      W[3 * r + c] = (r == c ? 0.05 : 0.0);
      for (int k = 0; k < 3; k++) W[3 * r + c] += A[3 * r + k] * A[3 * c + k];
    }
}

CD_TEST(ncpLocalSolverMatchesTheClosedFormOfAnIsotropicContact) {
  /* W = w I: c̄ = w x + b. Take-off when b_N >= 0; else x_N = -b_N / w, and the contact
   * sticks (x_T = -b_T / w) when ||b_T|| <= mu |b_N|, or slides along d = b_T / ||b_T|| with
   * x_T = -mu x_N d and slip speed ||b_T|| - mu |b_N| */
  const double w = 2.5, mu = 0.4;
  const double cases[4][3] = {{0.3, 1.0, -2.0}, {-1.0, 0.1, 0.2}, {-1.0, 3.0, -4.0}, {-2.0, 0.0, 0.8}};
  for (int k = 0; k < 4; k++) {
    const double *b = cases[k];
    double W[9] = {w, 0, 0, 0, w, 0, 0, 0, w}, x[3] = {0, 0, 0}, ex[3];
    double bt = hypot(b[1], b[2]);
    if (b[0] >= 0) {
      ex[0] = ex[1] = ex[2] = 0;
    } else if (bt <= mu * -b[0]) {
      for (int r = 0; r < 3; r++) ex[r] = -b[r] / w;
    } else {
      ex[0] = -b[0] / w;
      ex[1] = -mu * ex[0] * b[1] / bt;
      ex[2] = -mu * ex[0] * b[2] / bt;
    }
    CHECK(cd_ncpLocalSolve(W, b, mu, x) == 0);
    for (int r = 0; r < 3; r++) CHECK_NEAR(x[r], ex[r], 1e-15 * (1.0 + fabs(ex[r])));
  }
}

CD_TEST(ncpLocalSolverIsExactOnRandomCoupledContacts) {
  /* 20000 random contacts (W coupled, b random, mu up to 1.5, from zero and from a random
   * start): the answer must meet the one-contact residual at round-off (1e-12 of the data's
   * size), and every reported failure must be a true miss */
  unsigned long long s = 12345;
  int n = 20000, failures = 0;
  double worst = 0.0;
  for (int k = 0; k < n; k++) {
    double W[9], b[3], x[3], scale;
    randomW(&s, W);
    for (int r = 0; r < 3; r++) b[r] = 2.0 * rnd(&s) - 1.0;
    double mu = k % 10 == 0 ? 0.0 : 1.5 * rnd(&s);
    for (int r = 0; r < 3; r++) x[r] = k % 2 ? 2.0 * rnd(&s) - 1.0 : 0.0;
    int rc = cd_ncpLocalSolve(W, b, mu, x);
    double res = localResidual(W, b, mu, x, &scale);
    failures += rc != 0;
    if (rc == 0) {
      worst = fmax(worst, res / scale);
      CHECK_MSG(res <= 1e-12 * scale, "contact %d (mu %.3f): residual %.3g of %.3g", k, mu, res, scale);
    }
  }
  printf("    %d random contacts: %d without an exact answer found, worst relative residual %.1e\n", n, failures,
         worst);
  /* a miss needs two slide roots closer than 2 pi / 48 with no other case valid: none is
   * expected on random data */
  CHECK(failures == 0);
}

/* a problem of n contacts with a dense random G = B B^T (B: 3n x 3n in [-1, 1)), g in
 * [-1, 1), mu = mu0; every block stored */
static int randomProblem(cdContactProblem *p, int n, double mu0, unsigned long long seed) {
  memset(p, 0, sizeof *p);
  int m = 3 * n;
  if (cd_blockMatrixAlloc(&p->G, n, n * n)) return -1;
  p->ncon = n;
  p->g = cd_calloc((size_t)m, sizeof(double));
  p->mu = cd_calloc((size_t)n, sizeof(double));
  p->lambda = cd_calloc((size_t)m, sizeof(double));
  double *B = cd_malloc((size_t)m * m * sizeof(double));
  if (!p->g || !p->mu || !p->lambda || !B) {
    cd_free(B);
    cd_contactProblemFree(p);
    return -1;
  }
  unsigned long long s = seed;
  for (int k = 0; k < m * m; k++) B[k] = 2.0 * rnd(&s) - 1.0;
  for (int k = 0; k < m; k++) p->g[k] = 2.0 * rnd(&s) - 1.0;
  for (int i = 0; i < n; i++) p->mu[i] = mu0;
  for (int i = 0; i < n; i++) {
    p->G.rowptr[i] = n * i;
    p->G.diag[i] = n * i + i;
    for (int j = 0; j < n; j++) {
      p->G.col[n * i + j] = j;
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
          double v = 0.0;
          for (int k = 0; k < m; k++) v += B[(3 * i + r) * m + k] * B[(3 * j + c) * m + k];
          p->G.val[9 * (size_t)(n * i + j) + 3 * r + c] = v;
        }
    }
  }
  p->G.rowptr[n] = n * n;
  p->G.nnzb = n * n;
  p->G.nblock = n;
  cd_free(B);
  return 0;
}

CD_TEST(ncpResidualVanishesExactlyAtACoulombAnswerAndMeasuresTheCcpLift) {
  /* one contact, G = I, built around a sliding Coulomb answer: lambda = (1, -mu, 0) with
   * c̄ = (0, 2, 0) (slip along t1, friction against it at the cone's edge): g = c̄ - lambda */
  cdContactProblem p;
  if (randomProblem(&p, 1, 0.5, 1)) return;
  for (int k = 0; k < 9; k++) p.G.val[k] = (k % 4 == 0);
  double lam[3] = {1.0, -0.5, 0.0}, cbar[3] = {0.0, 2.0, 0.0}, work[3];
  for (int k = 0; k < 3; k++) p.g[k] = cbar[k] - lam[k];
  CHECK(cd_ncpResidualOf(&p, lam, work, NULL) == 0.0);
  /* the CCP's answer of the same data lifts: c̄_N = mu ||c̄_T|| (cone.h's residual 0), and
   * its exact-Coulomb residual is then of the size of that lift over ||g||_inf */
  cdCcpParams par = {.tolerance = 1e-14, .max_iterations = 100};
  cdSolveStats st;
  memset(p.lambda, 0, sizeof lam);
  CHECK(cd_ccpPgsSolve(&p, &par, &st) == CD_OK);
  double ccpRes = cd_coneResidualOf(&p, p.lambda, work, NULL);
  double c[3];
  cd_blockMatrixMul(&p.G, p.lambda, c);
  for (int k = 0; k < 3; k++) c[k] += p.g[k];
  double lift = c[0], slip = hypot(c[1], c[2]);
  cdConeResidual parts;
  double ncpRes = cd_ncpResidualOf(&p, p.lambda, work, &parts);
  printf("    CCP answer: c_N %.6f = mu |c_T| %.6f; CCP residual %.1e, exact-Coulomb residual %.3f\n", lift,
         0.5 * slip, ccpRes, ncpRes);
  CHECK(ccpRes <= 1e-12);
  CHECK_NEAR(lift, 0.5 * slip, 1e-10);
  /* Proj_K is nonexpansive: the two residuals differ by at most mu ||c̄_T|| / vscale */
  CHECK(ncpRes <= ccpRes + 0.5 * slip / parts.scale + 1e-12);
  CHECK(ncpRes > 0.1 * 0.5 * slip / parts.scale);
  cd_contactProblemFree(&p);
}

CD_TEST(ncpResidualIsTheCcpResidualWithoutFriction) {
  cdContactProblem p;
  if (randomProblem(&p, 6, 0.0, 7)) return;
  unsigned long long s = 99;
  double work[18];
  for (int t = 0; t < 20; t++) {
    for (int k = 0; k < 18; k++) p.lambda[k] = rnd(&s) - 0.3;
    double a = cd_ncpResidualOf(&p, p.lambda, work, NULL), b = cd_coneResidualOf(&p, p.lambda, work, NULL);
    CHECK(a == b);
  }
  cd_contactProblemFree(&p);
}

/* every backend solver on p from zero; returns the number that met the tolerance */
static int solveWithEvery(cdContactProblem *p, const char *label, double mu, int *iters) {
  static const char *const names[] = {"nsgs+fp-apgd", "nsgs", "fp-apgd", "fp-pgs", "fp-ipm"};
  int ok = 0;
  for (int s = 0; s < 5; s++) {
    cdBackendOptions opt = {.solver = names[s]};
    void *st = NULL;
    char err[256];
    if (cd_backendNcp.make(NULL, &opt, &st, err, sizeof err) != CD_OK) {
      cd_testFail(__FILE__, __LINE__, "%s: %s", names[s], err);
      continue;
    }
    memset(p->lambda, 0, 3 * (size_t)p->ncon * sizeof(double));
    cdSolveStats stats;
    int rc = cd_backendNcp.solve(st, p, NULL, &stats);
    double *work = cd_malloc(3 * (size_t)p->ncon * sizeof(double));
    double again = work ? cd_ncpResidualOf(p, p->lambda, work, NULL) : INFINITY;
    cd_free(work);
    /* the reported residual is the returned impulses' */
    CHECK_MSG(rc == CD_OK && again == stats.residual, "%s %s: rc %d, residual %.3g reported, %.3g recomputed", label,
              names[s], rc, stats.residual, again);
    CHECK_MSG(stats.converged == (stats.residual <= CD_NCP_TOL), "%s %s: converged flag", label, names[s]);
    ok += stats.converged;
    iters[s] = stats.iterations;
    printf("    %s mu %.1f %s: %d iterations, residual %.1e\n", label, mu, names[s], stats.iterations, stats.residual);
    cd_backendNcp.free(st);
  }
  return ok;
}

CD_TEST(ncpEverySolverSolvesRandomProblemsWithSmallFriction) {
  /* dense random G (positive definite: 12 contacts, B square) and mu 0.3: the fixed point
   * contracts and Gauss-Seidel converges; every solver must reach 1e-8 */
  for (int t = 0; t < 3; t++) {
    cdContactProblem p;
    if (randomProblem(&p, 12, 0.3, 100 + (unsigned long long)t)) return;
    int it[5];
    char label[32];
    snprintf(label, sizeof label, "random %d", t);
    CHECK_MSG(solveWithEvery(&p, label, 0.3, it) == 5, "%s: not every solver converged", label);
    cd_contactProblemFree(&p);
  }
}

CD_TEST(ncpScalingEveryMassLeavesResidualAndIterationsUnchanged) {
  /* every mass x 1024: G / 1024, the same g, impulses x 1024 (meff x 1024): exact in binary,
   * so the solvers must take the same iterations to the same residual */
  cdContactProblem p, q;
  if (randomProblem(&p, 8, 0.5, 5)) return;
  if (randomProblem(&q, 8, 0.5, 5)) {
    cd_contactProblemFree(&p);
    return;
  }
  for (int k = 0; k < 9 * q.G.nnzb; k++) q.G.val[k] /= 1024.0;
  int ip[5], iq[5];
  solveWithEvery(&p, "1 kg", 0.5, ip);
  solveWithEvery(&q, "1024 kg", 0.5, iq);
  /* fp-ipm (the last) is left out: its interior-point start (P + I) x = -q (ccp_ipm.c)
   * adds a unit matrix to a G of any scale, so its iterates are not scale-invariant */
  for (int s = 0; s < 4; s++) CHECK_MSG(ip[s] == iq[s], "solver %d: %d vs %d iterations", s, ip[s], iq[s]);
  cd_contactProblemFree(&p);
  cd_contactProblemFree(&q);
}

CD_TEST(ncpNonConvergenceIsReportedWithTheBestIterate) {
  /* one sweep cannot solve a coupled problem: converged 0, the residual above the tolerance
   * and exactly the returned impulses' */
  cdContactProblem p;
  if (randomProblem(&p, 10, 0.5, 3)) return;
  cdNcpParams par = {CD_NCP_TOL, 1, 0};
  cdSolveStats st;
  CHECK(cd_ncpNsgsSolve(&p, &par, &st) == CD_OK);
  double work[30];
  CHECK(!st.converged && st.residual > CD_NCP_TOL && st.iterations == 1);
  CHECK(st.residual == cd_ncpResidualOf(&p, p.lambda, work, NULL));
  cd_contactProblemFree(&p);
}

CD_TEST(ncpNonConvergenceIsSaidOnceAndCountedInTheFile) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], err[16384];
  cd_cliScenePath(scene, sizeof scene, "cube-stack.json");
  snprintf(out, sizeof out, "%s/ncp-nc.h5", cd_cliTmpdir());
  cdCliLimits lim = {60, 0, 0, 0};
  int code = cd_cliRun((const char *const[]){scene, "--model", "ncp", "--solver", "nsgs", "--max-iterations", "3",
                                             "--steps", "10", "--out", out, NULL},
                       &lim, NULL, 0, err, sizeof err, NULL);
  CHECK_MSG(code == 0, "exit %d: %s", code, err);
  int said = 0;
  for (const char *q = err; (q = strstr(q, "did not converge")); q++) said++;
  CHECK_MSG(said == 1, "stderr: %s", err);
  double *conv = NULL;
  long n = cd_cliReadDataset(out, "/solver/converged", &conv, NULL, NULL);
  CHECK(n == 11);
  long zeros = 0;
  for (long k = 1; k < n; k++) zeros += conv[k] == 0;
  CHECK_MSG(zeros == 10, "%ld of 10 steps marked not converged", zeros);
  free(conv);
}

CD_TEST(ncpFixedPointEndsWhenItsCcpSolverStallsAndBringsNothing) {
  /* the bundled 10-cube pyramid with a 5.2 m cube for its top (a fuzzer's input): on step 4
   * pgs stalls short of every shifted CCP's tolerance at its 2000 sweeps, and the fixed
   * point's best residual stops falling at 1.2e-5 after three CCPs. With --max-iterations 100
   * the step took 100 stalled CCP solves, 200,000 sweeps, for the residual its first three
   * reach; the rule ends the fixed point after 20 stalled CCPs in a row that bring nothing.
   * A step that stops short takes at most 30 CCP solves' sweeps and says so (converged 0, its
   * best iterate's residual). (Main before the rule: 200,000 sweeps, the same residual to
   * every printed digit.) */
  const char *const sets[] = {"/bodies/9/size=5.2", "/duration=0.04", NULL};
  cdBackendOptions opt = {.solver = "fp-pgs", .max_iterations = 100};
  cdSim s;
  if (cd_simMakeFile(&s, "cube-pyramid.json", "ncp", &opt, sets)) return;
  int stopped = 0;
  for (long k = 0; k < s.scene.nstep; k++) {
    if (cd_simStep(&s)) break;
    printf("    step %ld: %d sweeps, residual %.2e%s\n", k + 1, s.stats.iterations, s.stats.residual,
           s.stats.converged ? "" : " (not converged)");
    CHECK(s.stats.converged == (s.stats.residual <= CD_NCP_TOL));
    if (s.stats.converged) continue;
    stopped++;
    CHECK_MSG(s.stats.iterations <= 30 * CD_CCP_ITER_MAXIT, "step %ld: %d sweeps", k + 1, s.stats.iterations);
  }
  CHECK_MSG(stopped >= 1, "no step stalled: the scene no longer tests the rule");
  cd_simFree(&s);
}
