/* test_cone.c: projections onto the Coulomb cone and its dual, and the shared CCP residual
 * (solvers/cone.h), against the closed forms of NUMERICS.md "Cones". */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "cone.h"
#include "problem.h"
#include "test.h"

static unsigned long coneRng = 12345u;
static double coneRand(void) { /* uniform in [-1, 1), deterministic */
  coneRng = coneRng * 6364136223846793005ul + 1442695040888963407ul;
  return (double)(coneRng >> 11) / 4503599627370496.0 - 1.0;
}

static int inK(double mu, const double x[3], double tol) { return hypot(x[1], x[2]) <= mu * x[0] + tol; }
static int inKstar(double mu, const double x[3], double tol) { return mu * hypot(x[1], x[2]) <= x[0] + tol; }

CD_TEST(coneProjectionKeepsInsidePoints) {
  double x[3] = {1.0, 0.3, -0.2}, y[3];
  cd_coneProject(0.5, x, y);
  CHECK(y[0] == x[0] && y[1] == x[1] && y[2] == x[2]);
}

CD_TEST(coneProjectionSendsPolarPointsToZero) {
  /* mu s <= -n: the point lies in -K*, whose projection is the apex */
  double x[3] = {-1.0, 0.6, 0.8}, y[3];
  cd_coneProject(0.5, x, y);
  CHECK(y[0] == 0.0 && y[1] == 0.0 && y[2] == 0.0);
}

CD_TEST(coneProjectionOnBoundaryMatchesClosedForm) {
  /* (n, t) = (1, (1.2, 1.6)), s = 2, mu = 0.5: n' = (1 + 1) / 1.25 = 1.6, t' = 0.5 1.6 t / 2 */
  double x[3] = {1.0, 1.2, 1.6}, y[3];
  cd_coneProject(0.5, x, y);
  CHECK_NEAR(y[0], 1.6, 1e-15);
  CHECK_NEAR(y[1], 0.48, 1e-15);
  CHECK_NEAR(y[2], 0.64, 1e-15);
  CHECK_NEAR(hypot(y[1], y[2]), 0.5 * y[0], 1e-15);
}

CD_TEST(coneProjectionWithZeroFrictionIsTheRay) {
  double a[3] = {0.7, 0.3, -2.0}, b[3] = {-0.7, 0.3, 0.0}, c[3] = {0.0, 0.0, 0.0}, y[3];
  /* a pull with no tangential part: s = 0 <= mu n = 0 must not count as inside */
  double pull[3] = {-0.7, 0.0, 0.0};
  cd_coneProject(0.0, pull, y);
  CHECK(y[0] == 0.0 && y[1] == 0.0 && y[2] == 0.0);
  cd_coneProjectDual(0.0, pull, y); /* and the dual projection of a pull is 0 on the half-space's edge */
  CHECK(y[0] == 0.0 && y[1] == 0.0 && y[2] == 0.0);
  cd_coneProject(0.0, a, y);
  CHECK(y[0] == 0.7 && y[1] == 0.0 && y[2] == 0.0);
  cd_coneProject(0.0, b, y);
  CHECK(y[0] == 0.0 && y[1] == 0.0 && y[2] == 0.0);
  cd_coneProject(0.0, c, y);
  CHECK(y[0] == 0.0 && y[1] == 0.0 && y[2] == 0.0);
  cd_coneProjectDual(0.0, b, y); /* K*_0 is the half-space y_N >= 0 */
  CHECK(y[0] == 0.0 && y[1] == 0.3 && y[2] == 0.0);
}

