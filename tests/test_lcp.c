/* test_lcp.c: the Anitescu-Hart LCP (solvers/lcp.c, lcp_bgs.c) at the solver level:
 * structure of A and b, one sliding / sticking point contact with known impulses, the
 * frictionless special case (seed 004), bgs against Lemke on random multi-contact problems
 * built from random Jacobians, warm starts, options, and allocation failures. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lcp.h"
#include "lcp_bgs.h"
#include "lcp_lemke.h"
#include "lcp_newton.h"
#include "lcp_subspace.h"
#include "test.h"

static uint64_t g_rng;
static double rnd(void) { return cd_testRandom(&g_rng); }
static double rndIn(double lo, double hi) { return lo + (hi - lo) * rnd(); }

/* ---- problem construction ---- */

/* a contact problem whose G is the dense (3 nc x 3 nc, row-major) Gd: blocks that are not
 * all zero are stored, the diagonal always */
static int problemFromDense(cdContactProblem *p, int nc, const double *Gd, const double *g, const double *mu) {
  memset(p, 0, sizeof *p);
  int nnzb = 0;
  for (int i = 0; i < nc; i++)
    for (int j = 0; j < nc; j++) {
      int nz = i == j;
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) nz |= Gd[(3 * i + r) * 3 * nc + 3 * j + c] != 0.0;
      nnzb += nz;
    }
  if (cd_blockMatrixAlloc(&p->G, nc, nnzb)) return -1;
  p->ncon = nc;
  p->g = cd_calloc(3 * (size_t)nc, sizeof *p->g);
  p->mu = cd_calloc((size_t)nc, sizeof *p->mu);
  p->lambda = cd_calloc(3 * (size_t)nc, sizeof *p->lambda);
  if (!p->g || !p->mu || !p->lambda) return -1;
  int k = 0;
  for (int i = 0; i < nc; i++) {
    p->G.rowptr[i] = k;
    for (int j = 0; j < nc; j++) {
      int nz = i == j;
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) nz |= Gd[(3 * i + r) * 3 * nc + 3 * j + c] != 0.0;
      if (!nz) continue;
      if (i == j) p->G.diag[i] = k;
      p->G.col[k] = j;
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) p->G.val[9 * k + 3 * r + c] = Gd[(3 * i + r) * 3 * nc + 3 * j + c];
      k++;
    }
  }
  p->G.rowptr[nc] = k;
  memcpy(p->g, g, 3 * (size_t)nc * sizeof *g);
  memcpy(p->mu, mu, (size_t)nc * sizeof *mu);
  return 0;
}

static void cross(const double *a, const double *b, double *c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* nc contacts among nb random bodies (and the ground): J (3 nc x 6 nb) from random points,
 * normals and tangent frames, M^-1 block diagonal (1/m I, random SPD inverse inertia), the
 * dense G = J M^-1 J^T; g random, mu in [mulo, muhi]. Jout, Minvout (optional) keep J and
 * M^-1 (6 nb x 6 nb, row-major) for velocity checks. */
static int randomProblem(cdContactProblem *p, int nc, int nb, double mulo, double muhi, double **Jout,
                         double **Minvout) {
  int nv = 6 * nb;
  double *J = calloc((size_t)3 * nc * nv, sizeof *J), *Minv = calloc((size_t)nv * nv, sizeof *Minv);
  double *Gd = calloc((size_t)9 * nc * nc, sizeof *Gd), *g = malloc(3 * (size_t)nc * sizeof *g);
  double *mu = malloc((size_t)nc * sizeof *mu), *x = malloc(3 * (size_t)nb * sizeof *x);
  if (!J || !Minv || !Gd || !g || !mu || !x) return -1;
  for (int b = 0; b < nb; b++) {
    double mass = rndIn(0.5, 2.0), B[9];
    for (int t = 0; t < 3; t++) {
      x[3 * b + t] = rndIn(-1, 1);
      Minv[(6 * b + t) * nv + 6 * b + t] = 1.0 / mass;
    }
    for (int t = 0; t < 9; t++) B[t] = rndIn(-1, 1);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        double s = r == c ? 0.5 : 0.0;
        for (int t = 0; t < 3; t++) s += B[3 * r + t] * B[3 * c + t];
        Minv[(6 * b + 3 + r) * nv + 6 * b + 3 + c] = s;
      }
  }
  for (int i = 0; i < nc; i++) {
    int bb = (int)(rnd() * nb), ba = rnd() < 0.3 ? -1 : (int)(rnd() * nb);
    if (ba == bb) ba = -1;
    double pt[3], n[3], t1[3], t2[3], h[3] = {rndIn(-1, 1), rndIn(-1, 1), rndIn(-1, 1)};
    for (int t = 0; t < 3; t++) {
      pt[t] = x[3 * bb + t] + rndIn(-0.3, 0.3);
      n[t] = rndIn(-1, 1);
    }
    double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int t = 0; t < 3; t++) n[t] /= nn;
    cross(n, h, t1);
    double tn = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
    for (int t = 0; t < 3; t++) t1[t] /= tn;
    cross(n, t1, t2);
    const double *dir[3] = {n, t1, t2};
    for (int side = 0; side < 2; side++) {
      int body = side ? ba : bb;
      if (body < 0) continue;
      double sign = side ? -1.0 : 1.0, r[3], rxd[3];
      for (int t = 0; t < 3; t++) r[t] = pt[t] - x[3 * body + t];
      for (int row = 0; row < 3; row++) {
        double *Jr = &J[(size_t)(3 * i + row) * nv + 6 * body];
        cross(r, dir[row], rxd);
        for (int t = 0; t < 3; t++) {
          Jr[t] += sign * dir[row][t];
          Jr[3 + t] += sign * rxd[t];
        }
      }
    }
    g[3 * i] = rndIn(-1.0, 0.5);
    g[3 * i + 1] = rndIn(-1, 1);
    g[3 * i + 2] = rndIn(-1, 1);
    mu[i] = rndIn(mulo, muhi);
  }
  /* G = J M^-1 J^T */
  for (int r = 0; r < 3 * nc; r++)
    for (int c = 0; c < 3 * nc; c++) {
      double s = 0.0;
      for (int a = 0; a < nv; a++) {
        if (J[(size_t)r * nv + a] == 0.0) continue;
        for (int b = 0; b < nv; b++) s += J[(size_t)r * nv + a] * Minv[(size_t)a * nv + b] * J[(size_t)c * nv + b];
      }
      Gd[(size_t)r * 3 * nc + c] = s;
    }
  int rc = problemFromDense(p, nc, Gd, g, mu);
  if (Jout) *Jout = J; else free(J);
  if (Minvout) *Minvout = Minv; else free(Minv);
  free(Gd), free(g), free(mu), free(x);
  return rc;
}