CD_TEST(coneProjectionIsIdempotentAndOptimal) {
  /* Proj is the Euclidean projection: Proj(Proj x) = Proj x, x - Proj x ⟂ Proj x,
   * -(x - Proj x) ∈ K*, and no sampled point of K is closer to x */
  int bad = 0;
  for (int trial = 0; trial < 2000; trial++) {
    double mu = 1.5 * (coneRand() + 1.0), x[3] = {2 * coneRand(), 2 * coneRand(), 2 * coneRand()}, y[3], yy[3];
    cd_coneProject(mu, x, y);
    cd_coneProject(mu, y, yy);
    double r[3] = {y[0] - x[0], y[1] - x[1], y[2] - x[2]}, dist = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    bad += !inK(mu, y, 1e-12);
    bad += fabs(yy[0] - y[0]) + fabs(yy[1] - y[1]) + fabs(yy[2] - y[2]) > 1e-13;
    bad += fabs(r[0] * y[0] + r[1] * y[1] + r[2] * y[2]) > 1e-12;
    bad += !inKstar(mu, r, 1e-12);
    for (int s = 0; s < 20; s++) {
      double n = 2.0 * (coneRand() + 1.0), ang = 3.14159 * coneRand(), rad = mu * n * 0.5 * (coneRand() + 1.0);
      double q[3] = {n, rad * cos(ang), rad * sin(ang)};
      double dq = sqrt((q[0] - x[0]) * (q[0] - x[0]) + (q[1] - x[1]) * (q[1] - x[1]) + (q[2] - x[2]) * (q[2] - x[2]));
      bad += dq < dist - 1e-12;
    }
  }
  CHECK_MSG(bad == 0, "%d projection property violations", bad);
}

CD_TEST(dualConeProjectionSatisfiesMoreau) {
  /* x = Proj_K*(x) + Proj_{-K}(x) with the two parts orthogonal; Proj_K* idempotent */
  int bad = 0;
  for (int trial = 0; trial < 2000; trial++) {
    double mu = 1.5 * (coneRand() + 1.0), x[3] = {2 * coneRand(), 2 * coneRand(), 2 * coneRand()}, y[3], yy[3];
    cd_coneProjectDual(mu, x, y);
    cd_coneProjectDual(mu, y, yy);
    double r[3] = {x[0] - y[0], x[1] - y[1], x[2] - y[2]}, mr[3] = {-r[0], -r[1], -r[2]};
    bad += !inKstar(mu, y, 1e-12);
    bad += !inK(mu, mr, 1e-12);
    bad += fabs(r[0] * y[0] + r[1] * y[1] + r[2] * y[2]) > 1e-12;
    bad += fabs(yy[0] - y[0]) + fabs(yy[1] - y[1]) + fabs(yy[2] - y[2]) > 1e-13;
  }
  CHECK_MSG(bad == 0, "%d dual projection property violations", bad);
}

/* a one-block problem with G = I and g = -x: its solution is lambda = Proj_K(x) */
static int oneBlock(cdContactProblem *p, double mu, const double x[3]) {
  memset(p, 0, sizeof *p);
  if (cd_blockMatrixAlloc(&p->G, 1, 1) != 0) return -1;
  p->ncon = 1;
  p->G.rowptr[1] = 1;
  p->G.val[0] = p->G.val[4] = p->G.val[8] = 1.0;
  p->g = cd_calloc(3, sizeof(double));
  p->mu = cd_calloc(1, sizeof(double));
  p->lambda = cd_calloc(3, sizeof(double));
  if (!p->g || !p->mu || !p->lambda) return -1;
  p->mu[0] = mu;
  for (int k = 0; k < 3; k++) p->g[k] = -x[k];
  return 0;
}

CD_TEST(residualVanishesAtTheProjectionAndOnlyThere) {
  int bad = 0;
  for (int trial = 0; trial < 500; trial++) {
    double mu = 1.5 * (coneRand() + 1.0), x[3] = {2 * coneRand(), 2 * coneRand(), 2 * coneRand()};
    cdContactProblem p;
    CHECK(oneBlock(&p, mu, x) == 0);
    double cb[3];
    cdConeResidual parts;
    cd_coneProject(mu, x, p.lambda);
    double r = cd_coneResidualOf(&p, p.lambda, cb, &parts);
    bad += r > 1e-15 || parts.cone > 1e-15 || parts.dual > 1e-14 || parts.comp > 1e-14;
    double ginf = fmax(fabs(x[0]), fmax(fabs(x[1]), fabs(x[2])));
    bad += fabs(parts.scale - (ginf > 0 ? ginf : 1.0)) > 1e-15;
    /* with G = I, moving lambda off the solution by 0.1 along l_N moves c̄ by the same, so
     * lambda - Proj(lambda - c̄) = 0.1 e_N exactly */
    p.lambda[0] += 0.1;
    cd_coneResidualOf(&p, p.lambda, cb, &parts);
    bad += fabs(parts.natural - 0.1) > 1e-13;
    cd_contactProblemFree(&p);
  }
  CHECK_MSG(bad == 0, "%d residual property violations", bad);
}

CD_TEST(residualReportsEachPartAndRejectsNaN) {
  cdContactProblem p;
  double x[3] = {0, 0, 0};
  CHECK(oneBlock(&p, 0.5, x) == 0);
  cdConeResidual parts;
  /* lambda = (1, 1, 0) is outside K_0.5 by (1 - 0.5) / sqrt(1.25) along the boundary normal;
   * c̄ = lambda (g = 0) is inside K*; lambda^T c̄ = 2 */
  double lam[3] = {1.0, 1.0, 0.0}, cb[3];
  cd_coneResidualOf(&p, lam, cb, &parts);
  CHECK_NEAR(parts.cone, 0.5 / sqrt(1.25), 1e-15);
  CHECK_NEAR(parts.dual, 0.0, 1e-15);
  CHECK_NEAR(parts.comp, 2.0, 1e-15);
  CHECK_NEAR(parts.value, parts.natural / 1.0, 1e-15);
  lam[1] = NAN;
  CHECK(isinf(cd_coneResidualOf(&p, lam, cb, &parts)));
  cd_contactProblemFree(&p);
}

CD_TEST(projectionJacobianIsTheDerivativeAndItsRootSquaresToIt) {
  /* cd_coneProjectJacobian against central differences of the projection (steps 1e-6 of |z|,
   * away from the region borders, where the projection is smooth: errors O(h^2) = 1e-12 of
   * the derivative's scale), symmetric, with eigenvalues in [0, 1], its root squaring to it,
   * and its projection the same as cd_coneProject's */
  unsigned long s = 12345;
  const double mus[3] = {0.0, 0.3, 1.2};
  int bad = 0, tried = 0, byRegion[3] = {0, 0, 0};
  for (int trial = 0; trial < 3000; trial++) {
    double mu = mus[trial % 3], z[3];
    for (int k = 0; k < 3; k++) {
      s = s * 6364136223846793005ul + 1442695040888963407ul;
      z[k] = (double)(s >> 11) / 4503599627370496.0 - 1.0;
    }
    double y[3], D[9], R[9], yp[3];
    int region = cd_coneProjectJacobian(mu, z, y, D, R);
    cd_coneProject(mu, z, yp);
    for (int k = 0; k < 3; k++) bad += fabs(y[k] - yp[k]) > 1e-15;
    /* distance to the region borders: the ray of K (s = mu n), of the polar cone (mu s = -n) */
    double n = z[0], t = hypot(z[1], z[2]), nz = sqrt(z[0] * z[0] + t * t);
    double d1 = fabs(t - mu * n) / sqrt(1.0 + mu * mu), d2 = fabs(mu * t + n) / sqrt(1.0 + mu * mu);
    if (fmin(d1, d2) < 1e-3 * nz || (mu == 0.0 && fabs(n) < 1e-3)) continue;
    tried++;
    byRegion[region]++;
    const double h = 1e-6 * nz;
    for (int c = 0; c < 3; c++) {
      double zp[3] = {z[0], z[1], z[2]}, zm[3] = {z[0], z[1], z[2]}, ya[3], yb[3];
      zp[c] += h;
      zm[c] -= h;
      cd_coneProject(mu, zp, ya);
      cd_coneProject(mu, zm, yb);
      for (int r = 0; r < 3; r++) bad += fabs((ya[r] - yb[r]) / (2.0 * h) - D[3 * r + c]) > 1e-7;
    }
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        double rr = 0.0;
        for (int k = 0; k < 3; k++) rr += R[3 * r + k] * R[3 * k + c];
        bad += fabs(D[3 * r + c] - D[3 * c + r]) > 1e-15 || fabs(rr - D[3 * r + c]) > 1e-14;
      }
    /* x^T D x in [0, |x|^2] for the axes and a diagonal */
    const double xs[4][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.6, -0.48, 0.64}};
    for (int q = 0; q < 4; q++) {
      double v = 0.0;
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) v += xs[q][r] * D[3 * r + c] * xs[q][c];
      bad += v < -1e-15 || v > 1.0 + 1e-15;
    }
  }
  CHECK_MSG(bad == 0, "%d violations", bad);
  CHECK_MSG(byRegion[0] > 100 && byRegion[1] > 100 && byRegion[2] > 100, "regions sampled %d %d %d", byRegion[0],
            byRegion[1], byRegion[2]);
  printf("    %d points away from the borders (polar %d, boundary %d, inside %d)\n", tried, byRegion[0], byRegion[1],
         byRegion[2]);
}