/* one unit point mass on the ground (G = I), sliding at v0 along t1, phi = 0 */
static int pointMassProblem(cdContactProblem *p, double v0, double mu, double gdt) {
  const double Gd[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, g[3] = {-gdt, v0, 0};
  return problemFromDense(p, 1, Gd, g, &mu);
}

/* solves p through the backend with the given solver name and m; contacts may be NULL */
static int backendSolve(cdContactProblem *p, cdContactSet *contacts, const char *solver, int m, double tol,
                        cdSolveStats *st, char *name, size_t namelen) {
  cdBackendOptions opt = {.solver = solver, .friction_dirs = m, .tolerance = tol};
  char err[256];
  void *state;
  int rc = cd_backendLcp.make(NULL, &opt, &state, err, sizeof err);
  if (rc) return rc;
  rc = cd_backendLcp.solve(state, p, contacts, st);
  if (name) snprintf(name, namelen, "%s", cd_backendLcp.solverName(state));
  cd_backendLcp.free(state);
  return rc;
}

static void contactsFor(cdContactSet *s, int nc) {
  cd_contactSetInit(s);
  for (int i = 0; i < nc; i++) {
    cdContact *c = cd_contactSetPush(s);
    CHECK(c != NULL);
    if (c) c->body[1] = i;
  }
}

/* ---- structure ---- */

CD_TEST(lcpDirectionsAreBalancedUnitVectors) {
  for (int m = 4; m <= 32; m += 2) {
    double D[64];
    cd_lcpDirections(m, D);
    for (int k = 0; k < m; k++) {
      CHECK_NEAR(hypot(D[2 * k], D[2 * k + 1]), 1.0, 1e-15);
      CHECK_NEAR(D[2 * k], cos(2 * M_PI * k / m), 1e-15);
      CHECK_NEAR(D[2 * k + 1], sin(2 * M_PI * k / m), 1e-15);
      int o = (k + m / 2) % m;
      CHECK(D[2 * o] == -D[2 * k] && D[2 * o + 1] == -D[2 * k + 1]); /* exactly balanced */
    }
  }
}

CD_TEST(lcpAlphaFromTangentReproducesTheTangentImpulse) {
  g_rng = 7;
  for (int m = 4; m <= 16; m += 2) {
    double D[32], alpha[16];
    cd_lcpDirections(m, D);
    for (int trial = 0; trial < 100; trial++) {
      double lt[2] = {rndIn(-3, 3), rndIn(-3, 3)};
      if (trial == 0) lt[1] = 0.0; /* on a direction */
      cd_lcpAlphaFromTangent(m, D, lt, alpha);
      double t1 = 0, t2 = 0;
      int nonzero = 0;
      for (int l = 0; l < m; l++) {
        CHECK(alpha[l] >= 0.0);
        nonzero += alpha[l] > 0.0;
        t1 += D[2 * l] * alpha[l];
        t2 += D[2 * l + 1] * alpha[l];
      }
      CHECK(nonzero >= 1 && nonzero <= 2);
      CHECK_NEAR(t1, lt[0], 1e-13);
      CHECK_NEAR(t2, lt[1], 1e-13);
    }
  }
  double D[8], alpha[4] = {1, 1, 1, 1}, zero[2] = {0, 0};
  cd_lcpDirections(4, D);
  cd_lcpAlphaFromTangent(4, D, zero, alpha);
  CHECK(alpha[0] == 0 && alpha[1] == 0 && alpha[2] == 0 && alpha[3] == 0);
}

CD_TEST(lcpBlockwiseEvaluationMatchesTheDenseMatrix) {
  g_rng = 11;
  cdContactProblem p;
  CHECK(randomProblem(&p, 12, 5, 0.2, 0.8, NULL, NULL) == 0);
  int m = 6, n = cd_lcpSize(p.ncon, m);
  double D[12], *A = malloc((size_t)n * n * sizeof *A), *b = malloc((size_t)n * sizeof *b);
  double *z = malloc((size_t)n * sizeof *z), *w = malloc((size_t)n * sizeof *w), work[72];
  cd_lcpDirections(m, D);
  cd_lcpBuildDense(&p, m, D, A, b);
  for (int t = 0; t < n; t++) z[t] = rnd() < 0.3 ? 0.0 : rndIn(-0.5, 1.0);
  cd_lcpEvaluate(&p, m, D, z, w, work);
  for (int i = 0; i < n; i++) {
    double s = b[i];
    for (int j = 0; j < n; j++) s += A[i + (size_t)j * n] * z[j];
    CHECK_NEAR(w[i], s, 1e-13);
  }
  /* the residual: the dense min-map with the impulse rows and columns taken to velocities
   * (lambda_N, alpha by 1 / meff_i; the bound row likewise), relative to ||g||_inf */
  double res = 0.0, gmax = 0.0;
  for (int t = 0; t < 3 * p.ncon; t++) gmax = fmax(gmax, fabs(p.g[t]));
  for (int i = 0; i < n; i++) {
    int con = i < p.ncon ? i : i < p.ncon * (m + 1) ? (i - p.ncon) / m : i - p.ncon * (m + 1);
    double wi = p.G.val[9 * p.G.diag[con]]; /* 1 / meff */
    double zi = i < p.ncon * (m + 1) ? wi * z[i] : z[i], ai = i < p.ncon * (m + 1) ? w[i] : wi * w[i];
    res = fmax(res, fabs(fmin(zi, ai)));
  }
  CHECK_NEAR(cd_lcpResidual(&p, m, D, z, work), res / gmax, 1e-13);
  /* from the contact velocities u = G lambda + g (bgs's checks have them): the same residual */
  double lam[36], u[36];
  cd_lcpLambdaFromZ(p.ncon, m, D, z, lam);
  cd_blockMatrixMul(&p.G, lam, u);
  for (int t = 0; t < 3 * p.ncon; t++) u[t] += p.g[t];
  CHECK(cd_lcpResidualOfVelocity(&p, m, D, z, u) == cd_lcpResidual(&p, m, D, z, work));
  /* the seed's block structure: E, -E^T, M_mu and the zero (beta, beta) block */
  int nc = p.ncon;
  for (int i = 0; i < nc; i++) {
    int bi = nc + nc * m + i;
    CHECK(A[bi + (size_t)bi * n] == 0.0);
    CHECK(A[bi + (size_t)i * n] == p.mu[i]);
    CHECK(A[i + (size_t)bi * n] == 0.0);
    for (int l = 0; l < m; l++) {
      CHECK(A[(nc + m * i + l) + (size_t)bi * n] == 1.0);
      CHECK(A[bi + (size_t)(nc + m * i + l) * n] == -1.0);
    }
  }
  free(A), free(b), free(z), free(w);
  cd_contactProblemFree(&p);
}

CD_TEST(lcpResidualIsNaNWhenAnyContactIsNaN) {
  /* a NaN in one contact's z (a diverged block solve) makes the residual NaN wherever that
   * contact sits, so that no solver takes a NaN iterate as converged: the largest of the
   * contacts' parts lost a NaN when a later contact's part was a number */
  g_rng = 12;
  cdContactProblem p;
  CHECK(randomProblem(&p, 12, 5, 0.2, 0.8, NULL, NULL) == 0);
  int m = 4, n = cd_lcpSize(p.ncon, m);
  double D[8], z[72], work[72];
  cd_lcpDirections(m, D);
  for (int i = 0; i < p.ncon; i++) {
    for (int t = 0; t < n; t++) z[t] = rnd() < 0.3 ? 0.0 : rndIn(0.0, 1.0);
    CHECK(isfinite(cd_lcpResidual(&p, m, D, z, work)));
    int v = i % 3 == 0 ? i : i % 3 == 1 ? p.ncon + m * i + 1 : p.ncon + p.ncon * m + i; /* lambda_N, an alpha, beta */
    z[v] = NAN;
    double r = cd_lcpResidual(&p, m, D, z, work);
    CHECK_MSG(isnan(r), "NaN in z[%d] (contact %d): residual %g", v, i, r);
  }
  cd_contactProblemFree(&p);
}

/* ---- one point contact ---- */

CD_TEST(lcpSlidingPointMassStaysOnTheGroundWithTheCoulombImpulse) {
  /* unit mass, g dt = 9.81 * 0.01, v0 = 1 > mu g dt: it slides. The normal impulse is
   * m g dt, the friction impulse mu m g dt against the slip, the post-step normal velocity
   * 0 (no lift), and beta the post-step sliding speed v0 - mu g dt. */
  const double gdt = 9.81 * 0.01, v0 = 1.0, mu = 0.5;
  const char *solvers[2] = {"lemke", "bgs"};
  for (int si = 0; si < 2; si++)
    for (int m = 4; m <= 8; m += 4) {
      cdContactProblem p;
      CHECK(pointMassProblem(&p, v0, mu, gdt) == 0);
      cdContactSet cs;
      contactsFor(&cs, 1);
      cdSolveStats st;
      char name[32];
      CHECK(backendSolve(&p, &cs, solvers[si], m, 0, &st, name, sizeof name) == CD_OK);
      CHECK(!strcmp(name, solvers[si]));
      CHECK(st.converged && st.fallbacks == 0);
      CHECK_NEAR(p.lambda[0], gdt, 1e-12);
      CHECK_NEAR(p.lambda[1], -mu * gdt, 1e-12);
      CHECK_NEAR(p.lambda[2], 0.0, 1e-12);
      double cn = p.lambda[0] - gdt, ct = v0 + p.lambda[1];
      CHECK_NEAR(cn, 0.0, 1e-12);
      CHECK_NEAR(ct, v0 - mu * gdt, 1e-12);
      CHECK_NEAR(cs.con[0].beta, v0 - mu * gdt, 1e-12);
      /* the alpha row: all on the direction opposite the slip (d_{m/2} = -t1) */
      CHECK(cs.nalpha == m);
      for (int l = 0; l < m; l++) CHECK_NEAR(cs.alpha[l], l == m / 2 ? mu * gdt : 0.0, 1e-12);
      CHECK(st.residual <= 1e-12);
      cd_contactSetFree(&cs);
      cd_contactProblemFree(&p);
    }
}

CD_TEST(lcpSlowPointMassSticks) {
  /* v0 < mu g dt: friction stops it within the step; no slip, beta = 0 */
  const double gdt = 9.81 * 0.01, mu = 0.5, v0 = 0.3 * mu * gdt;
  const char *solvers[2] = {"lemke", "bgs"};
  for (int si = 0; si < 2; si++)
    for (int m = 4; m <= 8; m += 4) {
      cdContactProblem p;
      CHECK(pointMassProblem(&p, v0, mu, gdt) == 0);
      cdContactSet cs;
      contactsFor(&cs, 1);
      cdSolveStats st;
      CHECK(backendSolve(&p, &cs, solvers[si], m, 0, &st, NULL, 0) == CD_OK);
      CHECK_NEAR(p.lambda[0], gdt, 1e-12);
      CHECK_NEAR(p.lambda[1], -v0, 1e-12);
      CHECK_NEAR(p.lambda[2], 0.0, 1e-12);
      CHECK_NEAR(cs.con[0].beta, 0.0, 1e-12);
      cd_contactSetFree(&cs);
      cd_contactProblemFree(&p);
    }
}

CD_TEST(lcpSeparatingPointMassGetsNoImpulse) {
  /* moving away faster than gravity pulls it back: lambda = 0 */
  cdContactProblem p;
  CHECK(pointMassProblem(&p, 1.0, 0.5, -0.2) == 0);
  cdSolveStats st;
  CHECK(backendSolve(&p, NULL, "lemke", 4, 0, &st, NULL, 0) == CD_OK);
  CHECK(p.lambda[0] == 0.0 && p.lambda[1] == 0.0 && p.lambda[2] == 0.0);
  cd_contactProblemFree(&p);
}

/* ---- the frictionless special case (seed 004) ---- */

CD_TEST(lcpFrictionlessTwoContactsGiveTheSeed004Answer) {
  /* G_NN = [[2,-1],[-1,2]], g_N = (-1, 3), mu = 0: lambda_N = (1/2, 0), w = (0, 5/2) */
  const double Gd[36] = {2, 0, 0, -1, 0, 0, /**/ 0, 1, 0, 0, 0, 0, /**/ 0, 0, 1, 0, 0, 0,
                         -1, 0, 0, 2, 0, 0, /**/ 0, 0, 0, 0, 1, 0, /**/ 0, 0, 0, 0, 0, 1};
  const double g[6] = {-1, 0.3, -0.2, 3, 0.1, 0}, mu[2] = {0, 0};
  const char *solvers[2] = {"lemke", "bgs"};
  for (int si = 0; si < 2; si++) {
    cdContactProblem p;
    CHECK(problemFromDense(&p, 2, Gd, g, mu) == 0);
    cdSolveStats st;
    CHECK(backendSolve(&p, NULL, solvers[si], 4, 1e-14, &st, NULL, 0) == CD_OK);
    CHECK_NEAR(p.lambda[0], 0.5, 1e-14);
    CHECK_NEAR(p.lambda[3], 0.0, 1e-14);
    CHECK_NEAR(2 * p.lambda[0] - p.lambda[3] - 1, 0.0, 1e-14);
    CHECK_NEAR(-p.lambda[0] + 2 * p.lambda[3] + 3, 2.5, 1e-14);
    /* mu = 0: no friction, to the roundoff of the pivots (Lemke works on the LCP scaled to
     * the residual's units, lcp.c) */
    for (int t = 1; t < 3; t++)
      CHECK_MSG(fabs(p.lambda[t]) <= 1e-15 && fabs(p.lambda[3 + t]) <= 1e-15, "%s: friction %g %g", solvers[si],
                p.lambda[t], p.lambda[3 + t]);
    cd_contactProblemFree(&p);
  }
}

CD_TEST(lcpWithoutFrictionSolvesTheNormalLcp) {
  /* mu = 0 on random problems: lambda_T = 0 and lambda_N solves 0 <= l perp G_NN l + g_N >= 0 */
  g_rng = 99;
  for (int trial = 0; trial < 5; trial++) {
    cdContactProblem p;
    CHECK(randomProblem(&p, 20, 12, 0.0, 0.0, NULL, NULL) == 0);
    int nc = p.ncon;
    double GN[400], gN[20], zN[20], work[120];
    for (int i = 0; i < nc; i++) {
      gN[i] = p.g[3 * i];
      for (int j = 0; j < nc; j++) GN[i + j * nc] = 0.0;
      for (int t = p.G.rowptr[i]; t < p.G.rowptr[i + 1]; t++) GN[i + p.G.col[t] * nc] = p.G.val[9 * t];
    }
    CHECK(cd_lemkeSolve(nc, GN, gN, zN, NULL, NULL) == CD_LEMKE_SOLVED);
    cdSolveStats st;
    CHECK(backendSolve(&p, NULL, "lemke", 4, 0, &st, NULL, 0) == CD_OK);
    for (int i = 0; i < nc; i++) {
      CHECK_NEAR(p.lambda[3 * i], zN[i], 1e-9);
      CHECK(fabs(p.lambda[3 * i + 1]) + fabs(p.lambda[3 * i + 2]) <= 1e-12);
    }
    (void)work;
    cd_contactProblemFree(&p);
  }
}

/* ---- bgs against Lemke ---- */

CD_TEST(lcpBgsAndNewtonAgreeWithLemkeOnRandomContactProblems) {
  /* 20 contacts on 12 bodies: J (60 x 72) has full row rank, G is positive definite and,
   * with moderate mu, the impulses are unique: every solver must find the same ones */
  const char *solvers[2] = {"bgs", "newton"};
  for (int sv = 0; sv < 2; sv++) {
  g_rng = 2024;
  for (int trial = 0; trial < 6; trial++) {
    int m = trial % 2 ? 8 : 4;
    cdContactProblem p1, p2;
    uint64_t seed = g_rng;
    CHECK(randomProblem(&p1, 20, 12, 0.1, 0.5, NULL, NULL) == 0);
    g_rng = seed;
    CHECK(randomProblem(&p2, 20, 12, 0.1, 0.5, NULL, NULL) == 0);
    cdSolveStats s1, s2;
    CHECK(backendSolve(&p1, NULL, "lemke", m, 0, &s1, NULL, 0) == CD_OK);
    CHECK(backendSolve(&p2, NULL, solvers[sv], m, 1e-12, &s2, NULL, 0) == CD_OK);
    CHECK_MSG(s1.converged && s1.fallbacks == 0, "trial %d: lemke status", trial);
    CHECK_MSG(s2.converged, "trial %d: %s residual %.3g after %d iterations (%d fallbacks)", trial, solvers[sv],
              s2.residual, s2.iterations, s2.fallbacks);
    double dmax = 0.0, lmax = 0.0;
    for (int t = 0; t < 60; t++) {
      dmax = fmax(dmax, fabs(p1.lambda[t] - p2.lambda[t]));
      lmax = fmax(lmax, fabs(p1.lambda[t]));
    }
    printf("    trial %d (m = %d): lemke %d pivots residual %.1e; %s %d iterations (%d factorizations) residual %.1e; "
           "max |dlambda| %.1e (max |lambda| %.2f)\n",
           trial, m, s1.iterations, s1.residual, solvers[sv], s2.iterations, s2.factorizations, s2.residual, dmax, lmax);
    CHECK_MSG(dmax <= 1e-8 * fmax(1.0, lmax), "trial %d: impulses differ by %.3g", trial, dmax);
    cd_contactProblemFree(&p1);
    cd_contactProblemFree(&p2);
  }
  }
}

CD_TEST(lcpBgsNewtonAndLemkeGiveTheSameVelocitiesOnRedundantFrictionlessContacts) {
  /* 20 contacts on 5 bodies: 60 constraint rows on 30 dof, so G is singular and the
   * impulses are not unique; without friction the LCP is a convex QP whose post-step
   * velocity v+ = v_f + M^-1 J^T lambda is unique. Compare M^-1 J^T lambda. (Newton's
   * regularised factorization of the singular active-set matrix is what this tests.) */
  const char *solvers[2] = {"bgs", "newton"};
  for (int sv = 0; sv < 2; sv++) {
  g_rng = 555;
  for (int trial = 0; trial < 4; trial++) {
    cdContactProblem p1, p2;
    double *J, *Minv;
    uint64_t seed = g_rng;
    CHECK(randomProblem(&p1, 20, 5, 0.0, 0.0, &J, &Minv) == 0);
    free(J), free(Minv);
    g_rng = seed;
    CHECK(randomProblem(&p2, 20, 5, 0.0, 0.0, &J, &Minv) == 0);
    cdSolveStats s1, s2;
    CHECK(backendSolve(&p1, NULL, "lemke", 4, 0, &s1, NULL, 0) == CD_OK);
    CHECK(backendSolve(&p2, NULL, solvers[sv], 4, 1e-12, &s2, NULL, 0) == CD_OK);
    CHECK(s1.converged && s1.fallbacks == 0);
    CHECK_MSG(s2.converged, "trial %d: %s residual %.3g after %d iterations (%d fallbacks)", trial, solvers[sv],
              s2.residual, s2.iterations, s2.fallbacks);
    double dv = 0.0, vmax = 0.0;
    for (int a = 0; a < 30; a++) {
      double v1 = 0.0, v2 = 0.0;
      for (int b = 0; b < 30; b++)
        for (int r = 0; r < 60; r++) {
          double mj = Minv[a * 30 + b] * J[r * 30 + b];
          v1 += mj * p1.lambda[r];
          v2 += mj * p2.lambda[r];
        }
      dv = fmax(dv, fabs(v1 - v2));
      vmax = fmax(vmax, fabs(v1));
    }
    printf("    trial %d: %s %d iterations; max |dv| %.1e (max |dv+| %.2f)\n", trial, solvers[sv], s2.iterations, dv, vmax);
    CHECK_MSG(dv <= 1e-5 * fmax(1.0, vmax), "trial %d: velocities differ by %.3g", trial, dv);
    free(J), free(Minv);
    cd_contactProblemFree(&p1);
    cd_contactProblemFree(&p2);
  }
  }
}

CD_TEST(lcpBgsSweepsAnIdleContactAgainWhenItsNeighbourClosesIt) {
  /* contact 1 separates at 0.3 m/s (far above the idle margin, lcp_bgs.c) while contact 0
   * presses; contact 0's impulse pushes contact 1 closed (G_01 = -0.5). Contact 1 is left
   * out of the first sweeps (fewer block solves than 2 a sweep) and is swept again from the
   * check after contact 0 settles: the answer is the LCP's, in closed form
   *     lambda_0 - 0.5 lambda_1 = 1,  -0.5 lambda_0 + lambda_1 = -0.3  (both pressing),
   * lambda_0 = 0.85 / 0.75, lambda_1 = 0.5 lambda_0 - 0.3, and contact 1 slides: sticking
   * would take lambda_T = -0.2 against its free slip of 0.2 m/s, beyond mu lambda_n, so
   * lambda_T = -mu lambda_n along -t1 (a vertex of the polygon for m = 4). */
  const int m = 4, nc = 2, n = cd_lcpSize(nc, m);
  double D[8], Gd[36] = {0}, g[6] = {-1.0, 0.0, 0.0, 0.3, 0.2, 0.0}, mu[2] = {0.5, 0.5};
  cd_lcpDirections(m, D);
  for (int r = 0; r < 6; r++) Gd[r * 6 + r] = 1.0;
  Gd[0 * 6 + 3] = Gd[3 * 6 + 0] = -0.5;
  cdContactProblem p;
  CHECK(problemFromDense(&p, nc, Gd, g, mu) == 0);
  double z[16] = {0}, lam[6];
  CHECK(n <= 16);
  cdBgsOptions bo = {.tolerance = 1e-12};
  cdBgsStats bs;
  CHECK(cd_bgsSolve(&p, m, D, z, &bo, &bs) == CD_OK);
  printf("    %d sweeps, %ld block solves, residual %.1e\n", bs.sweeps, bs.blocks, bs.residual);
  CHECK(bs.converged && bs.residual <= 1e-12);
  CHECK_MSG(bs.blocks < 2L * bs.sweeps, "%ld block solves in %d sweeps", bs.blocks, bs.sweeps);
  cd_lcpLambdaFromZ(nc, m, D, z, lam);
  double l0 = 0.85 / 0.75, l1 = 0.5 * l0 - 0.3;
  CHECK_NEAR(lam[0], l0, 1e-11);
  CHECK_NEAR(lam[3], l1, 1e-11);
  CHECK_NEAR(lam[4], -mu[1] * l1, 1e-11);
  CHECK_NEAR(lam[1], 0.0, 1e-11);
  CHECK_NEAR(lam[5], 0.0, 1e-11);
  cd_contactProblemFree(&p);
}

CD_TEST(lcpBgsCheckIsTheTrueResidualWithIdleContacts) {
  /* bgs's residual check (lcp_bgs.c sweepCheck: u, the idle contacts' settling and the
   * residual in one pass, 1 / meff kept per contact, idle neighbours' zero impulses in the
   * sums) is cd_lcpResidual of the iterate bit for bit: random problems where about a quarter
   * of the contacts open (g_n > 0.1 vscale, idle from the first check on), from zero and from
   * a random warm start (contacts that carry impulses at first and open in the sweeps), with
   * meff read off G and given apart (p->meff), after 1 to 9 sweeps (the checks only: no
   * subspace step, stall test or active-set try before 10) */
  int idle_seen = 0;
  for (int trial = 0; trial < 8; trial++) {
    g_rng = 4242 + (uint64_t)trial;
    cdContactProblem p;
    int nc = 30, m = trial % 2 ? 6 : 4, n = cd_lcpSize(nc, m);
    CHECK(randomProblem(&p, nc, 12, 0.1, 0.8, NULL, NULL) == 0);
    if (trial >= 4) {
      p.meff = cd_malloc((size_t)nc * sizeof *p.meff);
      CHECK(p.meff != NULL);
      if (!p.meff) return;
      for (int i = 0; i < nc; i++) p.meff[i] = rndIn(0.1, 10.0);
    }
    double D[12], *z0 = calloc((size_t)n, sizeof *z0), *z = malloc((size_t)n * sizeof *z);
    double *work = malloc(6 * (size_t)nc * sizeof *work);
    CHECK(z0 && z && work);
    if (!z0 || !z || !work) return;
    cd_lcpDirections(m, D);
    if (trial % 4 >= 2)
      for (int t = 0; t < n; t++) z0[t] = rnd() < 0.4 ? 0.0 : rndIn(0.0, 0.5);
    for (int k = 1; k <= 9; k++) {
      memcpy(z, z0, (size_t)n * sizeof *z);
      cdBgsOptions bo = {.tolerance = 1e-14, .max_sweeps = k};
      cdBgsStats bs;
      CHECK(cd_bgsSolve(&p, m, D, z, &bo, &bs) == CD_OK);
      double r = cd_lcpResidual(&p, m, D, z, work);
      CHECK_MSG(bs.residual == r && isfinite(r), "trial %d, %d sweeps: check %.17g, cd_lcpResidual %.17g", trial, k,
                bs.residual, r);
      idle_seen += bs.blocks < (long)bs.sweeps * nc;
    }
    free(z0), free(z), free(work);
    cd_contactProblemFree(&p);
  }
  CHECK_MSG(idle_seen > 0, "no solve left a contact out of its sweeps");
  printf("    %d of 72 solves left idle contacts out of their sweeps\n", idle_seen);
}

CD_TEST(lcpBgsChecksTheResidualEveryTenSweepsFarFromTheTolerances) {
  /* a frictionless chain of 40 contacts (G_nn tridiagonal 2, -1: a stack's normal rows) from
   * zero: Gauss-Seidel carries the load down by a fraction a sweep, so after 18 sweeps (short
   * of the first stall test, lcp_bgs.c) the residual is still far above the tolerance and
   * the active-set tries' threshold. The true residual is then evaluated at the start, after
   * sweep 10 and at the limit only (it was every second sweep: 10 products), and the
   * residual returned is cd_lcpResidual's of the answer, bit for bit. */
  const int m = 4, nc = 40, n = cd_lcpSize(nc, m);
  double D[8];
  cd_lcpDirections(m, D);
  double *Gd = calloc(9 * (size_t)nc * nc, sizeof *Gd), *g = calloc(3 * (size_t)nc, sizeof *g);
  double *mu = calloc((size_t)nc, sizeof *mu), *z = calloc((size_t)n, sizeof *z), *work = calloc(6 * (size_t)nc, sizeof *work);
  CHECK(Gd && g && mu && z && work);
  if (!Gd || !g || !mu || !z || !work) return;
  for (int i = 0; i < nc; i++) {
    for (int r = 0; r < 3; r++) Gd[(size_t)(3 * i + r) * 3 * nc + 3 * i + r] = r ? 1.0 : 2.0;
    if (i + 1 < nc) Gd[(size_t)(3 * i) * 3 * nc + 3 * (i + 1)] = Gd[(size_t)(3 * (i + 1)) * 3 * nc + 3 * i] = -1.0;
    g[3 * i] = -1.0;
  }
  cdContactProblem p;
  CHECK(problemFromDense(&p, nc, Gd, g, mu) == 0);
  cdLcpNewton *nw = cd_lcpNewtonMake();
  CHECK(nw != NULL);
  cdBgsOptions bo = {.tolerance = 1e-8, .max_sweeps = 18, .newton = nw};
  cdBgsStats bs;
  CHECK(cd_bgsSolve(&p, m, D, z, &bo, &bs) == CD_OK);
  printf("    %d sweeps, %d products, residual %.2e\n", bs.sweeps, bs.products, bs.residual);
  CHECK(bs.sweeps == 18 && bs.newton_tries == 0 && bs.factorizations == 0 && !bs.converged && bs.residual > 1e-3);
  CHECK_MSG(bs.products == 3, "%d residual checks in 18 sweeps", bs.products);
  CHECK(bs.residual == cd_lcpResidual(&p, m, D, z, work));
  cd_lcpNewtonFree(nw);
  cd_contactProblemFree(&p);
  free(Gd), free(g), free(mu), free(z), free(work);
}

CD_TEST(lcpBgsWarmStartedAtTheSolutionNeedsNoSweep) {
  g_rng = 31337;
  cdContactProblem p;
  CHECK(randomProblem(&p, 20, 12, 0.1, 0.5, NULL, NULL) == 0);
  cdContactSet cs;
  contactsFor(&cs, 20);
  cdSolveStats cold, warm;
  CHECK(backendSolve(&p, &cs, "bgs", 8, 1e-10, &cold, NULL, 0) == CD_OK);
  CHECK(cold.converged && cold.iterations > 1);
  /* p->lambda, the betas and the alpha rows now hold the solution: the next solve starts
   * there (as the core's carry by contact key arranges) */
  CHECK(backendSolve(&p, &cs, "bgs", 8, 1e-10, &warm, NULL, 0) == CD_OK);
  CHECK_MSG(warm.iterations == 0, "%d sweeps from the solution", warm.iterations);
  CHECK(warm.converged && warm.residual <= 1e-10);
  /* lambda alone (alpha rows dropped): alpha is rebuilt from lambda_T and few sweeps remain */
  cd_contactSetSetAlpha(&cs, 0);
  CHECK(backendSolve(&p, &cs, "bgs", 8, 1e-10, &warm, NULL, 0) == CD_OK);
  CHECK(warm.converged);
  CHECK_MSG(warm.iterations < cold.iterations, "%d sweeps from lambda vs %d cold", warm.iterations, cold.iterations);
  cd_contactSetFree(&cs);
  cd_contactProblemFree(&p);
}

CD_TEST(lcpNewtonWarmStartedAtTheSolutionChecksOnceWithoutAFactorization) {
  g_rng = 31337;
  cdContactProblem p;
  CHECK(randomProblem(&p, 20, 12, 0.1, 0.5, NULL, NULL) == 0);
  cdContactSet cs;
  contactsFor(&cs, 20);
  cdSolveStats cold, warm;
  CHECK(backendSolve(&p, &cs, "newton", 8, 1e-10, &cold, NULL, 0) == CD_OK);
  CHECK(cold.converged);
  /* from the solution (lambda, betas, alpha rows carried): the modes read off it are the
   * solution's, its impulses already solve their equations: one check, nothing factored */
  CHECK(backendSolve(&p, &cs, "newton", 8, 1e-10, &warm, NULL, 0) == CD_OK);
  printf("    cold: %d active sets, %d factorizations, %d products; warm: %d, %d, %d\n", cold.iterations,
         cold.factorizations, cold.products, warm.iterations, warm.factorizations, warm.products);
  CHECK(warm.converged && warm.residual <= 1e-10);
  CHECK_MSG(warm.iterations == 1 && warm.factorizations == 0, "%d active sets, %d factorizations from the solution",
            warm.iterations, warm.factorizations);
  cd_contactSetFree(&cs);
  cd_contactProblemFree(&p);
}

CD_TEST(lcpNewtonWarmStartReadsAVertexSlideInAFrameThatTurned) {
  /* the sliding point mass (G = I) solved once: it slides at the vertex d_2 = -t1 (one alpha
   * of four). Then its contact frame turns by 10 degrees about n, as a sphere's frame follows
   * its normal from step to step: lambda and g in the new frame, beta and the alpha row carried
   * as they are. The slip is 10 degrees off -t1', inside d_2's sector: the answer is again
   * the vertex d_2. The warm start must read that mode (lambda_T split over d_1, d_2 read
   * as an edge slide, which these modes cannot solve: two active sets or more); from it the
   * normal impulse already solves the vertex mode's equation: one check, no factorization */
  const double gdt = 9.81 * 0.01, v0 = 1.0, mu = 0.5, th = 10.0 * M_PI / 180.0;
  cdContactProblem p;
  CHECK(pointMassProblem(&p, v0, mu, gdt) == 0);
  cdContactSet cs;
  contactsFor(&cs, 1);
  cdSolveStats st;
  CHECK(backendSolve(&p, &cs, "newton", 4, 0, &st, NULL, 0) == CD_OK);
  CHECK(st.converged && cs.nalpha == 4 && cs.alpha[2] > 0.0 && cs.con[0].beta > 0.0);
  double c = cos(th), s = sin(th), l1 = p.lambda[1], l2 = p.lambda[2];
  p.lambda[1] = c * l1 + s * l2, p.lambda[2] = -s * l1 + c * l2; /* the same impulse, new frame */
  p.g[1] = c * v0, p.g[2] = -s * v0;
  CHECK(backendSolve(&p, &cs, "newton", 4, 0, &st, NULL, 0) == CD_OK);
  printf("    turned frame: %d active sets, %d factorizations, residual %.1e; alpha (%.4f %.4f %.4f %.4f)\n",
         st.iterations, st.factorizations, st.residual, cs.alpha[0], cs.alpha[1], cs.alpha[2], cs.alpha[3]);
  CHECK(st.converged && st.residual <= 1e-8);
  CHECK_MSG(st.iterations == 1 && st.factorizations == 0, "%d active sets, %d factorizations", st.iterations,
            st.factorizations);
  /* the vertex slide: all of mu lambda_n on d_2 = -t1', slip beta = v0 cos(th) - mu g dt */
  CHECK_NEAR(p.lambda[0], gdt, 1e-12);
  CHECK_NEAR(cs.alpha[2], mu * gdt, 1e-12);
  CHECK(cs.alpha[0] == 0.0 && cs.alpha[1] == 0.0 && cs.alpha[3] == 0.0);
  CHECK_NEAR(cs.con[0].beta, c * v0 - mu * gdt, 1e-12);
  cd_contactSetFree(&cs);
  cd_contactProblemFree(&p);
}

CD_TEST(lcpNewtonLocalModesSolveMoreProblemsFromTheSweepsIterate) {
  /* the active-set tries inside bgs (cdLcpNewtonOptions.local_modes): a violated contact takes
   * the mode of its own block LCP with the others' impulses fixed, a Gauss-Seidel step, rather
   * than the rule of its largest violation alone. From three sweeps' iterate of random
   * problems (20 contacts, 12 bodies, unique impulses) the method with the blocks' modes
   * solves more of them (measured: 7 of 8 against 4 of 8), and every answer it reports
   * converged is Lemke's */
  const int m = 4, nc = 20;
  int solved[2] = {0, 0}, sets[2] = {0, 0};
  for (int local = 0; local < 2; local++) {
    g_rng = 4242;
    for (int trial = 0; trial < 8; trial++) {
      cdContactProblem p, q;
      uint64_t seed = g_rng;
      CHECK(randomProblem(&p, nc, 12, 0.3, 0.8, NULL, NULL) == 0);
      g_rng = seed;
      CHECK(randomProblem(&q, nc, 12, 0.3, 0.8, NULL, NULL) == 0);
      cdSolveStats ls;
      CHECK(backendSolve(&q, NULL, "lemke", m, 0, &ls, NULL, 0) == CD_OK && ls.converged);
      int n = cd_lcpSize(nc, m);
      double D[8], *z = calloc((size_t)n, sizeof *z);
      cd_lcpDirections(m, D);
      cdBgsOptions bo = {.max_sweeps = 3};
      cdBgsStats bs;
      CHECK(z && cd_bgsSolve(&p, m, D, z, &bo, &bs) == CD_OK);
      cdLcpNewton *nw = cd_lcpNewtonMake();
      cdLcpNewtonOptions no = {.tolerance = 1e-10, .local_modes = local};
      cdLcpNewtonStats ns;
      CHECK(nw && cd_lcpNewtonSolve(nw, &p, m, D, z, &no, &ns) == CD_OK);
      sets[local] += ns.iterations;
      if (ns.converged) {
        solved[local]++;
        double lam[3 * 20], dmax = 0.0, lmax = 0.0;
        cd_lcpLambdaFromZ(nc, m, D, z, lam);
        for (int t = 0; t < 3 * nc; t++) {
          dmax = fmax(dmax, fabs(lam[t] - q.lambda[t]));
          lmax = fmax(lmax, fabs(q.lambda[t]));
        }
        CHECK_MSG(dmax <= 1e-7 * fmax(1.0, lmax), "trial %d, local %d: impulses differ from Lemke's by %.3g", trial,
                  local, dmax);
      }
      cd_lcpNewtonFree(nw);
      free(z);
      cd_contactProblemFree(&p);
      cd_contactProblemFree(&q);
    }
  }
  printf("    from 3 sweeps, 8 problems: largest-violation rule solves %d (%d active sets), block modes %d (%d)\n",
         solved[0], sets[0], solved[1], sets[1]);
  CHECK(solved[1] > solved[0]);
}

/* the active-set method inside bgs (local modes, tolerance 1e-10) from the iterate of `sweeps`
 * sweeps on `trials` random problems of 40 contacts and 16 bodies (seed 9090), at most max_sets
 * active sets a problem (0: the method's own limit), leaving out the problems the sweeps solved
 * when only_unsolved: how many it solves and in how many active sets in all; every answer it
 * reports converged is checked to meet the tolerance */
static void newtonFromSweeps(int trials, int sweeps, int max_sets, int only_unsolved, int *solved, int *sets) {
  const int m = 4, nc = 40;
  *solved = *sets = 0;
  g_rng = 9090;
  for (int trial = 0; trial < trials; trial++) {
    cdContactProblem p;
    CHECK(randomProblem(&p, nc, 16, 0.3, 0.8, NULL, NULL) == 0);
    int n = cd_lcpSize(nc, m);
    double D[8], *z = calloc((size_t)n, sizeof *z), *work = calloc(6 * (size_t)nc, sizeof *work);
    cd_lcpDirections(m, D);
    cdBgsOptions bo = {.max_sweeps = sweeps};
    cdBgsStats bs;
    CHECK(z && work && cd_bgsSolve(&p, m, D, z, &bo, &bs) == CD_OK);
    cdLcpNewton *nw = cd_lcpNewtonMake();
    CHECK(nw);
    if (nw && z && work && !(only_unsolved && bs.converged)) {
      cdLcpNewtonOptions no = {.tolerance = 1e-10, .max_iterations = max_sets, .local_modes = 1};
      cdLcpNewtonStats ns = {0};
      CHECK(cd_lcpNewtonSolve(nw, &p, m, D, z, &no, &ns) == CD_OK);
      CHECK(max_sets == 0 || ns.iterations <= max_sets);
      *sets += ns.iterations;
      if (ns.converged) {
        ++*solved;
        double r = cd_lcpResidual(&p, m, D, z, work);
        CHECK_MSG(r <= 1e-10, "trial %d: reported converged at %.3g", trial, r);
      }
    }
    cd_lcpNewtonFree(nw);
    free(z), free(work);
    cd_contactProblemFree(&p);
  }
}

CD_TEST(lcpNewtonFromTheSweepsIterateReportsOnlyAnswersWithinTheTolerance) {
  /* the method ends at its first active set no better than its best iterate, which its
   * callers' sweeps go on from (lcp_newton.c; it used to go back and change half as many
   * violators, down to the largest one's change alone: on these problems the same 4 of 30
   * solved, in 106 active sets against 83 now). From three sweeps' iterate of random problems
   * (40 contacts, 16 bodies) with the tries' block modes, every answer the method reports
   * converged meets the tolerance, and it solves some of them. */
  int solved, sets;
  newtonFromSweeps(30, 3, 0, 0, &solved, &sets);
  printf("    from 3 sweeps, 30 problems of 40 contacts: solved %d (%d active sets)\n", solved, sets);
  CHECK(solved >= 1);
}

CD_TEST(lcpNewtonChangesTheLargestViolatorOfEachNeighbourhoodFirst) {
  /* a contact in a wrong mode moves its neighbours' impulses in the active set's solution, so
   * they violate their modes too; their changes then wait for its own (lcp_newton.c,
   * neighbourhoodLeaders: on the 1000-sphere pile's landing, S2 10 step 82, a ground contact
   * pressing where it should separate made the three contacts of its neighbours violate
   * theirs, and changing all four sent the try's four active sets from 0.45 to 2.5e-2; its
   * change alone solved the step). From ten sweeps' iterate of random problems (40 contacts,
   * 16 bodies), within the active sets of a try inside bgs (CD_BGS_TRY_SETS), the method
   * solves at least 8 of the 40 (measured: 10; changing every violator: 5), each answer it
   * reports converged within the tolerance, and in no more active sets in all than 71 (61;
   * with four sets a try and the old backtracking over fewer changes, 67) */
  int solved, sets;
  newtonFromSweeps(40, 10, CD_BGS_TRY_SETS, 1, &solved, &sets);
  printf("    from 10 sweeps, 40 problems of 40 contacts: %d solved within %d active sets (%d sets in all)\n", solved,
         CD_BGS_TRY_SETS, sets);
  CHECK_MSG(solved >= 8, "%d solved", solved);
  CHECK_MSG(sets <= 71, "%d active sets", sets);
}

CD_TEST(lcpNewtonRemembersTheActiveSetsOfEarlierCallsUntilForget) {
  /* remember (the tries of one step inside bgs, lcp_bgs.c): an active set that a call since
   * the last cd_lcpNewtonForget solved counts as solved, so a call from the same start solves
   * nothing (no factorization, its start given back, not converged); without remember, or
   * after cd_lcpNewtonForget, the call does the first one's work again */
  const int m = 4, nc = 20, n = cd_lcpSize(nc, m);
  double D[8];
  cd_lcpDirections(m, D);
  g_rng = 777;
  cdContactProblem p;
  CHECK(randomProblem(&p, nc, 12, 0.3, 0.8, NULL, NULL) == 0);
  double *z0 = calloc((size_t)n, sizeof *z0), *z = calloc((size_t)n, sizeof *z);
  cdLcpNewton *nw = cd_lcpNewtonMake();
  CHECK(z0 && z && nw);
  if (!z0 || !z || !nw) return;
  cdBgsOptions bo = {.max_sweeps = 3};
  cdBgsStats bs;
  CHECK(cd_bgsSolve(&p, m, D, z0, &bo, &bs) == CD_OK);
  cdLcpNewtonOptions no = {.tolerance = 1e-10, .local_modes = 1, .remember = 1};
  cdLcpNewtonStats first, st;
  cd_lcpNewtonForget(nw);
  memcpy(z, z0, (size_t)n * sizeof *z);
  CHECK(cd_lcpNewtonSolve(nw, &p, m, D, z, &no, &first) == CD_OK);
  CHECK(first.iterations >= 1 && first.factorizations >= 1);
  /* the same start again: its first active set was solved */
  memcpy(z, z0, (size_t)n * sizeof *z);
  CHECK(cd_lcpNewtonSolve(nw, &p, m, D, z, &no, &st) == CD_OK);
  CHECK(st.iterations == 0 && st.factorizations == 0 && !st.converged);
  CHECK(!memcmp(z, z0, (size_t)n * sizeof *z));
  /* without remember, and after a forget: the first call's active sets again */
  for (int k = 0; k < 2; k++) {
    cdLcpNewtonOptions o2 = no;
    if (k == 0) o2.remember = 0;
    else cd_lcpNewtonForget(nw);
    memcpy(z, z0, (size_t)n * sizeof *z);
    CHECK(cd_lcpNewtonSolve(nw, &p, m, D, z, &o2, &st) == CD_OK);
    CHECK_MSG(st.iterations == first.iterations && st.converged == first.converged,
              "%s: %d active sets (converged %d), the first call %d (%d)", k ? "after forget" : "without remember",
              st.iterations, st.converged, first.iterations, first.converged);
  }
  printf("    first call: %d active sets, converged %d; again with remember: none\n", first.iterations,
         first.converged);
  cd_lcpNewtonFree(nw);
  free(z0), free(z);
  cd_contactProblemFree(&p);
}

CD_TEST(lcpNewtonEscapesATryThatStartsFromAnActiveSetSolvedBefore) {
  /* escape (the tries inside bgs): a call whose first active set an earlier call since
   * cd_lcpNewtonForget solved (where it would do nothing: the changes from that set lead to
   * sets solved before) solves it again and tries the single changes of its violators that
   * lead to sets not solved yet (lcp_newton.c, escapeTry: on the 1000-sphere pile S2 10, step
   * 279's tries from 200 sweeps on started from remembered sets for 1,700 sweeps). From ten
   * sweeps' iterate of random problems (40 contacts, 16 bodies) whose first active set a first
   * call solved (max_iterations 1) without solving the problem, a second call from the same
   * start without escape does nothing, and with it (and the four active sets of a try) solves
   * some within max_iterations + CD_LCP_NEWTON_ESCAPE_SETS active sets (measured: 2 of 23,
   * 176 active sets), each answer it reports converged within the tolerance */
  const int m = 4, nc = 40, n = cd_lcpSize(nc, m), trials = 40;
  int failed = 0, solved = 0, sets = 0;
  g_rng = 9090;
  for (int trial = 0; trial < trials; trial++) {
    cdContactProblem p;
    CHECK(randomProblem(&p, nc, 16, 0.3, 0.8, NULL, NULL) == 0);
    double D[8], *z0 = calloc((size_t)n, sizeof *z0), *z = calloc((size_t)n, sizeof *z);
    double *work = calloc(6 * (size_t)nc, sizeof *work);
    cd_lcpDirections(m, D);
    cdBgsOptions bo = {.max_sweeps = 10};
    cdBgsStats bs;
    cdLcpNewton *nw = cd_lcpNewtonMake();
    CHECK(z0 && z && work && nw && cd_bgsSolve(&p, m, D, z0, &bo, &bs) == CD_OK);
    if (z0 && z && work && nw && !bs.converged) {
      /* a first call that solves only its first active set (remembered) */
      cdLcpNewtonOptions no = {.tolerance = 1e-10, .max_iterations = 1, .local_modes = 1, .remember = 1};
      cdLcpNewtonStats ns;
      cd_lcpNewtonForget(nw);
      memcpy(z, z0, (size_t)n * sizeof *z);
      CHECK(cd_lcpNewtonSolve(nw, &p, m, D, z, &no, &ns) == CD_OK);
      no.max_iterations = CD_BGS_TRY_SETS;
      if (!ns.converged && ns.iterations > 0) {
        failed++;
        /* the same start again, without escape: nothing */
        memcpy(z, z0, (size_t)n * sizeof *z);
        CHECK(cd_lcpNewtonSolve(nw, &p, m, D, z, &no, &ns) == CD_OK);
        CHECK(ns.iterations == 0 && !ns.converged);
        /* with escape */
        no.escape = 1;
        memcpy(z, z0, (size_t)n * sizeof *z);
        CHECK(cd_lcpNewtonSolve(nw, &p, m, D, z, &no, &ns) == CD_OK);
        CHECK_MSG(ns.iterations >= 1 && ns.iterations <= CD_BGS_TRY_SETS + CD_LCP_NEWTON_ESCAPE_SETS,
                  "trial %d: %d active sets", trial, ns.iterations);
        sets += ns.iterations;
        if (ns.converged) {
          solved++;
          double r = cd_lcpResidual(&p, m, D, z, work);
          CHECK_MSG(r <= 1e-10, "trial %d: reported converged at %.3g", trial, r);
        }
      }
    }
    cd_lcpNewtonFree(nw);
    free(z0), free(z), free(work);
    cd_contactProblemFree(&p);
  }
  printf("    from 10 sweeps, %d of %d problems a first active set left unsolved: the escape solves %d (%d active sets)\n",
         failed, trials, solved, sets);
  CHECK(failed >= 1);
  CHECK_MSG(solved >= 1, "%d solved", solved);
}

/* max_t |(G la - G lb)_t|, m/s: how far two impulses' contact velocities are apart on p's G (the
 * velocities are unique where redundant impulses are not); NAN when out of memory */
static double velocityGap(const cdContactProblem *p, const double *la, const double *lb) {
  size_t n3 = 3 * (size_t)p->ncon;
  double *u = malloc(2 * n3 * sizeof *u), du = 0.0;
  if (!u) return NAN;
  cd_blockMatrixMul(&p->G, la, u), cd_blockMatrixMul(&p->G, lb, u + n3);
  for (size_t t = 0; t < n3; t++) du = fmax(du, fabs(u[t] - u[n3 + t]));
  free(u);
  return du;
}

CD_TEST(lcpNewtonStopsRefiningAnActiveSetWhoseModesAreWrong) {
  /* an active set whose own violations are EARLY_RATIO times the residual of its mode
   * equations is refined no further (lcp_newton.c, refine): its modes change next. From ten
   * sweeps' iterate of random problems (20 contacts, 12 bodies) with the tries' block modes,
   * the method then makes fewer refinement solves (measured: 41 against 75 refining every
   * active set to the end, the same 27 of 30 problems solved in the same 43 active sets), and
   * every answer it reports converged has Lemke's velocities */
  const int m = 4, nc = 20, n = cd_lcpSize(nc, m), trials = 30;
  int solves = 0, solved = 0, sets = 0;
  g_rng = 5151;
  for (int trial = 0; trial < trials; trial++) {
    cdContactProblem p, q;
    uint64_t seed = g_rng;
    CHECK(randomProblem(&p, nc, 12, 0.3, 0.8, NULL, NULL) == 0);
    g_rng = seed;
    CHECK(randomProblem(&q, nc, 12, 0.3, 0.8, NULL, NULL) == 0);
    cdSolveStats ls;
    CHECK(backendSolve(&q, NULL, "lemke", m, 0, &ls, NULL, 0) == CD_OK && ls.converged);
    double D[8], *z = calloc((size_t)n, sizeof *z), lam[3 * 20];
    cd_lcpDirections(m, D);
    cdBgsOptions bo = {.max_sweeps = 10};
    cdBgsStats bs;
    CHECK(z && cd_bgsSolve(&p, m, D, z, &bo, &bs) == CD_OK);
    cdLcpNewton *nw = cd_lcpNewtonMake();
    cdLcpNewtonOptions no = {.tolerance = 1e-10, .local_modes = 1};
    cdLcpNewtonStats ns;
    CHECK(nw && z && cd_lcpNewtonSolve(nw, &p, m, D, z, &no, &ns) == CD_OK);
    solves += ns.solves, sets += ns.iterations;
    if (nw && z && ns.converged) {
      solved++;
      cd_lcpLambdaFromZ(nc, m, D, z, lam);
      double du = velocityGap(&p, lam, q.lambda), vs = cd_contactProblemVelocityScale(&p); /* (q's G is p's) */
      CHECK_MSG(du <= 1e-8 * vs, "trial %d: velocities differ from Lemke's by %.3g m/s", trial, du);
    }
    cd_lcpNewtonFree(nw);
    free(z);
    cd_contactProblemFree(&p);
    cd_contactProblemFree(&q);
  }
  printf("    from 10 sweeps, %d problems: %d solved, %d active sets, %d refinement solves\n", trials, solved, sets,
         solves);
  CHECK(solves <= 41 && solved >= 27 && sets <= 43);
}

CD_TEST(lcpBgsTriesAgainWhenTheResidualFirstReachesTheirThreshold) {
  /* the active-set tries inside bgs (lcp_bgs.c): after a try made above NEWTON_RES (1e-4; the
   * one at NEWTON_SWEEPS sweeps), the next comes at the first residual check at or below
   * it; after one below it, a hundredfold further down. Each try used to lower the threshold a
   * hundredfold from the lower of the two, so that one try at 50 sweeps left none above 1e-6
   * (the 1000-sphere pile S2 10, step 52, swept from 8e-5 to 1e-8 without one: 851
   * iterations, 615 with this rule) */
  CHECK(cd_bgsNextTryResidual(8e-3) == 1e-4);
  CHECK(cd_bgsNextTryResidual(2e-3) == 1e-4); /* (a second try above it: still 1e-4) */
  CHECK_NEAR(cd_bgsNextTryResidual(1e-4), 1e-6, 1e-21);
  CHECK_NEAR(cd_bgsNextTryResidual(5e-5), 5e-7, 1e-21);
}

/* adds d times its own diagonal entry to each diagonal entry of G, and scales g by 1 + e */
static void moveProblem(cdContactProblem *p, double d, double e) {
  for (int i = 0; i < p->ncon; i++) {
    double *B = &p->G.val[9 * (size_t)p->G.diag[i]];
    B[0] += d * B[0], B[4] += d * B[4], B[8] += d * B[8];
  }
  for (int t = 0; t < 3 * p->ncon; t++) p->g[t] *= 1.0 + e;
  p->vscale = 0.0;
}

CD_TEST(lcpNewtonKeepsItsFactorizationWhileItsSolvesConverge) {
  /* the active-set method keeps its last factorization with its pattern (lcp_newton.c,
   * solveModes): a problem that moved by 1e-9 of G (a resting stack's next step) is solved
   * from the previous answer's modes with it, nothing factored; one that moved by 5% of G's
   * diagonal is factored anew. Both meet the tolerance, and give the velocities a fresh
   * solver gives. */
  const int m = 4, nc = 20, n = cd_lcpSize(nc, m);
  double D[8];
  cd_lcpDirections(m, D);
  g_rng = 2718;
  cdContactProblem p;
  CHECK(randomProblem(&p, nc, 12, 0.1, 0.5, NULL, NULL) == 0);
  cdLcpNewton *s = cd_lcpNewtonMake(), *fresh = cd_lcpNewtonMake();
  double *z = calloc((size_t)n, sizeof *z), *zf = calloc((size_t)n, sizeof *zf);
  double *lam = calloc(3 * (size_t)nc, sizeof *lam), *lamf = calloc(3 * (size_t)nc, sizeof *lamf);
  CHECK(s && fresh && z && zf && lam && lamf);
  cdLcpNewtonOptions o = {.tolerance = 1e-10};
  cdLcpNewtonStats st, sf;
  /* the modes of the solution (bgs), solved once on a moved problem: the pattern and its
   * factorization kept */
  cdBgsStats bs;
  cdBgsOptions bo = {.tolerance = 1e-12, .max_sweeps = 100000};
  CHECK(z && cd_bgsSolve(&p, m, D, z, &bo, &bs) == CD_OK && bs.converged);
  moveProblem(&p, 0.0, 1e-6);
  CHECK(s && z && cd_lcpNewtonSolve(s, &p, m, D, z, &o, &st) == CD_OK && st.converged);
  CHECK(st.iterations == 1 && st.factorizations == 1);
  const double moves[2] = {1e-9, 0.05};
  for (int k = 0; s && fresh && z && zf && lam && lamf && k < 2; k++) {
    moveProblem(&p, moves[k], 1e-6);
    memcpy(zf, z, (size_t)n * sizeof *z);
    CHECK(cd_lcpNewtonSolve(s, &p, m, D, z, &o, &st) == CD_OK);
    CHECK(cd_lcpNewtonSolve(fresh, &p, m, D, zf, &o, &sf) == CD_OK);
    printf("    G moved by %g: %d active sets, %d factorizations, %d solves, residual %.1e (fresh solver: %d, %d, %d, "
           "%.1e)\n", moves[k], st.iterations, st.factorizations, st.solves, st.residual, sf.iterations,
           sf.factorizations, sf.solves, sf.residual);
    CHECK(st.converged && st.residual <= 1e-10 && sf.converged);
    CHECK(st.solves >= 1); /* (the old answer did not solve the moved problem) */
    if (k == 0) CHECK(st.iterations == 1 && st.factorizations == 0 && sf.factorizations == 1);
    else CHECK(st.factorizations >= 1);
    /* the same velocities (they are unique; redundant impulses need not be) */
    cd_lcpLambdaFromZ(nc, m, D, z, lam), cd_lcpLambdaFromZ(nc, m, D, zf, lamf);
    double du = velocityGap(&p, lam, lamf), vs = cd_contactProblemVelocityScale(&p);
    CHECK_MSG(du <= 4e-10 * vs, "velocities differ by %.2g m/s", du);
  }
  free(z), free(zf), free(lam), free(lamf);
  cd_lcpNewtonFree(s), cd_lcpNewtonFree(fresh);
  cd_contactProblemFree(&p);
}

CD_TEST(lcpNewtonCostBoundStopsAtAnUnsymmetricActiveSetBeforeFactoringIt) {
  /* low friction on random coupled contacts: sliding contacts make the active set's K
   * unsymmetric (KLU). Unbounded, the method solves them from 20 bgs sweeps. With a bound below any LU's cost it
   * stops at the first unsymmetric active set without factoring it, says so (costly) and
   * does not claim convergence, so that the default's bgs solves the step; with a bound above
   * every LU's cost it is the unbounded solve, to the bit. */
  const int m = 4, nc = 20, n = cd_lcpSize(nc, m);
  double D[8];
  cd_lcpDirections(m, D);
  cdLcpNewton *s = cd_lcpNewtonMake();
  CHECK(s != NULL);
  double *za = calloc((size_t)n, sizeof *za), *zb = calloc((size_t)n, sizeof *zb), *zc = calloc((size_t)n, sizeof *zc);
  g_rng = 4242;
  int unsymmetric = 0;
  for (int trial = 0; s && za && zb && zc && trial < 6; trial++) {
    cdContactProblem p;
    CHECK(randomProblem(&p, nc, 12, 0.02, 0.1, NULL, NULL) == 0);
    /* from where bgs's sweeps put the modes (as the default's tries start) */
    memset(za, 0, (size_t)n * sizeof *za);
    cdBgsOptions bo = {.tolerance = 1e-10, .max_sweeps = 20};
    CHECK(cd_bgsSolve(&p, m, D, za, &bo, NULL) == CD_OK);
    memcpy(zb, za, (size_t)n * sizeof *zb), memcpy(zc, za, (size_t)n * sizeof *zc);
    cdLcpNewtonOptions none = {.tolerance = 1e-10}, low = {.tolerance = 1e-10, .lu_flops_max = 1e-300},
                       high = {.tolerance = 1e-10, .lu_flops_max = 1e300};
    cdLcpNewtonStats a, b, c;
    CHECK(cd_lcpNewtonSolve(s, &p, m, D, za, &none, &a) == CD_OK);
    CHECK(!a.costly);
    printf("    trial %d: unbounded %d active sets (%d LU), residual %.1e\n", trial, a.iterations,
           a.factorizations - a.symmetric, a.residual);
    if (a.symmetric < a.factorizations) {
      unsymmetric++;
      CHECK(cd_lcpNewtonSolve(s, &p, m, D, zb, &low, &b) == CD_OK);
      CHECK_MSG(b.costly && !b.converged, "trial %d: costly %d converged %d", trial, b.costly, b.converged);
      CHECK_MSG(b.factorizations == b.symmetric, "trial %d: %d LU factorizations over the bound", trial,
                b.factorizations - b.symmetric);
      CHECK(cd_lcpNewtonSolve(s, &p, m, D, zc, &high, &c) == CD_OK);
      CHECK(!c.costly && c.converged == a.converged && c.iterations == a.iterations);
      CHECK(memcmp(za, zc, (size_t)n * sizeof *za) == 0);
      printf("    bounded: stopped after %d active sets, %d factorizations (%d by CHOLMOD)\n", b.iterations,
             b.factorizations, b.symmetric);
    }
    cd_contactProblemFree(&p);
  }
  CHECK_MSG(unsymmetric > 0, "no trial reached an unsymmetric active set");
  free(za), free(zb), free(zc);
  cd_lcpNewtonFree(s);
}

CD_TEST(lcpNewtonKeptOrderSolvesAsAFreshOneAndKeepsTheCostBound) {
  /* KLU's order of K's unknowns is kept with G's block pattern (lcp_newton.c, keptOrder): a
   * later active set on the same G takes it (the active contacts in its order, new ones last)
   * instead of an AMD of its own while its LU's estimated flops stay within ORDER_SLACK of the
   * last AMD's. Random problems with sliding contacts (KLU), solved from 20 sweeps' iterate and
   * then from 5 sweeps' by the same solver: the second call takes kept orders, and what it
   * reports converged has the velocities of a fresh solver from the same start (unique; to the
   * tolerance) and meets the tolerance; with a cost bound below any LU, a kept order's estimate
   * stops the method before factoring as AMD's does (KLU estimates for its own orders only) */
  const int m = 4, nc = 40, n = cd_lcpSize(nc, m);
  double D[8];
  cd_lcpDirections(m, D);
  double *z = calloc((size_t)n, sizeof *z), *zf = calloc((size_t)n, sizeof *zf), *z5 = calloc((size_t)n, sizeof *z5);
  double *lam = calloc(3 * (size_t)nc, sizeof *lam), *lamf = calloc(3 * (size_t)nc, sizeof *lamf);
  double *work = calloc(6 * (size_t)nc, sizeof *work);
  CHECK(z && zf && z5 && lam && lamf && work);
  if (!z || !zf || !z5 || !lam || !lamf || !work) return;
  g_rng = 3131;
  int kept = 0, compared = 0, bounded = 0;
  for (int trial = 0; trial < 8; trial++) {
    cdContactProblem p;
    CHECK(randomProblem(&p, nc, 16, 0.02, 0.1, NULL, NULL) == 0);
    cdLcpNewton *s = cd_lcpNewtonMake(), *fresh = cd_lcpNewtonMake();
    CHECK(s && fresh);
    cdBgsOptions b20 = {.tolerance = 1e-10, .max_sweeps = 20}, b5 = {.tolerance = 1e-10, .max_sweeps = 5};
    memset(z, 0, (size_t)n * sizeof *z), memset(z5, 0, (size_t)n * sizeof *z5);
    CHECK(cd_bgsSolve(&p, m, D, z, &b20, NULL) == CD_OK && cd_bgsSolve(&p, m, D, z5, &b5, NULL) == CD_OK);
    cdLcpNewtonOptions o = {.tolerance = 1e-10}, low = {.tolerance = 1e-10, .lu_flops_max = 1e-300};
    cdLcpNewtonStats a, b, f;
    CHECK(s && fresh && cd_lcpNewtonSolve(s, &p, m, D, z, &o, &a) == CD_OK);
    memcpy(z, z5, (size_t)n * sizeof *z), memcpy(zf, z5, (size_t)n * sizeof *zf);
    CHECK(s && fresh && cd_lcpNewtonSolve(s, &p, m, D, z, &o, &b) == CD_OK);
    CHECK(s && fresh && cd_lcpNewtonSolve(fresh, &p, m, D, zf, &o, &f) == CD_OK);
    kept += b.kept_orders;
    printf("    trial %d: first call %d analyses (%d kept orders); again from 5 sweeps %d (%d kept), residual %.1e; "
           "fresh solver %d (%d), %.1e\n", trial, a.analyses, a.kept_orders, b.analyses, b.kept_orders, b.residual,
           f.analyses, f.kept_orders, f.residual);
    if (b.converged) CHECK(cd_lcpResidual(&p, m, D, z, work) <= 1e-10);
    if (b.converged && f.converged && b.kept_orders > 0) {
      compared++;
      cd_lcpLambdaFromZ(nc, m, D, z, lam), cd_lcpLambdaFromZ(nc, m, D, zf, lamf);
      double du = velocityGap(&p, lam, lamf), vs = cd_contactProblemVelocityScale(&p);
      CHECK_MSG(du <= 1e-8 * vs, "trial %d: velocities differ from a fresh solver's by %.3g m/s", trial, du);
    }
    if (b.factorizations > b.symmetric) {
      /* a third call from the same start: its first unsymmetric active set has a kept order */
      memcpy(z, z5, (size_t)n * sizeof *z);
      cdLcpNewtonStats c;
      CHECK(cd_lcpNewtonSolve(s, &p, m, D, z, &low, &c) == CD_OK);
      CHECK_MSG(c.costly && !c.converged && c.factorizations == c.symmetric && c.kept_orders >= 1,
                "trial %d: bounded call costly %d, %d LU factorizations, %d kept orders", trial, c.costly,
                c.factorizations - c.symmetric, c.kept_orders);
      bounded++;
    }
    cd_lcpNewtonFree(s), cd_lcpNewtonFree(fresh);
    cd_contactProblemFree(&p);
  }
  printf("    %d kept orders in the second calls; %d answers compared, %d bounded calls\n", kept, compared, bounded);
  CHECK(kept >= 1 && compared >= 1 && bounded >= 1);
  free(z), free(zf), free(z5), free(lam), free(lamf), free(work);
}

CD_TEST(lcpNewtonFactorsByKluWhereTheLduPivotsFailAndAnswersTheSame) {
  /* an unsymmetric K is factored by the LDU with diagonal pivots (sparse_ldu.c) while every
   * multiplier passes the threshold, else by KLU with partial pivoting, counted
   * (lu_fallbacks). Random coupled problems with sliding contacts, solved from 5 bgs sweeps'
   * iterate at the default threshold and at 1 (every multiplier above 1 refused): the second
   * takes KLU's path, solves the same active sets to the same best residual (converged or
   * not: most of these starts are far from the answer), and where it converges meets the
   * tolerance with the first's velocities (unique; to the tolerance) */
  const int m = 4, nc = 40, n = cd_lcpSize(nc, m);
  double D[8];
  cd_lcpDirections(m, D);
  double *za = calloc((size_t)n, sizeof *za), *zb = calloc((size_t)n, sizeof *zb);
  double *la = calloc(3 * (size_t)nc, sizeof *la), *lb = calloc(3 * (size_t)nc, sizeof *lb);
  double *work = calloc(6 * (size_t)nc, sizeof *work);
  CHECK(za && zb && la && lb && work);
  if (!za || !zb || !la || !lb || !work) return;
  g_rng = 9191;
  int fallbacks = 0, default_fallbacks = 0, lu = 0, compared = 0;
  for (int trial = 0; trial < 12; trial++) {
    cdContactProblem p;
    CHECK(randomProblem(&p, nc, 16, 0.02, 0.1, NULL, NULL) == 0);
    cdLcpNewton *sa = cd_lcpNewtonMake(), *sb = cd_lcpNewtonMake();
    CHECK(sa && sb);
    memset(za, 0, (size_t)n * sizeof *za);
    cdBgsOptions b5 = {.tolerance = 1e-10, .max_sweeps = 5};
    CHECK(cd_bgsSolve(&p, m, D, za, &b5, NULL) == CD_OK);
    memcpy(zb, za, (size_t)n * sizeof *zb);
    cdLcpNewtonOptions oa = {.tolerance = 1e-10}, ob = {.tolerance = 1e-10, .ldu_tol = 1.0};
    cdLcpNewtonStats a, b;
    CHECK(sa && sb && cd_lcpNewtonSolve(sa, &p, m, D, za, &oa, &a) == CD_OK);
    CHECK(sa && sb && cd_lcpNewtonSolve(sb, &p, m, D, zb, &ob, &b) == CD_OK);
    lu += a.factorizations - a.symmetric - a.body;
    default_fallbacks += a.lu_fallbacks, fallbacks += b.lu_fallbacks;
    printf("    trial %d: %d LU factorizations, %d by KLU, residual %.1e; threshold 1: %d, %d by KLU, %.1e\n", trial,
           a.factorizations - a.symmetric - a.body, a.lu_fallbacks, a.residual, b.factorizations - b.symmetric - b.body,
           b.lu_fallbacks, b.residual);
    CHECK(b.lu_fallbacks <= b.factorizations - b.symmetric - b.body);
    /* the same active sets, each solved to the same iterate (the method's best residual, to
     * roundoff, converged or not) */
    CHECK_MSG(b.iterations == a.iterations && fabs(b.residual - a.residual) <= 1e-6 * a.residual + 1e-12,
              "trial %d: %d active sets, residual %.6g; with KLU's fallbacks %d, %.6g", trial, a.iterations, a.residual,
              b.iterations, b.residual);
    CHECK_MSG(b.converged || !a.converged, "trial %d: converged with the LDU, not with KLU's fallbacks", trial);
    if (b.converged) CHECK(cd_lcpResidual(&p, m, D, zb, work) <= 1e-10);
    if (a.converged && b.converged) {
      compared++;
      cd_lcpLambdaFromZ(nc, m, D, za, la), cd_lcpLambdaFromZ(nc, m, D, zb, lb);
      double du = velocityGap(&p, la, lb), vs = cd_contactProblemVelocityScale(&p);
      CHECK_MSG(du <= 1e-8 * vs, "trial %d: velocities differ by %.3g m/s", trial, du);
    }
    cd_lcpNewtonFree(sa), cd_lcpNewtonFree(sb);
    cd_contactProblemFree(&p);
  }
  printf("    %d LU factorizations (%d by KLU at the default threshold); at threshold 1, %d by KLU; %d answers compared\n",
         lu, default_fallbacks, fallbacks, compared);
  CHECK(lu >= 1 && fallbacks >= 1 && compared >= 1);
  free(za), free(zb), free(la), free(lb), free(work);
}

/* ---- options and names ---- */

CD_TEST(lcpBackendRejectsBadOptionsWithOneLine) {
  const int bad_dirs[4] = {2, 3, 5, -4};
  char err[256];
  void *state;
  for (int k = 0; k < 4; k++) {
    cdBackendOptions opt = {.friction_dirs = bad_dirs[k]};
    err[0] = 0;
    CHECK(cd_backendLcp.make(NULL, &opt, &state, err, sizeof err) == CD_ERR_USAGE);
    CHECK(strstr(err, "friction-dirs") != NULL && strchr(err, '\n') == NULL);
  }
  cdBackendOptions opt = {.solver = "simplex"};
  CHECK(cd_backendLcp.make(NULL, &opt, &state, err, sizeof err) == CD_ERR_USAGE);
  CHECK(strstr(err, "simplex") != NULL);
  opt = (cdBackendOptions){.tolerance = -1};
  CHECK(cd_backendLcp.make(NULL, &opt, &state, err, sizeof err) == CD_ERR_USAGE);
  /* pgs is bgs; defaults: m = 4, auto */
  opt = (cdBackendOptions){.solver = "pgs"};
  CHECK(cd_backendLcp.make(NULL, &opt, &state, err, sizeof err) == CD_OK);
  CHECK(!strcmp(cd_backendLcp.solverName(state), "bgs"));
  cd_backendLcp.free(state);
  CHECK(cd_backendLcp.make(NULL, NULL, &state, err, sizeof err) == CD_OK);
  CHECK(!strcmp(cd_backendLcp.solverName(state), "lemke+newton+bgs"));
  CHECK(cd_backendLcp.kind == CD_BACKEND_IMPULSE && !strcmp(cd_backendLcp.name, "lcp"));
  cd_backendLcp.free(state);
}

/* nc separate unit point masses, each sliding on the ground (block-diagonal G) */
static int manyPointMasses(cdContactProblem *p, int nc) {
  double *Gd = calloc((size_t)9 * nc * nc, sizeof *Gd), *g = malloc(3 * (size_t)nc * sizeof *g);
  double *mu = malloc((size_t)nc * sizeof *mu);
  for (int i = 0; i < nc; i++) {
    for (int t = 0; t < 3; t++) Gd[(size_t)(3 * i + t) * 3 * nc + 3 * i + t] = 1.0;
    g[3 * i] = -0.0981;
    g[3 * i + 1] = 0.01 * i;
    g[3 * i + 2] = 0.5;
    mu[i] = 0.5;
  }
  int rc = problemFromDense(p, nc, Gd, g, mu);
  free(Gd), free(g), free(mu);
  return rc;
}

CD_TEST(lcpDefaultSolverPicksByLcpSizeAndSaysSo) {
  char err[256];
  void *state;
  CHECK(cd_backendLcp.make(NULL, NULL, &state, err, sizeof err) == CD_OK);
  /* 8 contacts at m = 4: n = 48, Lemke; 9: n = 54, the active-set method */
  cdContactProblem small, big;
  CHECK(manyPointMasses(&small, CD_LCP_AUTO_LEMKE_MAX / 6) == 0);
  CHECK(manyPointMasses(&big, CD_LCP_AUTO_LEMKE_MAX / 6 + 1) == 0);
  cdSolveStats st;
  CHECK(cd_backendLcp.solve(state, &small, NULL, &st) == CD_OK);
  CHECK(st.converged && !strcmp(cd_backendLcp.solverName(state), "lemke"));
  CHECK(cd_backendLcp.solve(state, &big, NULL, &st) == CD_OK);
  /* sticking first (the contacts close), then the edge of the polygon's sector that holds
   * lambda_T, then, where an alpha of that edge comes out negative, its vertex: three */
  printf("    %d contacts: %d active sets, %d factorizations\n", big.ncon, st.iterations, st.factorizations);
  CHECK(st.converged && st.fallbacks == 0 && st.factorizations <= 3);
  CHECK(!strcmp(cd_backendLcp.solverName(state), "lemke+newton"));
  /* both answers: lambda_n = g dt, friction mu g dt against the slip direction */
  for (int i = 0; i < big.ncon; i++) {
    double vt1 = 0.01 * i, vt2 = 0.5;
    CHECK_NEAR(big.lambda[3 * i], 0.0981, 1e-8);
    /* sliding: |lambda_T| on the polygon, <= mu lambda_n, opposing the slip */
    double lt = hypot(big.lambda[3 * i + 1], big.lambda[3 * i + 2]);
    CHECK(lt <= 0.5 * 0.0981 + 1e-8);
    CHECK(big.lambda[3 * i + 1] * vt1 + big.lambda[3 * i + 2] * vt2 < 0);
  }
  cd_backendLcp.free(state);
  cd_contactProblemFree(&small);
  cd_contactProblemFree(&big);
}

CD_TEST(lcpLemkeFailureFallsBackToBgsAndIsCounted) {
  /* an explicit lemke on an LCP larger than CD_LCP_LEMKE_MAX: bgs solves it, fallbacks = 1 */
  cdContactProblem p;
  CHECK(manyPointMasses(&p, CD_LCP_LEMKE_MAX / 6 + 1) == 0);
  cdSolveStats st;
  char name[32];
  CHECK(backendSolve(&p, NULL, "lemke", 4, 0, &st, name, sizeof name) == CD_OK);
  CHECK(st.fallbacks == 1 && st.converged);
  CHECK(!strcmp(name, "bgs"));
  cd_contactProblemFree(&p);
}

CD_TEST(lcpReportsAllocationFailureWithoutLeaking) {
  g_rng = 5;
  cdContactProblem p;
  CHECK(randomProblem(&p, 8, 6, 0.2, 0.6, NULL, NULL) == 0);
  cdContactSet cs;
  contactsFor(&cs, 8);
  const char *solvers[2] = {"lemke", "bgs"};
  for (int si = 0; si < 2; si++) {
    int failed = 0;
    for (long k = 1; k <= 30; k++) {
      long live = cd_allocLive();
      cd_contactSetSetAlpha(&cs, 0);
      live = cd_allocLive();
      cd_allocFailAt(k);
      cdSolveStats st;
      int rc = backendSolve(&p, &cs, solvers[si], 4, 0, &st, NULL, 0);
      cd_allocFailAt(0);
      CHECK(rc == CD_OK || rc == CD_ERR_NOMEM);
      failed += rc == CD_ERR_NOMEM;
      /* everything but the contact set's alpha rows is freed */
      long extra = cs.alpha ? 1 : 0;
      CHECK_MSG(cd_allocLive() == live + extra, "%s, failing allocation %ld: %ld blocks leaked", solvers[si], k,
                cd_allocLive() - live - extra);
      if (rc == CD_OK) break;
    }
    CHECK(failed >= 2);
  }
  cd_contactSetFree(&cs);
  cd_contactProblemFree(&p);
}

/* ---- a cube on four corner contacts (one step of the sliding-cube scene) ---- */

/* unit-mass cube of edge 2h resting on the ground, moving at (vx, vy, -g dt) after the free
 * step: four contacts at the bottom corners, normal +z, t1 = x, t2 = y. J is 12 x 6, so G
 * (rank 6) is singular and the normal impulses are statically indeterminate: only the
 * resulting body velocity is determined. Minv: (6 x 6) row-major, J (12 x 6) out. */
static int cubeProblem(cdContactProblem *p, double h, double vx, double vy, double gdt, double mu, double *J,
                       double *Minv, double *vf) {
  const double inertia = 2.0 * h * h / 3.0; /* m (2h)^2 / 6 for m = 1 */
  memset(Minv, 0, 36 * sizeof *Minv);
  for (int t = 0; t < 3; t++) {
    Minv[t * 6 + t] = 1.0;
    Minv[(3 + t) * 6 + 3 + t] = 1.0 / inertia;
  }
  const double dirs[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
  memset(J, 0, 72 * sizeof *J);
  for (int i = 0; i < 4; i++) {
    double r[3] = {i & 1 ? h : -h, i & 2 ? h : -h, -h}, rxd[3];
    for (int row = 0; row < 3; row++) {
      cross(r, dirs[row], rxd);
      for (int t = 0; t < 3; t++) {
        J[(3 * i + row) * 6 + t] = dirs[row][t];
        J[(3 * i + row) * 6 + 3 + t] = rxd[t];
      }
    }
  }
  vf[0] = vx, vf[1] = vy, vf[2] = -gdt, vf[3] = vf[4] = vf[5] = 0.0;
  double Gd[144], g[12], mus[4] = {mu, mu, mu, mu};
  for (int r = 0; r < 12; r++) {
    g[r] = 0.0;
    for (int a = 0; a < 6; a++) g[r] += J[r * 6 + a] * vf[a];
    for (int c = 0; c < 12; c++) {
      double s = 0.0;
      for (int a = 0; a < 6; a++) s += J[r * 6 + a] * Minv[a * 6 + a] * J[c * 6 + a];
      Gd[r * 12 + c] = s;
    }
  }
  return problemFromDense(p, 4, Gd, g, mus);
}

CD_TEST(lcpSlidingCubeKeepsAllFourCornersOnTheGround) {
  /* v0 = 2 along x, mu = 0.5, dt = 0.01: after the step the cube moves at v0 - mu g dt,
   * with zero vertical and angular velocity (no lift, no tipping), every corner's normal
   * velocity 0 and the total normal impulse m g dt */
  const double h = 0.1, gdt = 9.81 * 0.01, mu = 0.5, v0 = 2.0;
  const char *solvers[2] = {"lemke", "bgs"};
  for (int si = 0; si < 2; si++)
    for (int m = 4; m <= 8; m += 4) {
      cdContactProblem p;
      double J[72], Minv[36], vf[6], v[6];
      CHECK(cubeProblem(&p, h, v0, 0.0, gdt, mu, J, Minv, vf) == 0);
      cdSolveStats st;
      CHECK(backendSolve(&p, NULL, solvers[si], m, 1e-12, &st, NULL, 0) == CD_OK);
      CHECK_MSG(st.converged, "%s m = %d: residual %.3g after %d iterations", solvers[si], m, st.residual,
                st.iterations);
      for (int a = 0; a < 6; a++) {
        double s = 0.0;
        for (int r = 0; r < 12; r++) s += Minv[a * 6 + a] * J[r * 6 + a] * p.lambda[r];
        v[a] = vf[a] + s;
      }
      double ln = 0.0;
      for (int i = 0; i < 4; i++) {
        ln += p.lambda[3 * i];
        double cn = 0.0;
        for (int a = 0; a < 6; a++) cn += J[(3 * i) * 6 + a] * v[a];
        CHECK_NEAR(cn, 0.0, 1e-10);
      }
      printf("    %s m = %d: %d iterations, residual %.1e, v+ = (%.12f, %.1e, %.1e), omega = (%.1e, %.1e, %.1e)\n",
             solvers[si], m, st.iterations, st.residual, v[0], v[1], v[2], v[3], v[4], v[5]);
      CHECK_NEAR(ln, gdt, 1e-10);
      CHECK_NEAR(v[0], v0 - mu * gdt, 1e-10);
      for (int a = 1; a < 6; a++) CHECK_NEAR(v[a], 0.0, 1e-9);
      cd_contactProblemFree(&p);
    }
}

/* ---- direction bias of the polygonal cone ---- */

/* a unit point mass slides on the ground from speed v0 at angle th (rad, from t1) with
 * semi-implicit Euler steps of the LCP until it sticks; returns the angle of its total
 * displacement and writes the distance */
static double slideDirection(int m, double th, double v0, double mu, double dt, double *dist, int *steps) {
  const double grav = 9.81;
  double v[2] = {v0 * cos(th), v0 * sin(th)}, x[2] = {0, 0};
  char err[128];
  void *state;
  cdBackendOptions opt = {.solver = "lemke", .friction_dirs = m};
  CHECK(cd_backendLcp.make(NULL, &opt, &state, err, sizeof err) == CD_OK);
  int k = 0;
  for (; k < 10000 && (v[0] != 0.0 || v[1] != 0.0); k++) {
    cdContactProblem p;
    CHECK(pointMassProblem(&p, v[0], mu, grav * dt) == 0);
    p.g[2] = v[1];
    cdSolveStats st;
    CHECK(cd_backendLcp.solve(state, &p, NULL, &st) == CD_OK);
    CHECK(st.converged);
    /* the contact's post-step tangential velocity is the body's: c_T = v + lambda_T */
    v[0] += p.lambda[1];
    v[1] += p.lambda[2];
    if (hypot(v[0], v[1]) < 1e-12) v[0] = v[1] = 0.0; /* stuck (roundoff of the exact stop) */
    x[0] += dt * v[0];
    x[1] += dt * v[1];
    cd_contactProblemFree(&p);
  }
  cd_backendLcp.free(state);
  *dist = hypot(x[0], x[1]);
  *steps = k;
  return atan2(x[1], x[0]);
}

CD_TEST(lcpPolygonalConeDirectionBiasShrinksWithMoreDirections) {
  /* v0 = 2, mu = 0.5, dt = 0.01. Along a direction d_k the polygon acts like the circle:
   * the discrete distance of NUMERICS.md, 0.3978 m. Off the directions the friction impulse
   * goes to the polygon's vertex most opposed to the slip, so the body veers and slides
   * farther; both errors shrink as m grows. */
  const double v0 = 2.0, mu = 0.5, dt = 0.01, deg = M_PI / 180.0;
  double dist;
  int steps;
  /* along t1: exact discrete answer (K = ceil(v0 / (mu g dt)) steps, d = dt sum (v0 - k a dt)) */
  double a = mu * 9.81, dref = 0.0;
  int K = (int)ceil(v0 / (a * dt));
  for (int k = 1; k < K; k++) dref += dt * (v0 - k * a * dt);
  double ang = slideDirection(4, 0.0, v0, mu, dt, &dist, &steps);
  CHECK_NEAR(dist, dref, 1e-12);
  CHECK_NEAR(dist, 0.3978, 5e-5);
  CHECK_NEAR(ang, 0.0, 1e-15);
  CHECK(steps == K);
  const double angles[2] = {22.5, 10.0};
  for (int ai = 0; ai < 2; ai++) {
    double prev_dev = INFINITY, prev_derr = INFINITY;
    for (int m = 4; m <= 16; m *= 2) {
      double th = angles[ai] * deg, dirn = slideDirection(m, th, v0, mu, dt, &dist, &steps);
      double dev = fabs(dirn - th) / deg, derr = fabs(dist - dref);
      printf("    slide at %4.1f deg, m = %2d: stops at %.4f m (circle cone %.4f) after %d steps, direction %.3f deg "
             "(deviation %.3f deg)\n",
             angles[ai], m, dist, dref, steps, dirn / deg, dev);
      /* a strict decrease, unless the angle lies on a direction or a bisector of two (then
       * symmetry keeps the direction: deviation 0 up to roundoff) */
      CHECK_MSG(dev < prev_dev || dev < 1e-9, "%.1f deg, m = %d: deviation %.4f deg, %.4f at m / 2", angles[ai], m,
                dev, prev_dev);
      CHECK_MSG(derr <= prev_derr + 1e-12, "%.1f deg, m = %d: distance error %.4g, %.4g at m / 2", angles[ai], m,
                derr, prev_derr);
      prev_dev = dev;
      prev_derr = derr;
    }
  }
}

/* ---- a stack of cubes (one step from rest) ---- */

/* G = J M^-1 J^T and g = J vf for J (3 nc x nv, row-major), diagonal M^-1 (nv) */
static int problemFromJacobian(cdContactProblem *p, int nc, int nv, const double *J, const double *minv,
                               const double *vf, double mu) {
  double *Gd = calloc((size_t)9 * nc * nc, sizeof *Gd), *g = calloc(3 * (size_t)nc, sizeof *g);
  double *mus = malloc((size_t)nc * sizeof *mus);
  if (!Gd || !g || !mus) return -1;
  for (int r = 0; r < 3 * nc; r++) {
    for (int a = 0; a < nv; a++) g[r] += J[(size_t)r * nv + a] * vf[a];
    for (int c = 0; c < 3 * nc; c++) {
      double s = 0.0;
      for (int a = 0; a < nv; a++) s += J[(size_t)r * nv + a] * minv[a] * J[(size_t)c * nv + a];
      Gd[(size_t)r * 3 * nc + c] = s;
    }
  }
  for (int i = 0; i < nc; i++) mus[i] = mu;
  int rc = problemFromDense(p, nc, Gd, g, mus);
  free(Gd), free(g), free(mus);
  return rc;
}

CD_TEST(lcpStackOfTenCubesIsHeldAtRestInOneStep) {
  /* ten unit cubes (edge 0.2) stacked on the ground, each starting at rest: after the free
   * step every cube falls at g dt; the LCP must give v+ = 0 for every body, i.e. interface
   * k (ground = 0) carries a total normal impulse (10 - k) m g dt. 40 contacts, n = 240 at
   * m = 4: a large, highly degenerate LCP (G has rank 60 of 120) */
  enum { NB = 10, NC = 4 * NB, NV = 6 * NB };
  const double h = 0.1, gdt = 9.81 * 0.01, inertia = 2.0 * h * h / 3.0;
  double *J = calloc((size_t)3 * NC * NV, sizeof *J), minv[NV], vf[NV];
  CHECK(J != NULL);
  if (!J) return;
  for (int b = 0; b < NB; b++)
    for (int t = 0; t < 3; t++) {
      minv[6 * b + t] = 1.0;
      minv[6 * b + 3 + t] = 1.0 / inertia;
      vf[6 * b + t] = t == 2 ? -gdt : 0.0;
      vf[6 * b + 3 + t] = 0.0;
    }
  const double dirs[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
  for (int k = 0; k < NB; k++) /* interface k: cube k on cube k - 1 (or the ground) */
    for (int c = 0; c < 4; c++) {
      int i = 4 * k + c;
      double pt[3] = {c & 1 ? h : -h, c & 2 ? h : -h, 2 * h * k}; /* cube k centred at z = h + 2hk */
      for (int side = 0; side < 2; side++) {
        int body = side ? k - 1 : k;
        if (body < 0) continue;
        double r[3] = {pt[0], pt[1], pt[2] - (h + 2 * h * body)}, rxd[3], sign = side ? -1.0 : 1.0;
        for (int row = 0; row < 3; row++) {
          cross(r, dirs[row], rxd);
          for (int t = 0; t < 3; t++) {
            J[(size_t)(3 * i + row) * NV + 6 * body + t] += sign * dirs[row][t];
            J[(size_t)(3 * i + row) * NV + 6 * body + 3 + t] += sign * rxd[t];
          }
        }
      }
    }
  /* lemke with friction; bgs without and with friction (see below) */
  const char *solvers[3] = {"lemke", "bgs", "bgs"};
  const double mus[3] = {0.5, 0.0, 0.5};
  for (int si = 0; si < 3; si++) {
    cdContactProblem p;
    CHECK(problemFromJacobian(&p, NC, NV, J, minv, vf, mus[si]) == 0);
    cdSolveStats st;
    cdBackendOptions opt = {.solver = solvers[si], .friction_dirs = 4, .tolerance = si ? 1e-10 : 0};
    char err[128];
    void *state;
    CHECK(cd_backendLcp.make(NULL, &opt, &state, err, sizeof err) == CD_OK);
    CHECK(cd_backendLcp.solve(state, &p, NULL, &st) == CD_OK);
    cd_backendLcp.free(state);
    double vmax = 0.0;
    for (int a = 0; a < NV; a++) {
      double v = vf[a];
      for (int r = 0; r < 3 * NC; r++) v += minv[a] * J[(size_t)r * NV + a] * p.lambda[r];
      vmax = fmax(vmax, fabs(v));
    }
    printf("    %s mu = %.1f: %d iterations, residual %.1e, converged %d, max |v+| %.1e\n", solvers[si], mus[si],
           st.iterations, st.residual, st.converged, vmax);
    CHECK(st.fallbacks == 0);
    CHECK(st.converged == (st.residual <= 1e-10)); /* ||b||_inf < 1: lemke's check is 1e-10 too */
    CHECK(st.converged);
    /* Gauss-Seidel sweeps alone carry the load down this stack by a fraction a sweep: from
     * cold, about 1000 sweeps without friction, and with friction not 1e-10 in 1000 (the
     * tangential impulses of the 40 redundant contacts drift in the null space of G). The
     * subspace steps (lcp_subspace.c) solve the stack's active set as a linear system, so a
     * few tens of sweeps must do */
    if (si) CHECK_MSG(st.iterations <= 100, "bgs mu = %.1f: %d sweeps", mus[si], st.iterations);
    /* the answer is as good as its residual says. The residual r is relative to ||g||_inf =
     * g dt (only the ground interface has a free approach), so every complementarity pair is
     * met to rho = r g dt in m/s (lcp.h). Every contact is loaded (lambda_n / meff >> rho), so
     * its normal velocity is within rho; its friction multiplier alpha is within rho (its
     * partner mu lambda_n - sum beta is large), and d . u_T + alpha >= -rho for d and -d
     * give |u_T . d| <= 2 rho. The relative twist of cube k on cube k - 1 then has, at the
     * interface's centre (the mean of its four corners, +-h apart), a velocity within
     * (2, 2, 1) rho and a rotation within (rho/h, rho/h, 2 rho/h); carried to a centre up to
     * 2 h NB above, the rotation adds 2 NB rho to the velocity. Summed over NB interfaces:
     * |v+| <= NB max(2 + 2 NB, 2 / h) rho. The total normal impulse at interface k is
     * m (NB - k) g dt plus m sum_{j >= k} v+_{j,z}: within NB times that (m = 1). The
     * 1e-14 is the roundoff of forming v+ (terms of size g dt, NB^2 of them). */
    const double rho = st.residual * gdt, vbound = NB * fmax(2.0 + 2.0 * NB, 2.0 / h) * rho + 1e-14;
    CHECK_MSG(vmax <= vbound, "%s: max |v+| %.3g, bound %.3g", solvers[si], vmax, vbound);
    for (int k = 0; k < NB; k++) {
      double ln = 0.0;
      for (int c = 0; c < 4; c++) ln += p.lambda[3 * (4 * k + c)];
      CHECK_NEAR(ln, (NB - k) * gdt, NB * vbound);
    }
    cd_contactProblemFree(&p);
  }
  free(J);
}

/* ---- the subspace step (lcp_subspace.c) ---- */

CD_TEST(lcpSubspaceStepOnTheSolutionsActiveSetLandsOnTheSolution) {
  /* 8 contacts on 8 bodies (J full row rank, G positive definite): Lemke's solution z*,
   * then each contact's impulse scaled by its own factor in [0.8, 1.2], which keeps its
   * active set (separated, sticking inside the polygon, sliding on a vertex or on an edge).
   * On the right active set the step is a nonsingular linear solve, so it must return z*
   * itself: the impulses to 1e-9 and an LCP residual at roundoff */
  g_rng = 77;
  int seen[4] = {0, 0, 0, 0}; /* separated, sticking, sliding on one direction, on two */
  int unsolved = 0, wrong = 0, repaired = 0;
  for (int trial = 0; trial < 24; trial++) {
    int m = trial % 2 ? 6 : 4, nc = 8, n = cd_lcpSize(nc, m);
    cdContactProblem p;
    CHECK(randomProblem(&p, nc, 8, 0.1, 0.6, NULL, NULL) == 0);
    double D[16], *A = malloc(((size_t)n * n + 4 * (size_t)n) * sizeof *A), *b = A + (size_t)n * n;
    double *zs = b + n, *zp = zs + n, *zo = zp + n, lam1[24], lam2[24], work[48];
    void *lw = malloc(cd_lemkeWorkSize(n)), *sw = malloc(cd_lcpSubspaceWorkSize(&p, m));
    CHECK(A && lw && sw);
    if (!A || !lw || !sw) return;
    cd_lcpDirections(m, D);
    cd_lcpBuildDense(&p, m, D, A, b);
    cdLemkeOptions lo = {.work = lw};
    if (cd_lemkeSolve(n, A, b, zs, &lo, NULL) != CD_LEMKE_SOLVED) {
      /* (no reference; counted below). Not a Lemke defect: trial 7 (m = 6) has no solution.
       * randomProblem puts contacts on random bodies, and there a body carries more
       * constraint rows than its 6 dofs: G = J M^-1 J^T has rank 22 of 24, and the random g
       * is not in range(J). Lemke's ray z^h = (lambda_n^h, alpha^h, 0) >= 0 (G v^h = 0 for
       * v^h = (lambda_n^h, D alpha^h)) has A z^h >= 0, z^h . A z^h = 0 and b . z^h = g . v^h
       * = -1.9 < 0. A is copositive but not copositive-plus (z = (0, 0, beta): z^T A z = 0,
       * (A + A^T) z = (mu beta, 0, 0)), so the ray alone proves nothing, but a mixed-integer
       * check finds no solution with z, w <= 1e4, and 2000 Lemke runs from random starting
       * bases (covering vectors B 1) all end on rays. A physical step's g = J v_f (+ phi / dt
       * >= 0 on lambda_n) has g . v^h >= 0, and Anitescu-Potra's solvability holds. */
      unsolved++;
      free(A), free(lw), free(sw);
      cd_contactProblemFree(&p);
      continue;
    }
    memcpy(zp, zs, (size_t)n * sizeof *zp);
    for (int i = 0; i < nc; i++) {
      double f = rndIn(0.8, 1.2), sum = 0.0;
      int npos = 0;
      zp[i] *= f;
      for (int l = 0; l < m; l++) {
        zp[nc + m * i + l] *= f;
        sum += zs[nc + m * i + l];
        npos += zs[nc + m * i + l] > 0.0;
      }
      int kind = !(zs[i] > 0.0) ? 0 : sum < p.mu[i] * zs[i] * (1.0 - 1e-9) || !(zs[nc + nc * m + i] > 0.0) ? 1 : npos == 1 ? 2 : 3;
      seen[kind]++;
    }
    cdLcpSubspaceStats st;
    cd_lcpSubspaceStep(&p, m, D, zp, zo, 200, 1e-14, sw, &st);
    double res = cd_lcpResidual(&p, m, D, zo, work), dl = 0.0;
    cd_lcpLambdaFromZ(nc, m, D, zs, lam1);
    cd_lcpLambdaFromZ(nc, m, D, zo, lam2);
    for (int t = 0; t < 3 * nc; t++) dl = fmax(dl, fabs(lam1[t] - lam2[t]));
    CHECK_MSG(res <= 1e-10 && dl <= 1e-9, "trial %d (m = %d): residual %.3g, impulses off by %.3g after %d iterations",
              trial, m, res, dl, st.iterations);
    CHECK_NEAR(st.residual, res, 1e-15);
    CHECK(st.passes == 1); /* nothing to update on the right active set */
    /* a wrong active set: one sliding contact made to look sticking (friction halved inside
     * the polygon, no slip). The passes should move it back to sliding and land on z* */
    int moved = -1;
    for (int i = 0; i < nc && moved < 0; i++) {
      double sum = 0.0;
      for (int l = 0; l < m; l++) sum += zs[nc + m * i + l];
      if (zs[i] > 0.0 && zs[nc + nc * m + i] > 0.0 && sum >= p.mu[i] * zs[i] * (1.0 - 1e-9)) moved = i;
    }
    if (moved >= 0) {
      memcpy(zp, zs, (size_t)n * sizeof *zp);
      for (int l = 0; l < m; l++) zp[nc + m * moved + l] *= 0.5;
      zp[nc + nc * m + moved] = 0.0;
      cd_lcpSubspaceStep(&p, m, D, zp, zo, 200, 1e-14, sw, &st);
      cd_lcpLambdaFromZ(nc, m, D, zo, lam2);
      dl = 0.0;
      for (int t = 0; t < 3 * nc; t++) dl = fmax(dl, fabs(lam1[t] - lam2[t]));
      wrong++;
      repaired += st.residual <= 1e-10 && dl <= 1e-9;
    }
    free(A), free(lw), free(sw);
    cd_contactProblemFree(&p);
  }
  printf("    contacts: %d separated, %d sticking, %d sliding on a vertex, %d on an edge of the polygon; %d of 24 "
         "problems without a Lemke reference\n", seen[0], seen[1], seen[2], seen[3], unsolved);
  CHECK(unsolved <= 2);
  for (int k = 0; k < 4; k++) CHECK_MSG(seen[k] > 0, "no contact of kind %d among the trials", k);
  printf("    a sliding contact set sticking: the passes repaired %d of %d\n", repaired, wrong);
  /* a primal-dual active-set method is not globally convergent on this non-symmetric
   * problem, so not every start is repaired; the caller judges each candidate anyway */
  CHECK(wrong > 0 && repaired >= 0.9 * wrong);
}

/* ---- the closed-form block solve ---- */

/* W = J M^-1 J^T (3x3 row-major) of one contact on a random body: random mass, inverse
 * inertia and lever arm (positive definite) */
static void randomContactBlock(double *W) {
  double Mi[6][6] = {{0}}, J[3][6], B[9], r[3];
  double mass = rndIn(0.5, 2.0);
  for (int a = 0; a < 3; a++) Mi[a][a] = 1.0 / mass;
  for (int a = 0; a < 9; a++) B[a] = rndIn(-1, 1);
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      double s = a == b ? 0.1 : 0.0;
      for (int q = 0; q < 3; q++) s += B[3 * a + q] * B[3 * b + q];
      Mi[3 + a][3 + b] = s;
    }
  for (int a = 0; a < 3; a++) r[a] = rndIn(-0.3, 0.3);
  for (int row = 0; row < 3; row++) {
    double d[3] = {row == 0, row == 1, row == 2};
    for (int q = 0; q < 3; q++) J[row][q] = d[q];
    cross(r, d, &J[row][3]);
  }
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      double s = 0.0;
      for (int x = 0; x < 6; x++)
        for (int y = 0; y < 6; y++) s += J[a][x] * Mi[x][y] * J[b][y];
      W[3 * a + b] = s;
    }
}

/* the block LCP of cd_bgsBlockSolve in its unscaled units (wi = vref = 1): A (k x k
 * column-major, k = m + 2, zeroed here) and q (k) */
static void blockLcp(const double *W, double mu, int m, const double *D, const double *c, double *A, double *q) {
  int k = m + 2;
  memset(A, 0, (size_t)k * (size_t)k * sizeof *A);
  cd_lcpCouplingBlock(W, m, D, A, k);
  for (int l = 0; l < m; l++) {
    A[(1 + l) + (m + 1) * k] = 1.0;
    A[(m + 1) + (1 + l) * k] = -1.0;
  }
  A[m + 1] = mu;
  q[0] = c[0];
  for (int l = 0; l < m; l++) q[1 + l] = D[2 * l] * c[1] + D[2 * l + 1] * c[2];
  q[m + 1] = 0.0;
}

CD_TEST(lcpBgsBlockSolveMatchesLemkeOnRandomContactBlocks) {
  /* 6000 blocks W = J M^-1 J^T of one contact on a random body (random mass, inverse
   * inertia and lever arm), mu in [0, 1.2] (every 7th frictionless), random c (every 11th
   * with c_T = 0, a degenerate tie between directions), m = 4 and 8: the closed form must
   * solve each to Lemke's check and give Lemke's impulses (unique: W is positive definite
   * and the block is a single contact) */
  g_rng = 77;
  int direct = 0, total = 0;
  for (int m = 4; m <= 8; m += 4) {
    int k = m + 2;
    double D[16];
    cd_lcpDirections(m, D);
    void *bw = cd_malloc(cd_bgsBlockWorkSize(m)), *lw = cd_malloc(cd_lemkeWorkSize(k));
    CHECK(bw && lw);
    if (!bw || !lw) return;
    for (int t = 0; t < 3000; t++) {
      double W[9];
      randomContactBlock(W);
      double mu = t % 7 == 0 ? 0.0 : rndIn(0.05, 1.2), c[3] = {rndIn(-1, 0.5), rndIn(-1, 1), rndIn(-1, 1)};
      if (t % 11 == 0) c[1] = c[2] = 0.0;
      double z[10] = {0}, zl[10], A[100], q[10];
      int st = cd_bgsBlockSolve(W, mu, m, D, c, 1.0, 1.0, z, bw); /* (the unscaled units) */
      direct += st == CD_BGS_BLOCK_DIRECT;
      total++;
      blockLcp(W, mu, m, D, c, A, q);
      cdLemkeOptions lo = {.work = lw};
      CHECK(cd_lemkeSolve(k, A, q, zl, &lo, NULL) == CD_LEMKE_SOLVED);
      double qn = 0.0;
      for (int l = 0; l < k; l++) qn = fmax(qn, fabs(q[l]));
      double res = cd_lcpResidualDense(k, A, q, z);
      CHECK_MSG(st != CD_BGS_BLOCK_FAILED && res <= 1e-10 * fmax(1.0, qn), "m %d block %d: status %d residual %.3g", m,
                t, st, res);
      double l1[3], l2[3], dl = 0.0;
      cd_lcpLambdaFromZ(1, m, D, z, l1);
      cd_lcpLambdaFromZ(1, m, D, zl, l2);
      for (int a = 0; a < 3; a++) dl = fmax(dl, fabs(l1[a] - l2[a]));
      CHECK_MSG(dl <= 1e-9 * fmax(1.0, fabs(l2[0])), "m %d block %d: impulses differ by %.3g", m, t, dl);
    }
    cd_free(bw), cd_free(lw);
  }
  printf("    %d of %d blocks by a closed form\n", direct, total);
  /* the closed forms cover the generic block: Lemke is the exception */
  CHECK(direct >= total - total / 100);
}

CD_TEST(lcpBgsBlockSolveAnswerDoesNotDependOnTheStart) {
  /* cd_bgsBlockSolve tries the active set its start z shows first (sticking, sliding at a
   * vertex or along an edge, separated): 3000 random blocks (as above, m = 4 and 8), each
   * solved from zero, from its own answer and from a sticking, a vertex and an edge start
   * in random directions; every start must give the answer from zero (unique: W is positive
   * definite) to the block tolerance */
  g_rng = 91;
  for (int m = 4; m <= 8; m += 4) {
    int k = m + 2;
    double D[16];
    cd_lcpDirections(m, D);
    void *bw = cd_malloc(cd_bgsBlockWorkSize(m));
    CHECK(bw != NULL);
    if (!bw) return;
    for (int t = 0; t < 1500; t++) {
      double W[9];
      randomContactBlock(W);
      double mu = t % 7 == 0 ? 0.0 : rndIn(0.05, 1.2), c[3] = {rndIn(-1, 0.5), rndIn(-1, 1), rndIn(-1, 1)};
      double z0[10] = {0};
      CHECK(cd_bgsBlockSolve(W, mu, m, D, c, 1.0, 1.0, z0, bw) != CD_BGS_BLOCK_FAILED);
      double l0[3];
      cd_lcpLambdaFromZ(1, m, D, z0, l0);
      for (int start = 0; start < 4; start++) {
        double z[10] = {0};
        int a = (int)(rndIn(0, m - 1e-9));
        if (start == 0) memcpy(z, z0, (size_t)k * sizeof *z);
        if (start >= 1) z[0] = rndIn(0.1, 1.0);                     /* pressing */
        if (start == 1) z[1 + a] = rndIn(0.0, 0.5) * mu * z[0];   /* sticking: beta = 0 */
        if (start == 2) z[1 + a] = mu * z[0], z[m + 1] = 0.3;     /* at vertex a */
        if (start == 3) z[1 + a] = z[1 + (a + 1) % m] = 0.5 * mu * z[0], z[m + 1] = 0.3; /* edge */
        int st = cd_bgsBlockSolve(W, mu, m, D, c, 1.0, 1.0, z, bw);
        double l1[3], dl = 0.0;
        cd_lcpLambdaFromZ(1, m, D, z, l1);
        for (int e = 0; e < 3; e++) dl = fmax(dl, fabs(l1[e] - l0[e]));
        CHECK_MSG(st != CD_BGS_BLOCK_FAILED && dl <= 1e-9 * fmax(1.0, fabs(l0[0])),
                  "m %d block %d start %d: status %d, impulses differ by %.3g", m, t, start, st, dl);
      }
    }
    cd_free(bw);
  }
}

CD_TEST(lcpBgsBlockSolveAxesInstanceMatchesAnyDirections) {
  /* lcp_bgs.c solves the blocks of the default directions (m = 4, the unit axes exactly) by
   * an instance of its own (the products with D taken as components, the sticking candidate
   * accepted by its friction pair under a rounding bound); D with its zeros written -0.0 is
   * the same polygon but not the axes bit for bit, so it takes the instance of any m. 4000
   * random blocks (as above; every 5th W nearly singular, K far over the bound, and c_T = 0 on
   * every 11th), each from zero and from a sticking, a vertex and an edge start: the same
   * status and the same z (== : the instances may differ in the sign of a zero) */
  g_rng = 131;
  double D[8], Dz[8];
  cd_lcpDirections(4, D);
  for (int t = 0; t < 8; t++) Dz[t] = D[t] == 0.0 ? -0.0 : D[t];
  void *bw = cd_malloc(cd_bgsBlockWorkSize(4));
  CHECK(bw != NULL);
  if (!bw) return;
  int differ = 0;
  for (int t = 0; t < 4000; t++) {
    double W[9];
    randomContactBlock(W);
    if (t % 5 == 0) { /* W + 1e6 v v^T, v a random unit vector: K ~ 1e12 */
      double v[3] = {rndIn(-1, 1), rndIn(-1, 1), rndIn(-1, 1)}, vn = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
      for (int e = 0; e < 9; e++) W[e] += 1e6 * v[e / 3] * v[e % 3] / (vn * vn);
    }
    double mu = t % 7 == 0 ? 0.0 : rndIn(0.05, 1.2), c[3] = {rndIn(-1, 0.5), rndIn(-1, 1), rndIn(-1, 1)};
    if (t % 11 == 0) c[1] = c[2] = 0.0;
    for (int start = 0; start < 4; start++) {
      double z[6] = {0}, zg[6];
      int a = (int)rndIn(0, 4 - 1e-9);
      if (start >= 1) z[0] = rndIn(0.1, 1.0);
      if (start == 1) z[1 + a] = rndIn(0.0, 0.5) * mu * z[0];
      if (start == 2) z[1 + a] = mu * z[0], z[5] = 0.3;
      if (start == 3) z[1 + a] = z[1 + (a + 1) % 4] = 0.5 * mu * z[0], z[5] = 0.3;
      memcpy(zg, z, sizeof z);
      int st = cd_bgsBlockSolve(W, mu, 4, D, c, 1.0, 1.0, z, bw);
      int sg = cd_bgsBlockSolve(W, mu, 4, Dz, c, 1.0, 1.0, zg, bw);
      int same = st == sg;
      for (int l = 0; l < 6; l++) same &= z[l] == zg[l];
      differ += !same;
      CHECK_MSG(same, "block %d start %d: status %d / %d, z0 %.17g / %.17g", t, start, st, sg, z[0], zg[0]);
    }
  }
  CHECK(differ == 0);
  cd_free(bw);
}

CD_TEST(lcpBgsBlockSolveSolvesASingularBlock) {
  /* W of rank 1 (only the normal row: a contact whose tangential motion costs nothing),
   * so the sticking 3x3 solve is undefined: sliding is the answer */
  const double W[9] = {1, 0, 0, 0, 0, 0, 0, 0, 0}, c[3] = {-0.5, 0.3, 0.0}, mu = 0.5;
  double D[8], z[6] = {0}, A[36], q[6];
  cd_lcpDirections(4, D);
  void *bw = cd_malloc(cd_bgsBlockWorkSize(4));
  CHECK(bw != NULL);
  if (!bw) return;
  int st = cd_bgsBlockSolve(W, mu, 4, D, c, 1.0, 1.0, z, bw);
  blockLcp(W, mu, 4, D, c, A, q);
  CHECK_MSG(st != CD_BGS_BLOCK_FAILED, "status %d", st);
  CHECK(cd_lcpResidualDense(6, A, q, z) <= 1e-10);
  /* u_n = 0 needs lambda_n = 0.5; the slip 0.3 along t1 is opposed by d_2 = -t1 at mu lambda_n */
  CHECK_NEAR(z[0], 0.5, 1e-12);
  CHECK_NEAR(z[3], 0.25, 1e-12);
  cd_free(bw);
}

CD_TEST(lcpBgsBlockSolveTakesAClosedFormOnlyAtItsAcceptanceOnDegenerateBlocks) {
  /* the block solve keeps per contact what does not change in a solve (W's adjugate and its
   * singular test, lcp_bgs.c blockRecord), has an instance of its own for m = 4, and takes a
   * closed form only when its block residual is at most 1e-13 max(1, ||q||) (BLOCK_ACCEPT),
   * else Lemke on the block. 14,400 blocks, m = 4, 6 and 8: W positive definite, of rank 2
   * (no twist), of rank 1, with free tangential motion (W_nn alone), nearly singular (an
   * eigenvalue 1e-11 .. 1e-14 of the others, both sides of the adjugate's 1e-12 test),
   * strongly coupled (B B^T + 0.01 I); c random, with c_T = 0, along a direction, along a
   * bisector, with c_n = 0, scaled by 1e-9 and 1e3 (below and far above vref = 1); mu 0,
   * random and 3; each from zero and from a sticking, a vertex, an edge and a separated start.
   * A closed form must be taken only within its acceptance (up to the roundoff of the dense
   * residual's sums); every block that Lemke solves on its dense LCP (residual <= 1e-10
   * max(1, ||q||); not every rank-deficient or nearly singular one has a solution in floating
   * point) must be solved to that residual, and one of a contact on a body (unique impulses,
   * as above) from every start to the impulses from zero. */
  g_rng = 4242;
  int count[3] = {0, 0, 0}, solvable = 0, total = 0, unique = 0, unique_direct = 0;
  for (int m = 4; m <= 8; m += 2) {
    int k = m + 2;
    double D[16];
    cd_lcpDirections(m, D);
    void *bw = cd_malloc(cd_bgsBlockWorkSize(m)), *lw = cd_malloc(cd_lemkeWorkSize(k));
    CHECK(bw && lw);
    if (!bw || !lw) return;
    for (int t = 0; t < 960; t++) {
      double W[9], a[3], b[3];
      int kind = t % 8;
      randomContactBlock(W);
      for (int e = 0; e < 3; e++) a[e] = rndIn(-1, 1), b[e] = rndIn(-1, 1);
      if (kind == 1 || kind == 2 || kind == 4) { /* rank 2, rank 1, nearly singular */
        double eps = kind == 4 ? pow(10.0, -rndIn(11, 14)) : 0.0;
        for (int r = 0; r < 3; r++)
          for (int q = 0; q < 3; q++)
            W[3 * r + q] = a[r] * a[q] + (kind == 2 ? 0.0 : b[r] * b[q]) + (r == q ? eps : 0.0);
      }
      if (kind == 3) /* free tangential motion */
        for (int e = 1; e < 9; e++) W[e] = 0.0;
      if (kind == 5) { /* strongly coupled */
        double B[9];
        for (int e = 0; e < 9; e++) B[e] = rndIn(-1, 1);
        for (int r = 0; r < 3; r++)
          for (int q = 0; q < 3; q++)
            W[3 * r + q] = B[3 * r] * B[3 * q] + B[3 * r + 1] * B[3 * q + 1] + B[3 * r + 2] * B[3 * q + 2] +
                           (r == q ? 0.01 : 0.0);
      }
      int pd = kind == 0 || kind >= 6; /* a contact on one body: unique impulses */
      int ck = (t / 8) % 5, dk = (int)rndIn(0, m - 1e-9);
      double mu = t % 3 == 0 ? 0.0 : t % 3 == 1 ? rndIn(0.05, 1.2) : 3.0;
      double c[3] = {rndIn(-1, 0.5), rndIn(-1, 1), rndIn(-1, 1)};
      double sc = rndIn(0.1, 2.0);
      if (ck == 1) c[1] = c[2] = 0.0;
      if (ck == 2) c[1] = sc * D[2 * dk], c[2] = sc * D[2 * dk + 1];
      int dn = (dk + 1) % m;
      if (ck == 3) c[1] = sc * (D[2 * dk] + D[2 * dn]), c[2] = sc * (D[2 * dk + 1] + D[2 * dn + 1]);
      if (ck == 4) c[0] = 0.0;
      for (int e = 0; e < 3 && kind >= 6; e++) c[e] *= kind == 6 ? 1e-9 : 1e3; /* below and far above vref */
      double A[100], q[10], zl[10], qn = 0.0, l0[3];
      blockLcp(W, mu, m, D, c, A, q);
      for (int l = 0; l < k; l++) qn = fmax(qn, fabs(q[l]));
      cdLemkeOptions lo = {.work = lw};
      int lst = cd_lemkeSolve(k, A, q, zl, &lo, NULL);
      int ok = lst == CD_LEMKE_SOLVED && cd_lcpResidualDense(k, A, q, zl) <= 1e-10 * fmax(1.0, qn);
      CHECK_MSG(ok || !pd, "m %d block %d (kind %d): Lemke did not solve a positive definite block", m, t, kind);
      solvable += ok, total++;
      for (int start = 0; start < 5; start++) {
        double z[10] = {0};
        int d = (int)rndIn(0, m - 1e-9);
        if (start >= 1 && start <= 3) z[0] = rndIn(0.1, 1.0);
        if (start == 1) z[1 + d] = rndIn(0.0, 0.5) * mu * z[0];
        if (start == 2) z[1 + d] = mu * z[0], z[m + 1] = 0.3;
        if (start == 3) z[1 + d] = z[1 + (d + 1) % m] = 0.5 * mu * z[0], z[m + 1] = 0.3;
        if (start == 4) z[m + 1] = 0.3;
        int st = cd_bgsBlockSolve(W, mu, m, D, c, 1.0, 1.0, z, bw);
        double res = cd_lcpResidualDense(k, A, q, z), l1[3], dl = 0.0, sum = 0.0;
        for (int i = 0; i < k; i++) { /* the roundoff of the dense residual's sums */
          double s = fabs(q[i]);
          for (int j = 0; j < k; j++) s += fabs(A[i + j * k] * z[j]);
          sum = fmax(sum, s);
        }
        count[st]++;
        unique += pd, unique_direct += pd && st == CD_BGS_BLOCK_DIRECT;
        CHECK_MSG(!ok || (st != CD_BGS_BLOCK_FAILED && res <= 1e-10 * fmax(1.0, qn)),
                  "m %d block %d (kind %d, c %d) start %d: status %d residual %.3g", m, t, kind, ck, start, st, res);
        CHECK_MSG(st != CD_BGS_BLOCK_DIRECT || res <= 1e-13 * fmax(1.0, qn) + 4 * k * DBL_EPSILON * sum,
                  "m %d block %d (kind %d, c %d) start %d: a closed form taken at residual %.3g", m, t, kind, ck, start,
                  res);
        cd_lcpLambdaFromZ(1, m, D, z, l1);
        if (start == 0) memcpy(l0, l1, sizeof l0);
        for (int e = 0; e < 3; e++) dl = fmax(dl, fabs(l1[e] - l0[e]));
        CHECK_MSG(!pd || dl <= 1e-9 * fmax(1.0, fabs(l0[0])),
                  "m %d block %d (kind %d) start %d: impulses differ by %.3g", m, t, kind, start, dl);
      }
    }
    cd_free(bw), cd_free(lw);
  }
  printf("    %d of %d blocks solved by Lemke on the dense block; block solves: %d closed forms, %d by Lemke, %d "
         "failed\n", solvable, total, count[0], count[1], count[2]);
  CHECK(solvable >= total - total / 20);
  /* and the closed forms solve the generic block (Lemke is the exception) */
  printf("    %d of %d solves of a contact on a body by a closed form\n", unique_direct, unique);
  CHECK(unique_direct >= unique - unique / 100);
}

CD_TEST(lcpBgsTriesSolveAtMostTheirShareOfActiveSets) {
  /* an active-set try inside bgs solves at most CD_BGS_TRY_SETS active sets (lcp_bgs.c): on
   * the 1000-sphere pile (S2 10, 150 steps) 121 of 252 tries failed and took 1,351 of the
   * 1,929 active sets (14 at the old limit of 20), while 103 of the 131 that solved needed at
   * most 6. On random coupled problems (100 contacts, 40 bodies) solved by bgs with the
   * tries from zero, no try solves more than its share (without the limit, the fifth problem's
   * 4 tries solved 29 active sets), and every solve meets the tolerance */
  const int m = 4, nc = 100, n = cd_lcpSize(nc, m), trials = 5;
  int tries = 0, sets = 0, over = 0;
  g_rng = 6061;
  for (int trial = 0; trial < trials; trial++) {
    cdContactProblem p;
    CHECK(randomProblem(&p, nc, 40, 0.3, 0.8, NULL, NULL) == 0);
    double D[8], *z = calloc((size_t)n, sizeof *z), *work = calloc(6 * (size_t)nc, sizeof *work);
    cd_lcpDirections(m, D);
    cdLcpNewton *nw = cd_lcpNewtonMake();
    cdBgsOptions bo = {.tolerance = 1e-10, .newton = nw};
    cdBgsStats bs;
    CHECK(nw && z && work && cd_bgsSolve(&p, m, D, z, &bo, &bs) == CD_OK && bs.converged);
    tries += bs.newton_tries, sets += bs.newton_sets;
    over += bs.newton_sets > CD_BGS_TRY_SETS * bs.newton_tries;
    if (z && work) CHECK_MSG(cd_lcpResidual(&p, m, D, z, work) <= 1e-10, "trial %d: residual %.3g", trial,
                             cd_lcpResidual(&p, m, D, z, work));
    cd_lcpNewtonFree(nw);
    free(z), free(work);
    cd_contactProblemFree(&p);
  }
  printf("    %d problems: %d tries, %d active sets, %d solves over %d sets a try\n", trials, tries, sets, over,
         CD_BGS_TRY_SETS);
  CHECK(tries >= trials && over == 0);
}
